"""`tcplab sweep SWEEP.toml`: run every point of a sweep, store one row per point.

Points already in the store (same resolved scenario, engine and engine version)
are not run again, so an interrupted sweep resumes where it stopped. Results go
to DIR/store/*.parquet (query them with `tcplab results DIR`), the default plot
to DIR/plot.png.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.console import Console

from tcplab.console import stdout_console
from tcplab.outdir import command
from tcplab.sweep.executors import POOLS
from tcplab.sweep.spec import ENGINES


def register(sub) -> None:
    p = sub.add_parser("sweep", help="run a parameter sweep (resumable; Parquet results)", description=__doc__,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("sweep", metavar="SWEEP.toml", help="sweep file (see sweeps/)")
    p.add_argument("--out", metavar="DIR", help="sweep directory (default: runs/sweeps/<name>[-<engine>])")
    p.add_argument("--engine", choices=ENGINES, help="run the sweep on this engine instead of the file's")
    p.add_argument("--executor", choices=("local", "ray"), default="local", help="where to run (default: local)")
    p.add_argument("--address", metavar="auto|HOST:PORT",
                   help="Ray cluster to join (--executor ray); without it a local Ray instance is started")
    p.add_argument("--jobs", type=int, metavar="N", help="workers (default: every core)")
    p.add_argument("--pool", choices=POOLS, default=None,
                   help="local workers: threads (default; the engine releases the GIL) or processes "
                   "(faster for many points of a few ms)")
    p.add_argument("--batch", type=int, metavar="N", help="points per results file (default: the file's, or 16)")
    p.add_argument("--retry-failed", action="store_true", help="run failed points again")
    p.add_argument("--dry-run", action="store_true", help="list the points and whether they are stored; run nothing")
    p.add_argument("--no-plot", action="store_true", help="do not draw DIR/plot.png")
    p.set_defaults(func=main)


def default_out(sweep, engine_given: bool) -> Path:
    return Path("runs") / "sweeps" / (f"{sweep.name}-{sweep.engine}" if engine_given else sweep.name)


def check_sweep_dir(out: Path, option: str = "--out") -> None:
    """Refuse (UserError), before any point runs, a sweep directory that cannot be one:
    a file or a dangling link where the folder goes, a `store` that is not a folder,
    a place that is not writable or has no free space."""
    from tcplab.outdir import OutputError, _check_writable

    given = str(out)
    if out.is_symlink() and not out.exists():
        raise OutputError(f"{option} {given}: is a symbolic link to {str(out.readlink())!r}, which does not exist; "
                          "give a folder")
    if out.exists() and not out.is_dir():
        raise OutputError(f"{option} {given}: exists and is not a folder; give a new folder or an earlier "
                          "sweep's (tcplab never replaces a file it did not write)")
    ancestor = out.absolute()
    while not ancestor.exists() and not ancestor.is_symlink():
        ancestor = ancestor.parent
    if not ancestor.is_dir():
        raise OutputError(f"{option} {given}: {ancestor} is a file, not a folder")
    for inner in ("store", "sweep.json"):
        q = out / inner
        bad = (q.exists() or q.is_symlink()) and (q.is_dir() != (inner == "store") or q.is_symlink())
        if bad:
            kind = "a folder" if inner == "store" else "a file"
            raise OutputError(f"{option} {given}: {q} is not {kind} as a sweep directory holds; "
                              "give another folder or move it away")
    _check_writable(out if out.is_dir() else ancestor, option, given)


@command("out", resumable=True)
def main(args) -> int:
    from tcplab.errors import UserError
    from tcplab.sweep import load_sweep, plan, run_sweep
    from tcplab.sweep.report import plot, print_summary
    from tcplab.sweep.runner import SweepInterrupted

    if args.jobs is not None and args.jobs < 1:
        raise UserError(f"--jobs: expected a whole number ≥ 1, got {args.jobs}")
    if args.batch is not None and args.batch < 1:
        raise UserError(f"--batch: expected a whole number ≥ 1, got {args.batch}")
    if args.address and args.executor != "ray":
        raise UserError("--address: only with --executor ray")
    if args.pool and args.executor != "local":
        raise UserError("--pool: only with --executor local")
    sweep = load_sweep(args.sweep, args.engine)
    out = Path(args.out) if args.out else default_out(sweep, bool(args.engine))
    console = Console(stderr=True)
    planned = plan(sweep)
    if args.dry_run:
        return _dry_run(sweep, planned, out)
    if planned and all(p.error for p in planned):
        # nothing would run: a failure, not a sweep of failed rows that exits 0
        raise UserError(f"{args.sweep}: every one of the {len(planned)} points is invalid, nothing to run; "
                        f"the first: {planned[0].error}")
    check_sweep_dir(out)
    try:
        outcome = run_sweep(sweep, out, executor=args.executor, jobs=args.jobs, pool=args.pool,
                            address=args.address, batch=args.batch, retry_failed=args.retry_failed,
                            console=console, planned=planned)
    except SweepInterrupted as exc:
        from tcplab.interrupts import exit_code, signal_name

        print_summary(exc.outcome, stdout_console())
        console.print(f"[yellow]interrupted ({signal_name(exc)})[/yellow]; [dim]results so far: tcplab results "
                      f"{out}[/dim]")
        return exit_code(exc)
    print_summary(outcome, stdout_console())
    if not args.no_plot and not outcome.interrupted:
        png = plot(outcome)
        if png:
            console.print(f"[dim]plot: {png}[/dim]")
    console.print(f"[dim]results: tcplab results {out}[/dim]")
    if outcome.interrupted:
        return 130
    keys = {p.key for p in planned}
    if keys and sum(outcome.failures.values()) >= len(keys):
        console.print(f"[red]every point of the sweep failed[/red]")
        return 1
    return 0


def _dry_run(sweep, planned, out: Path) -> int:
    from rich.table import Table

    from tcplab.sweep.runner import axis_column
    from tcplab.sweep.store import Store

    stored = Store(out, readonly=True).statuses()
    cols = [axis_column(p) for p in sweep.columns]
    t = Table(title=f"{sweep.name}: {len(planned)} points on {sweep.engine} → {out}")
    for c in ["#", *cols, "rep", "seed", "key", "state"]:
        t.add_column(c, justify="left" if c in ("key", "state") else "right", overflow="fold",
                     min_width=16 if c == "key" else None)
    seen: set[str] = set()
    errors: dict[str, list[int]] = {}
    for p in planned:
        state = stored.get(p.key, "to run")
        if p.error:
            errors.setdefault(p.error, []).append(p.point.index)
            state = "invalid (below)" if state == "to run" else state
        if p.key in seen:
            state = "same key as an earlier point"
        seen.add(p.key)
        t.add_row(str(p.point.index), *[str(p.point.axes[c]) for c in sweep.columns], str(p.point.replication),
                  str(p.seed), p.key, state)
    stdout_console().print(t)
    for err, idx in errors.items():
        stdout_console().print(f"[red]invalid[/red] points {_ranges(idx)}: {err}")
    todo = len({p.key for p in planned} - set(stored))
    stdout_console().print(f"{len(planned)} points, {len({p.key for p in planned})} distinct, "
                    f"{sum(1 for p in planned if p.error)} invalid, {todo} to run")
    return 2 if planned and all(p.error for p in planned) else 0


def _ranges(idx: list[int]) -> str:
    """[0, 1, 2, 5] → "0-2, 5"."""
    out, start = [], None
    for i, v in enumerate(idx):
        if start is None:
            start = v
        if i + 1 == len(idx) or idx[i + 1] != v + 1:
            out.append(str(start) if start == v else f"{start}-{v}")
            start = None
    return ", ".join(out)
