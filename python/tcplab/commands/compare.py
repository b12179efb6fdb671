"""`tcplab compare SCENARIO --engines packet,ns2,linux`: one scenario on several
engines, side by side: a table of the main metrics per engine and the
congestion windows overlaid (one panel per flow shown; per engine one colour,
line style and marker: packet wide solid, ns2 dashed, linux dotted).

Each engine's run is written to DIR/<engine>/ (as `tcplab run --out`), the
table to DIR/compare.json and the figure to DIR/cwnd.png, where DIR is --out or,
without it, a new directory compare-<scenario>-<time>/ in the current one
(printed at the end).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from tcplab.api import ENGINES, run
from tcplab.errors import UserError
from tcplab.outdir import atomic_file, atomic_path, check_folder_target, command

#: (label, metric key, format) rows of the table
ROWS = [
    ("normalized throughput", "normalized_throughput", "{:.4f}"),
    ("normalized goodput", "normalized_goodput", "{:.4f}"),
    ("TCP goodput (Mb/s)", "tcp_goodput_bps", "mbps"),
    ("bottleneck utilization", "bottleneck_utilization", "{:.4f}"),
    ("bottleneck drops", "bottleneck_drops", "{:d}"),
    ("loss rate", "bottleneck_loss_rate", "{:.2e}"),
    ("retransmissions", "tcp_retransmissions", "{:d}"),
    ("timeouts", "tcp_timeouts", "{:d}"),
    ("Jain's index", "jain_index", "{:.4f}"),
]


def register(sub) -> None:
    p = sub.add_parser("compare", help="one scenario on several engines: metrics table and overlaid cwnd",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("scenario", help="scenario TOML file")
    p.add_argument("--engines", default="packet,ns2", metavar="E1,E2,...",
                   help=f"engines to run, in order (some of {','.join(ENGINES)}; default packet,ns2)")
    p.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                   help="override a scenario value by dotted path (repeatable)")
    p.add_argument("--flows", default="0", metavar="IDS",
                   help="flows whose windows are plotted (comma-separated ids; default 0)")
    p.add_argument("--out", metavar="DIR", help="write each run, compare.json and cwnd.png into DIR "
                   "(default: a new compare-<scenario>-<time>/ here)")
    p.add_argument("--json", action="store_true", help="print the table as JSON")
    p.set_defaults(func=main)


def _fmt(v, fmt: str) -> str:
    if v is None or (isinstance(v, float) and v != v):
        return "–"
    if fmt == "mbps":
        return f"{v / 1e6:.3f}"
    if fmt == "{:d}":
        return str(int(v))
    return fmt.format(v)


def compare(scenario, engines: list[str], overrides=(), flows=(0,)) -> tuple[dict, "object"]:
    """Run `scenario` on each engine; returns ({engine: Result}, the cwnd Figure)."""
    bad = [e for e in engines if e not in ENGINES]
    if bad or not engines:
        raise UserError(f"--engines: expected some of {', '.join(ENGINES)}, got {','.join(engines) or 'nothing'}")
    from tcplab.progress import watching

    results = {}
    for e in engines:
        with watching(e, scenario):
            results[e] = run(scenario, engine=e, overrides=overrides, trace=["cwnd"])
    return results, cwnd_figure(results, flows)


def cwnd_figure(results: dict, flows=(0,)):
    """Congestion windows of the chosen flows, one panel per flow, engines overlaid."""
    from matplotlib.figure import Figure

    from tcplab.plots import ENGINE_STYLE
    from tcplab.traces import canonical

    flows = list(flows)
    fig = Figure(figsize=(7.5, 2.6 * len(flows) + 0.6), layout="constrained")
    axes = fig.subplots(len(flows), 1, sharex=True, squeeze=False)[:, 0]
    for k, (engine, res) in enumerate(results.items()):
        tcp = canonical(res.traces, res.links).get("tcp")
        if tcp is None:
            continue
        st = ENGINE_STYLE.get(engine, {"color": f"C{k + 3}", "ls": "-.", "lw": 1.0, "alpha": 1.0, "marker": "s"})
        for ax, fid in zip(axes, flows):
            f = tcp[tcp["flow"] == fid]
            ax.plot(f["t"], f["cwnd"], drawstyle="steps-post", color=st["color"], ls=st["ls"], lw=st["lw"],
                    alpha=st["alpha"], marker=st["marker"], ms=4, mfc="none",
                    markevery=max(1, len(f) // 12), zorder=2 + k, label=f"{engine} ({res.engine_version})")
    for ax, fid in zip(axes, flows):
        ax.set_ylabel(f"cwnd, flow {fid} (packets)")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, frameon=False, loc="upper right")
    axes[-1].set_xlabel("time (s)")
    from tcplab.console import shown

    name = shown(next(iter(results.values())).scenario.get("name") or "scenario")
    fig.suptitle(f"{name}: congestion windows on {', '.join(results)}", fontsize=9)
    return fig


def table(results: dict) -> dict:
    """{metric key: {engine: value}} for the ROWS."""
    return {key: {e: r.metrics.get(key) for e, r in results.items()} for _, key, _ in ROWS}


@command("out", inputs=("scenario",))
def main(args) -> int:
    from rich.console import Console
    from rich.table import Table

    from tcplab.console import stdout_console

    engines = [e.strip() for e in args.engines.split(",") if e.strip()]
    try:
        flows = [int(x) for x in args.flows.split(",") if x.strip()]
    except ValueError:
        raise UserError(f"--flows: expected comma-separated flow ids, got {args.flows!r}") from None
    if args.out:
        from tcplab.outdir import check_output_dir, check_output_file

        check_folder_target(args.out, what="a new or empty folder")
        for e in engines:  # refused before the runs, not after them
            check_output_dir(Path(args.out) / e, "--out")
        for name in ("compare.json", "cwnd.png"):
            if Path(args.out).is_dir():
                check_output_file(Path(args.out) / name, "--out")
    else:  # the new compare-<scenario>-<time>/ goes here: writable, with room, before the runs
        from tcplab.outdir import _check_writable

        _check_writable(Path.cwd(), "--out", "(not given: a new folder in the current one)")
    results, fig = compare(args.scenario, engines, args.overrides, flows)
    tab = table(results)
    out = Path(args.out) if args.out else _fresh_dir(args.scenario)
    for e, r in results.items():
        r.save(out / e)
    from tcplab.provenance import metadata

    meta = metadata(engine=",".join(results), seed=next(iter(results.values())).scenario.get("seed"),
                    engine_versions={e: r.engine_version for e, r in results.items()})
    with atomic_file(out / "compare.json", option="--out") as fh:
        fh.write(json.dumps({"meta": meta, "metrics": tab}, indent=2, default=float) + "\n")
    atomic_path(out / "cwnd.png", lambda tmp: fig.savefig(tmp, format="png", dpi=150, bbox_inches="tight"))
    wrote = f"wrote {out}/<engine>/, compare.json, cwnd.png"
    if args.json:
        print(json.dumps(tab, default=float))
        Console(stderr=True).print(f"[dim]{wrote}[/dim]")
        return 0
    c = stdout_console()
    t = Table(title=f"{args.scenario} on {', '.join(engines)}")
    t.add_column("metric")
    for e in engines:
        t.add_column(e, justify="right")
    for label, key, fmt in ROWS:
        t.add_row(label, *[_fmt(tab[key][e], fmt) for e in engines])
    t.add_row("wall time (s)", *[f"{results[e].wall_s:.2f}" for e in engines])
    c.print(t)
    Console(stderr=True).print(f"[dim]{wrote}[/dim]")
    return 0


def _fresh_dir(scenario: str) -> Path:
    """compare-<scenario stem>-<local time>/ in the current directory, never an existing one."""
    import time

    base = f"compare-{Path(scenario).stem}-{time.strftime('%Y%m%d-%H%M%S')}"
    out, n = Path(base), 1
    while out.exists():
        n += 1
        out = Path(f"{base}-{n}")
    out.mkdir(parents=True)
    return out
