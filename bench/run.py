"""Speed benchmark: the same scenarios in tcplab's packet engine and in ns-2 2.35,
alternating runs, on this machine, in one go. Prints per scenario the wall time
(median and spread) of each, their ratio, packets delivered and events per second.

    .venv/bin/python bench/run.py                 # all scenarios, 5 repetitions
    .venv/bin/python bench/run.py --reps 3 --quick  # shorter runs (CI's regression guard)
    .venv/bin/python bench/run.py --min-ratio 5   # exit 1 if tcplab is not 5x faster somewhere

tcplab is timed in-process around the engine call (the compiled engine with the
GIL released; Python start-up excluded, since a sweep pays it once); ns-2 is
timed as the whole `ns` process (its Tcl set-up is part of what a run costs
there). Ratios, not absolute times, are what to compare across machines.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "python"))

import tcplab  # noqa: E402
import tcplab.result  # noqa: E402
import tcplab.units  # noqa: E402
from tcplab.backends.ns2 import run_ns2  # noqa: E402
from tcplab.scenario import load_scenario  # noqa: E402

SCENARIOS = ["a_reno_1mbps", "b_sack10_10mbps", "c_reno100_100mbps"]


def time_packet(sc: dict):
    t0 = time.perf_counter()
    res = tcplab.run(sc)
    return time.perf_counter() - t0, res


def time_ns2(sc: dict):
    t0 = time.perf_counter()
    raw = run_ns2(sc)
    return time.perf_counter() - t0, raw


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--quick", action="store_true", help="a tenth of each scenario's duration")
    ap.add_argument("--only", default="", help="comma-separated scenario names")
    ap.add_argument("--min-ratio", type=float, default=None,
                    help="fail (exit 1) if any scenario's ns-2/tcplab ratio is below this")
    ap.add_argument("--json", default=None, metavar="FILE", help="also write the results as JSON")
    args = ap.parse_args(argv)
    names = [n for n in (args.only.split(",") if args.only else SCENARIOS) if n]
    rows = []
    for name in names:
        overrides = []
        if args.quick:
            base = load_scenario(HERE / "scenarios" / f"{name}.toml")
            dur = tcplab.units.parse_duration(base["duration"]) / 10
            overrides = [f"duration={dur}s", f"warmup={dur / 10}s"]
        sc = load_scenario(HERE / "scenarios" / f"{name}.toml", overrides)
        tp, tn = [], []
        for _ in range(args.reps):  # alternate, so load changes hit both alike
            w, res = time_packet(sc)
            tp.append(w)
            w, raw = time_ns2(sc)
            tn.append(w)
        delivered = int(res.flows["delivered_packets"].sum())
        row = {
            "scenario": name,
            "tcplab_s": statistics.median(tp), "tcplab_spread_s": max(tp) - min(tp),
            "ns2_s": statistics.median(tn), "ns2_spread_s": max(tn) - min(tn),
            "ratio": statistics.median(tn) / statistics.median(tp),
            "packets_delivered": delivered,
            "events": res.metrics.get("events"),
            "events_per_s": res.metrics.get("events", 0) / statistics.median(tp),
            "goodput_tcplab": res.metrics["normalized_goodput"],
            "goodput_ns2": tcplab.result.Result.from_raw(raw).metrics["normalized_goodput"],
        }
        rows.append(row)
        print(f"{name:20s} tcplab {row['tcplab_s']:7.3f} s (±{row['tcplab_spread_s']:.3f})  "
              f"ns-2 {row['ns2_s']:7.3f} s (±{row['ns2_spread_s']:.3f})  ratio {row['ratio']:6.1f}x  "
              f"{delivered:>9d} pkts  {row['events_per_s'] / 1e6:5.1f} M events/s  "
              f"goodput {row['goodput_tcplab']:.4f} vs {row['goodput_ns2']:.4f}", flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2) + "\n")
    if args.min_ratio is not None:
        slow = [r for r in rows if r["ratio"] < args.min_ratio]
        if slow:
            print(f"FAIL: ratio below {args.min_ratio} for {', '.join(r['scenario'] for r in slow)}")
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
