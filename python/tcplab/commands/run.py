"""`tcplab run SCENARIO`: run one scenario and show what TCP got, and why."""

from __future__ import annotations

import itertools
import json

from rich.console import Console
from rich.table import Table

from tcplab.api import ENGINES, TRACE_SERIES, run
from rich.markup import escape

from tcplab.console import shown, stdout_console
from tcplab.labels import rate_text as _rate
from tcplab.outdir import command
from tcplab.progress import watching


def register(sub) -> None:
    p = sub.add_parser("run", help="run one scenario on an engine", description=__doc__)
    p.add_argument("scenario", help="scenario TOML file (see scenarios/)")
    p.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                   help="override a scenario value by dotted path, e.g. flows.tcp.variant=newreno (repeatable)")
    p.add_argument("--engine", default="packet", choices=ENGINES, help="engine to run (default: packet)")
    p.add_argument("--trace", default="", metavar="SERIES",
                   help=f"comma-separated traces to record: {','.join(TRACE_SERIES)}")
    p.add_argument("--trace-interval", default=None, metavar="DURATION",
                   help="sample traces every DURATION (e.g. 0.1s) instead of at every change")
    p.add_argument("--out", default=None, metavar="DIR",
                   help="write summary.json, flows.csv, links.csv and traces (Parquet + CSV) into DIR: a new or "
                   "empty folder, or one an earlier `tcplab run --out` wrote (replaced whole, atomically)")
    p.add_argument("--json", action="store_true", help="print the JSON summary instead of tables")
    p.add_argument("--force", action="store_true",
                   help="run even if the estimated work or memory is beyond the packet engine's limits")
    p.set_defaults(func=main)


@command("out", inputs=("scenario",))
def main(args) -> int:
    trace = [s for s in args.trace.split(",") if s.strip()] if args.trace else None
    if args.out:
        from tcplab.outdir import check_output_dir

        # refused before the run, not after it: the wrong kind, not writable, too little space
        check_output_dir(args.out, need_bytes=0 if args.force else _output_bytes(args, trace))
    with watching(args.engine, args.scenario):
        # with --out, the result is written as the run goes (traces streamed to disk)
        res = run(args.scenario, engine=args.engine, overrides=args.overrides, trace=trace,
                  trace_interval=args.trace_interval, force=args.force, out=args.out)
    if args.json:
        print(json.dumps(res.to_dict(), default=str))
    else:
        show(res)
        if args.out:
            Console(stderr=True).print(f"[dim]wrote {args.out}/summary.json, flows.csv, links.csv"
                                       + (", traces/" if res.traces else "") + "[/dim]")
    return 0


def _output_bytes(args, trace) -> int:
    """Roughly what `--out` will hold: the packet engine's estimate of the run's
    tables and traces in memory (Parquet and CSV on disk take about as much);
    0 when there is nothing to estimate with (another engine, an invalid scenario:
    the run itself says what is wrong)."""
    if args.engine != "packet":
        return 0
    try:
        from tcplab.api import override_list
        from tcplab.scenario import _core, load_scenario

        extra = [(["trace", "series"], trace)] if trace else []
        if args.trace_interval:
            extra.append((["trace", "interval"], args.trace_interval))
        sc = load_scenario(args.scenario, override_list(args.overrides) + extra)
        est = dict(_core().estimate_budget(json.dumps(sc)))
        if est["events"] > est["max_events"] or est["memory_bytes"] > est["max_memory_bytes"]:
            return 0  # the run refuses it first, naming the key that makes it too big
        return int(est["memory_bytes"])
    except Exception:  # noqa: BLE001 - an estimate only; the run reports the real error
        return 0


def show(res, console: Console | None = None) -> None:
    """A short readable summary: headline metrics, groups, and flows (first 20)."""
    c = console or stdout_console()
    m = res.metrics
    sc = res.scenario
    title = escape(shown(sc.get("name") or "scenario"))  # the full name is in the outputs
    c.print(f"[bold]{title}[/bold] — engine {res.engine} {res.engine_version}"
            + (f", {res.wall_s:.2f} s wall" if res.wall_s is not None else ""))
    head = Table(show_header=False, box=None, pad_edge=False)
    head.add_row("measured", f"{m['measured_s']:.1f} s (after {sc.get('warmup', '0s')} warm-up)")
    head.add_row("reference", f"{_rate(m['reference_bps'])} ({(sc.get('measure') or {}).get('reference', 'capacity')})")
    several = len(m.get("bottlenecks") or []) > 1
    if several:
        # flows on different links: no sum of them is set against one link
        n = len(m["bottlenecks"])
        head.add_row("TCP throughput", f"{_rate(m['tcp_throughput_bps'])} in all, over {n} bottlenecks (below)")
        head.add_row("TCP goodput", f"{_rate(m['tcp_goodput_bps'])} in all; each flow against its own "
                     "bottleneck and max-min fair share in the flows table")
    elif "normalized_throughput" in m:
        head.add_row("TCP throughput", f"{_rate(m['tcp_throughput_bps'])} = {m['normalized_throughput']:.4f} of reference")
        head.add_row("TCP goodput", f"{_rate(m['tcp_goodput_bps'])} = {m['normalized_goodput']:.4f} of reference")
    if "bottleneck_utilization" in m and not several:
        head.add_row("bottleneck", f"utilization {m['bottleneck_utilization']:.4f}, {m['bottleneck_drops']} drops"
                     + (f" (loss rate {m['bottleneck_loss_rate']:.2e})" if "bottleneck_loss_rate" in m else ""))
    if "linux" in m:  # the linux engine: how exactly the emulator kept time
        e = m["linux"]["emulator"]
        head.add_row("emulator", f"deliveries late by {e['late_mean_us']:.0f} µs on average, 99% within "
                     f"{e['late_p99_us_max']} µs, at most {e['late_max_us'] / 1e3:.2f} ms ({e['realtime']})")
        if "warning" in e:
            head.add_row("[yellow]warning[/yellow]", f"[yellow]{e['warning']}[/yellow]")
    if m.get("jain_index") == m.get("jain_index"):
        basis = m.get("jain_index_of", "TCP goodputs")
        head.add_row("fairness", f"Jain's index {m['jain_index']:.4f} over {basis}")
    for w in m.get("warnings") or []:
        head.add_row("[yellow]warning[/yellow]", f"[yellow]{escape(w)}[/yellow]")
    c.print(head)
    if several:
        t = Table(title="bottlenecks (each link direction that limits some TCP flow)")
        for col in ("link", "direction", "rate", "TCP flows", "TCP goodput", "of link", "utilization", "drops"):
            t.add_column(col, justify="left" if col in ("link", "direction") else "right")
        for b in m["bottlenecks"]:
            t.add_row(b["link"], b["direction"], _rate(b["rate_bps"]), str(b["flows"]), _rate(b["tcp_goodput_bps"]),
                      f"{b['normalized_goodput']:.4f}",
                      f"{b['utilization']:.4f}" if "utilization" in b else "–", str(b.get("drops", "–")))
        c.print(t)
    if len(m["groups"]) > 1:
        many = len(m["groups"]) > 20  # all of them are in --json and the outputs
        t = Table(title=f"groups ({len(m['groups'])})" + (" — first 20" if many else ""))
        for col in ("group", "flows", "goodput", "Jain"):
            t.add_column(col, justify="right" if col != "group" else "left")
        for g, d in itertools.islice(m["groups"].items(), 20):
            t.add_row(escape(shown(g, 40)), str(d["flows"]), _rate(d["goodput_bps"]), f"{d['jain_index']:.3f}")
        c.print(t)
    t = Table(title=f"flows ({len(res.flows)})" + (" — first 20" if len(res.flows) > 20 else ""))
    cols = [("id", "id"), ("group", "group"), ("kind", "kind"), ("variant", "variant"), ("goodput", "goodput_bps"),
            ("of bottleneck", "normalized_goodput")] + ([("fair share", "fair_share_bps")] if several else []) + [
            ("delivered", "delivered_packets"), ("rtx", "retransmissions"), ("timeouts", "timeouts"),
            ("fast rtx", "fast_retransmits"), ("drops", "drops")]
    cols = [(h, k) for h, k in cols if k in res.flows]
    for h, _ in cols:
        t.add_column(h, justify="left" if h in ("group", "kind", "variant") else "right")
    for _, row in res.flows.head(20).iterrows():
        cells = []
        for h, k in cols:
            v = row[k]
            if k in ("goodput_bps", "fair_share_bps") and v == v:
                cells.append(_rate(v))
            elif k == "normalized_goodput" and v == v:
                cells.append(f"{v:.4f}")
            elif v is None or (isinstance(v, float) and v != v):
                cells.append("–")
            else:
                cells.append(escape(shown(v, 40)))
        t.add_row(*cells)
    c.print(t)
