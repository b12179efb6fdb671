"""Running a sweep: plan the points, skip those stored, run the rest, store in batches."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path

from tcplab.errors import UserError
from tcplab.provenance import build, metadata
from tcplab.scenario import apply_overrides
from tcplab.sweep.engines import DEFAULT_METRIC, default_seed, engine_version, prepare
from tcplab.sweep.keys import point_key
from tcplab.sweep.spec import Point, Sweep, derive_seed
from tcplab.sweep.store import Store

#: Columns every row has; an axis with one of these paths is stored as "axis.<path>".
RESERVED = ("key", "replication", "seed", "engine", "engine_version", "build", "status", "error", "wall_s",
            "scenario")
#: A batch is also written when this many seconds have passed since the last one,
#: so that a slow engine loses little to a kill.
FLUSH_S = 10.0
#: seeds are u64 end to end: the engines' type and the store's column
SEED_LIMIT = 1 << 64


class SweepInterrupted(KeyboardInterrupt):
    """A sweep stopped by Ctrl-C or SIGTERM: the points finished are stored (a
    re-run resumes from them), `outcome` says how far it got. A KeyboardInterrupt,
    so that a caller that does not look (a report built on the sweep) stops too,
    instead of going on with part of the points."""

    def __init__(self, outcome: "Outcome", cause: BaseException):
        super().__init__(f"sweep {outcome.sweep.name} interrupted after {outcome.computed} point(s)")
        self.outcome = outcome
        self.signum = getattr(cause, "signum", 2)


def axis_column(path: str) -> str:
    return f"axis.{path}" if path in RESERVED else path


@dataclass
class Planned:
    point: Point
    seed: int | None
    key: str
    scenario: dict | None  # resolved; None when the point is invalid
    error: str | None = None

    def row(self, engine: str, version: str) -> dict:
        """The row's identity part: axes, replication, seed, engine, its version, the build."""
        row = {"key": self.key}
        row.update({axis_column(p): v for p, v in self.point.axes.items()})
        row.update({"replication": self.point.replication, "seed": self.seed, "engine": engine,
                    "engine_version": version, "build": build()})
        return row


def plan(sweep: Sweep) -> list[Planned]:
    """Resolve every point and compute its key; invalid points carry their error."""
    engine = sweep.engine
    version = engine_version(engine)
    base_seed: int | None = None
    out = []
    for pt in sweep.points():
        sc = apply_overrides(sweep.base, pt.overrides)
        seed = sc.get("seed")
        try:
            if seed is None:
                if base_seed is None:
                    base_seed = default_seed(engine, sweep.base)
                seed = base_seed
            if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < SEED_LIMIT:
                raise UserError(f"seed: expected a whole number 0 ≤ seed < 2^64, got {seed!r}")
            seed = derive_seed(seed, pt.replication)
            sc["seed"] = seed
            resolved = prepare(engine, sc)
        except UserError as exc:
            out.append(Planned(pt, seed if isinstance(seed, int) else None,
                               point_key({"invalid": sc}, engine, version), None, str(exc)))
            continue
        out.append(Planned(pt, seed, point_key(resolved, engine, version), resolved))
    return out


@dataclass
class Outcome:
    sweep: Sweep
    out_dir: Path
    planned: list[Planned]
    stored_before: int = 0  # keys of this sweep already in the store
    computed: int = 0  # points run now
    failed_now: int = 0
    interrupted: bool = False
    wall_s: float = 0.0
    failures: dict = field(default_factory=dict)  # error → count, over the whole sweep

    @property
    def unique_keys(self) -> int:
        return len({p.key for p in self.planned})


def metric_of(sweep: Sweep) -> str:
    return sweep.metric or DEFAULT_METRIC[sweep.engine]


def sweep_meta(sweep: Sweep) -> dict:
    """sweep.json: what was swept, and (`tcplab.provenance.metadata`) by which build, when, where.
    The seed is the base seed of the sweep (each point's is in its row)."""
    base_seed = sweep.base.get("seed")
    return metadata(
        engine=sweep.engine,
        engine_version=engine_version(sweep.engine),
        seed=base_seed if isinstance(base_seed, int) else None,
        name=sweep.name,
        description=sweep.description,
        source=str(sweep.source) if sweep.source else None,
        metric=metric_of(sweep),
        replications=sweep.replications,
        axes=[{"name": a.name, "columns": [axis_column(p) for p in a.paths], "log": a.log,
                  "values": [list(v) for v in a.values]} for a in sweep.axes],
        sweep=sweep.raw,
    )


def run_sweep(
    sweep: Sweep,
    out_dir: str | Path,
    *,
    executor: str = "local",
    jobs: int | None = None,
    pool: str | None = None,
    address: str | None = None,
    batch: int | None = None,
    retry_failed: bool = False,
    progress: bool = True,
    console=None,
    planned: list[Planned] | None = None,
    shared=None,
    bar=None,
) -> Outcome:
    """Run the points of `sweep` not yet stored under `out_dir`; return what happened.
    Ctrl-C or SIGTERM (`tcplab.interrupts`) stores the points finished and raises
    `SweepInterrupted` (a KeyboardInterrupt) with the outcome so far.

    `shared`: a `tcplab.sweep.executors.SharedPool` to run the points on (local
    executor; other sweeps may be using it at the same time), instead of a pool
    of the sweep's own. `bar`: a running rich Progress to draw the sweep's bar
    on (as a task, removed when the sweep ends) instead of one of its own."""
    t0 = time.perf_counter()
    planned = planned if planned is not None else plan(sweep)
    store = Store(out_dir)
    with store.lock(bar.console if bar is not None else console if progress else None):  # one writer at a time
        return _run_locked(sweep, store, planned, t0, executor, jobs, pool, address, batch, retry_failed,
                           progress, console, shared, bar)


def _run_locked(sweep, store, planned, t0, executor, jobs, pool, address, batch, retry_failed, progress,
                console, shared=None, shared_bar=None) -> Outcome:
    from tcplab.sweep import executors

    out_dir = store.root
    version = engine_version(sweep.engine)
    stored = store.statuses()
    outcome = Outcome(sweep, Path(out_dir), planned)
    outcome.stored_before = len({p.key for p in planned if p.key in stored})

    todo: dict[str, Planned] = {}
    for p in planned:
        st = stored.get(p.key)
        if (st is None or (retry_failed and st == "failed")) and p.key not in todo:
            todo[p.key] = p
    invalid = [p for p in todo.values() if p.scenario is None]
    runnable = [p for p in todo.values() if p.scenario is not None]
    batch = batch or sweep.batch

    pending: list[dict] = []
    last_flush = time.monotonic()

    meta = sweep_meta(sweep)

    def flush():
        nonlocal last_flush
        store.write_batch(pending, meta)
        pending.clear()
        last_flush = time.monotonic()

    def finish(p: Planned, result: dict):
        row = p.row(sweep.engine, version)
        row.update({"status": result["status"], "error": result["error"], "wall_s": result["wall_s"]})
        for k, v in result["metrics"].items():
            row[k if k not in row else f"metric.{k}"] = v
        row["scenario"] = json.dumps(p.scenario if p.scenario is not None else None, sort_keys=True)
        pending.append(row)
        outcome.computed += 1
        if result["status"] != "ok":
            outcome.failed_now += 1
        if len(pending) >= batch or time.monotonic() - last_flush >= FLUSH_S:
            flush()

    tasks = ({"key": p.key, "engine": sweep.engine, "scenario": p.scenario} for p in runnable)
    if sweep.engine == "linux":
        # real time: two runs at once would share the CPUs (and the timing)
        jobs, shared = 1, None
    if executor == "local":
        results = executors.run_local(tasks, jobs, pool or executors.DEFAULT_POOL, shared=shared)
    elif executor == "ray":
        results = executors.run_ray(tasks, address, jobs)
    else:
        raise UserError(f"--executor: expected local or ray, got {executor!r}")

    store.write_meta(meta)
    store.clean_stale()
    bar = shared_bar if shared_bar is not None else _progress(console) if progress else None
    task_id = None
    try:
        if bar is not None:
            if shared_bar is None:
                bar.start()
            if outcome.stored_before and (shared_bar is None or todo):
                bar.console.print(f"[dim]{outcome.stored_before} of {outcome.unique_keys} points already stored in "
                                  f"{store.parts}; computing the other {len(todo)}[/dim]")
            from rich.markup import escape

            from tcplab.console import shown

            if shared_bar is None:
                task_id = bar.add_task(escape(shown(sweep.name, 60)), total=len(todo), failed=0)
            elif todo:
                from tcplab.progress import _fields

                fields = _fields(bar)  # the caller's columns' text fields: the counts go there
                task_id = bar.add_task(escape(shown(sweep.name, 60)), total=len(todo), **fields)

        def advance():
            bar.update(task_id, advance=1, failed=outcome.failed_now)
            if shared_bar is not None:
                bar.update(task_id, **_status_fields(bar, task_id, outcome.failed_now, fields))

        for p in invalid:
            finish(p, {"status": "failed", "error": p.error, "wall_s": 0.0, "metrics": {}})
            if task_id is not None:
                advance()
        for result in results:
            finish(todo[result["key"]], result)
            if task_id is not None:
                advance()
        flush()
    except KeyboardInterrupt as exc:
        outcome.interrupted = True
        flush()  # what is complete is kept
        outcome.wall_s = time.perf_counter() - t0
        raise SweepInterrupted(outcome, exc) from None
    finally:
        results.close()
        if shared_bar is not None:
            if task_id is not None:
                bar.remove_task(task_id)
        elif bar is not None:
            bar.stop()
    outcome.wall_s = time.perf_counter() - t0
    if outcome.failed_now or any(stored.get(p.key) == "failed" for p in planned):
        outcome.failures = failures(store, planned)
    # else none failed, now or before: the store is not read back whole for an empty count
    # (reproduce reads it once more for its frame; 29 sweeps read twice cost ~5 s of a --full run)
    return outcome


def failures(store: Store, planned: list[Planned]) -> dict[str, int]:
    """error → number of this sweep's points failing with it (as stored)."""
    keys = {p.key for p in planned}
    df = store.frame()
    if df.empty:
        return {}
    bad = df[(df["status"] != "ok") & df["key"].isin(keys)]
    return {str(k): int(v) for k, v in bad["error"].value_counts().items()}


def _status_fields(bar, task_id, failed: int, fields) -> dict:
    """What a sweep's bar on a shared Progress (`run_sweep(bar=...)`) shows in that
    Progress's text `fields` (e.g. reproduce's `claim`): the points failed and the
    rate, which its own bar has columns for."""
    task = next((t for t in bar.tasks if t.id == task_id), None)
    speed = task.speed if task is not None else None
    text = f"{failed} failed · " + (f"{speed:.1f} pt/s" if speed else "– pt/s")
    return {name: text for name in fields}


def _progress(console):
    from rich.progress import (BarColumn, MofNCompleteColumn, Progress, ProgressColumn, TextColumn,
                               TimeElapsedColumn, TimeRemainingColumn)
    from rich.text import Text

    class Rate(ProgressColumn):
        def render(self, task):
            return Text(f"{task.speed:.1f} pt/s" if task.speed else "– pt/s", style="cyan")

    return Progress(
        TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
        TextColumn("[red]{task.fields[failed]} failed"), Rate(), TimeElapsedColumn(),
        TextColumn("ETA"), TimeRemainingColumn(), console=console, transient=False,
    )
