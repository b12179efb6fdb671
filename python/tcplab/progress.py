"""Progress of one long run (ns-2: simulated time; linux: real time) against its duration.

Engines call `report(done_s, total_s)` while a run goes on; it does nothing
unless a caller asked to see progress with `showing(...)` (the CLI does, on a
terminal). Sweeps and reproductions draw their own bars (points, claims); a run
inside a reproduction adds its line to the reproduction's bar.

    with showing("ns2 c-parallel-sack", unit="simulated s"):
        res = tcplab.run(sc, engine="ns2")
"""

from __future__ import annotations

import threading
from contextlib import contextmanager

_local = threading.local()


def report(done_s: float, total_s: float) -> None:
    """The run has reached `done_s` of `total_s` seconds (simulated or real)."""
    cb = getattr(_local, "callback", None)
    if cb is not None:
        cb(done_s, total_s)


def wanted() -> bool:
    """Whether someone is watching (engines may skip the cost of measuring progress)."""
    return getattr(_local, "callback", None) is not None


@contextmanager
def showing(label: str, unit: str = "s", progress=None, console=None):
    """Show `report`'s calls in this thread as a bar `label 12.0/60.0 <unit> ━━━━`: on
    `progress` (a running rich Progress) if given, else on a bar of its own on stderr —
    drawn only when stderr is a terminal, and removed when the run ends."""
    from rich.console import Console
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    own = None
    if progress is None:
        console = console or Console(stderr=True)
        if not console.is_terminal:
            yield
            return
        own = progress = Progress(TextColumn("[bold]{task.description}"), BarColumn(), TimeElapsedColumn(),
                                  console=console, transient=True)
        own.start()
    task = progress.add_task(label, total=None, **_fields(progress))

    def callback(done_s: float, total_s: float) -> None:
        progress.update(task, completed=min(done_s, total_s), total=total_s,
                        description=f"{label} {done_s:.1f}/{total_s:g} {unit}", refresh=True)

    before = getattr(_local, "callback", None)
    _local.callback = callback
    try:
        yield
    finally:
        _local.callback = before
        progress.remove_task(task)
        if own is not None:
            own.stop()


def watching(engine: str, scenario, progress=None):
    """`showing` for a run of `engine`: a bar for ns2 (simulated seconds) and linux (real
    seconds) against the duration; nothing for the packet engine, which is fast.
    `scenario` names the bar (a path's stem, or a scenario dict's name)."""
    from contextlib import nullcontext
    from pathlib import Path

    if engine not in ("ns2", "linux"):
        return nullcontext()
    name = Path(scenario).stem if isinstance(scenario, (str, Path)) else (scenario.get("name") or "scenario")
    from rich.markup import escape

    from tcplab.console import shown

    return showing(f"{engine} {escape(shown(name, 60))}", "simulated s" if engine == "ns2" else "s (real time)", progress)


def _fields(progress) -> dict:
    """Empty values for the other fields a shared Progress's columns read (e.g. `claim`)."""
    import re

    names = set()
    for col in progress.columns:
        fmt = getattr(col, "text_format", "")
        names |= set(re.findall(r"task\.fields\[(\w+)\]", fmt if isinstance(fmt, str) else ""))
    return {n: "" for n in names}
