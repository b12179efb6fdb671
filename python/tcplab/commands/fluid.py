"""`tcplab fluid`: the hybrid AIMD model of paper C, exact and event-driven.

    tcplab fluid --n 3 --beta 0.5 --policy rate-proportional --events 1000000 --seed 1
    tcplab fluid --n 4 --policy rate-independent --sigma 0.125 --json
    tcplab fluid --n 2 --policy beatdown --trace path.csv --trace-events 20

N connections grow their rates linearly (η), the link is congested when the
rates sum to c, and the loss policy picks who is cut to β of its rate. Rates
are printed as fractions of c (second moments of c²); ± is a 95% confidence
half-width from batch means. --beta, --eta, --weights and --probs take one
number (every connection alike) or a comma list with one per connection.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from fractions import Fraction

from tcplab.errors import UserError
from tcplab.fluid import POLICIES, TAGS, WARMUP_DIVISOR
from tcplab.outdir import atomic_file, command
from tcplab.provenance import csv_metadata_line


def _numbers(text: str, name: str):
    """'0.5' → 0.5; '0.5,0.7' or '1/2,3/4' → a list."""
    parts = [p.strip() for p in text.split(",")]
    try:
        values = [float(Fraction(p)) for p in parts]
    except (ValueError, ZeroDivisionError):
        raise UserError(f"--{name}: expected a number or a comma list of numbers, got {text!r}") from None
    return values[0] if len(values) == 1 else values


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "fluid",
        help="the hybrid AIMD model of paper C (exact, event-driven)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--n", type=int, default=2, metavar="N", help="number of connections (default 2)")
    p.add_argument("--beta", default="0.5", metavar="B", help="multiplicative decrease β, or a list (default 0.5)")
    p.add_argument("--eta", default="1", metavar="η", help="additive increase η (rate/time), or a list (default 1)")
    p.add_argument("--policy", default="rate-proportional", choices=POLICIES, metavar="POLICY",
                   help=f"loss policy: {', '.join(POLICIES)} (default rate-proportional)")
    p.add_argument("--events", type=int, default=100_000, metavar="E",
                   help="congestion events measured (beatdown: tag times; default 100000)")
    p.add_argument("--seed", type=int, default=1, metavar="S", help="random seed (default 1)")
    p.add_argument("--warmup", type=int, default=None, metavar="W", help=f"events discarded first (default E/{WARMUP_DIVISOR})")
    p.add_argument("--batches", type=int, default=32, help="batches for the confidence intervals (default 32)")
    p.add_argument("--capacity", type=float, default=1.0, metavar="C", help="link capacity c (default 1)")
    p.add_argument("--weights", metavar="W1,W2,...",
                   help="rate-independent: selection probability ∝ weight, one per connection")
    p.add_argument("--sigma", type=float, metavar="σ",
                   help="rate-independent: Example 1's bias, the first N/2 connections share probability σ")
    p.add_argument("--probs", metavar="P[,P2,...]", help="subset: each connection cut with this probability")
    p.add_argument("--tag", default="largest", choices=TAGS,
                   help="beatdown: whom to tag next (default largest, as in Sec. IV.B)")
    p.add_argument("--trace", metavar="FILE.csv",
                   help="write the sample path (time, x0..) to a CSV file; its first line is a '#' "
                        "comment with what wrote it (read with pandas.read_csv(FILE, comment='#'))")
    p.add_argument("--trace-events", type=int, default=200, metavar="K",
                   help="events the trace covers (default 200)")
    p.add_argument("--histogram", metavar="FILE.csv",
                   help="write the distribution of rates just before congestion events to a CSV file")
    p.add_argument("--bins", type=int, default=50, help="histogram bins over [0, c] (default 50)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--force", action="store_true",
                   help="run even when the estimated memory or work is beyond this machine")
    p.set_defaults(func=run)


@command("trace", "histogram")
def run(args) -> int:
    from tcplab.fluid import fluid
    from tcplab.outdir import check_output_file

    if args.histogram and args.bins < 1:
        raise UserError(f"--bins: expected a whole number ≥ 1 for --histogram, got {args.bins}")
    for path, opt in ((args.trace, "--trace"), (args.histogram, "--histogram")):
        if path and not os.path.isdir(os.path.dirname(os.path.abspath(path))):
            raise UserError(f"{opt} {path}: no such folder {os.path.dirname(path)!r}")
        if path:
            check_output_file(path, opt)  # a folder, a dangling link, read-only, full: refused first
    result = fluid(
        n=args.n,
        beta=_numbers(args.beta, "beta"),
        policy=args.policy,
        events=args.events,
        seed=args.seed,
        eta=_numbers(args.eta, "eta"),
        capacity=args.capacity,
        weights=None if args.weights is None else _numbers(args.weights, "weights"),
        sigma=args.sigma,
        probs=None if args.probs is None else _numbers(args.probs, "probs"),
        tag=args.tag,
        warmup=args.warmup,
        batches=args.batches,
        trace=args.trace_events if args.trace else 0,
        bins=args.bins if args.histogram else 0,
        force=args.force,
    )
    for key, path in (("rates", args.trace), ("rates_at_congestion", args.histogram)):
        if path:
            opt = "--trace" if key == "rates" else "--histogram"
            # whole or not at all: a full disk leaves the old file (or none), never a cut CSV
            with atomic_file(check_output_file(path, opt), "w", option=opt, newline="") as f:
                f.write(csv_metadata_line(result.engine, result.engine_version, args.seed))
                result.traces[key].to_csv(f, index=False)
            print(f"wrote {path} ({len(result.traces[key])} rows)", file=sys.stderr)
    if args.json:
        print(json.dumps(result.to_dict()))
    else:
        _print_table(result)
    return 0


def _print_table(result) -> None:
    from rich.table import Table

    from tcplab.console import stdout_console

    s, m = result.scenario, result.metrics
    console = stdout_console()
    beta = s["beta"] if not isinstance(s["beta"], list) else "per connection"
    head = (
        f"[bold]fluid[/bold] (hybrid AIMD, paper C)  N = {s['n']}, β = {beta}, "
        f"policy = {s['policy']}, {m['events']} events, seed {s['seed']}"
    )
    console.print(head)
    line = f"mean aggregate E[X]/c = [bold]{m['mean_aggregate']:.5f}[/bold] ± {m['mean_aggregate_ci95']:.5f}"
    if m["prediction"] is not None:
        err = (m["mean_aggregate"] - m["prediction"]) / m["prediction"]
        line += f"   {m['prediction_source']}: {m['prediction']:.5f} ({err:+.3%})"
    console.print(line)
    console.print(f"Jain's fairness index of the means: {m['jain_index']:.4f}")
    table = Table(show_lines=False)
    from rich.markup import escape

    for col, just in [("conn", "right"), ("η", "right"), ("β", "right"), ("E[x]/c", "right"),
                      ("±95%", "right"), ("E[x²]/c²", "right"), ("±95%", "right"),
                      ("E⁰[x]/c at events", "right"), ("cut share", "right")]:
        table.add_column(escape(col), justify=just)
    for r in result.flows.itertuples():
        table.add_row(
            str(r.id), f"{r.eta:g}", f"{r.beta:g}", f"{r.mean:.5f}", f"{r.mean_ci95:.5f}",
            f"{r.second_moment:.5f}", f"{r.second_moment_ci95:.5f}", f"{r.mean_at_congestion:.5f}",
            f"{r.cut_share:.4f}",
        )
    console.print(table)
