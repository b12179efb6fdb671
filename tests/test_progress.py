"""Long ns2 and linux runs show their progress against the duration (issue 17)."""

from __future__ import annotations

import io
import json
import shutil

import pytest

import tcplab
from tcplab import progress


def test_showing_draws_reports_on_a_terminal_and_nothing_elsewhere():
    from rich.console import Console

    buf = io.StringIO()
    term = Console(file=buf, force_terminal=True, width=100)
    with progress.showing("ns2 demo", "simulated s", console=term):
        assert progress.wanted()
        progress.report(30.0, 60.0)
    assert not progress.wanted()
    assert "ns2 demo 30.0/60 simulated s" in buf.getvalue()

    piped = io.StringIO()
    with progress.showing("ns2 demo", console=Console(file=piped, force_terminal=False)):
        assert not progress.wanted()  # nobody watching: engines skip the measuring
        progress.report(30.0, 60.0)
    assert piped.getvalue() == ""


def test_a_reproduction_bar_takes_the_runs_line():
    from rich.progress import Progress, TextColumn

    from rich.console import Console

    bar = Progress(TextColumn("{task.description}"), TextColumn("{task.fields[claim]}"),
                   console=Console(file=io.StringIO(), force_terminal=True))
    with bar:
        with progress.watching("ns2", {"name": "c"}, bar):
            progress.report(1.0, 2.0)
            (task,) = bar.tasks
            assert task.description == "ns2 c 1.0/2 simulated s" and task.completed == 1.0
        assert not bar.tasks  # removed when the run ends
    with progress.watching("packet", "x.toml", bar):
        assert not progress.wanted()  # the packet engine is fast: no bar


@pytest.mark.ns2
@pytest.mark.skipif(not shutil.which("ns"), reason="ns-2 not installed")
def test_a_watched_ns2_run_reports_simulated_time_and_gives_the_same_result():
    sc, ov = "scenarios/c-parallel-sack.toml", ["duration=20s", "warmup=5s", "flows.sack.count=2"]
    plain = tcplab.run(sc, engine="ns2", overrides=ov, trace=["cwnd"])
    seen = []
    progress._local.callback = lambda done, total: seen.append((done, total))
    try:
        watched = tcplab.run(sc, engine="ns2", overrides=ov, trace=["cwnd"])
    finally:
        progress._local.callback = None
    assert len(seen) >= 100 and all(total == 20.0 for _, total in seen)
    assert [d for d, _ in seen] == sorted(d for d, _ in seen) and seen[-1][0] > 19.8
    assert json.dumps(plain.metrics, sort_keys=True, default=str) == json.dumps(watched.metrics, sort_keys=True,
                                                                                  default=str)
    assert plain.traces["cwnd"].equals(watched.traces["cwnd"])
