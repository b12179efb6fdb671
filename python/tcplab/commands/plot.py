"""`tcplab plot RUN_DIR --trace cwnd|queue|seq|rate`: a paper-style figure of a run's traces.

RUN_DIR is what `tcplab run SCENARIO --trace ... --out RUN_DIR` wrote
(summary.json and traces/*.parquet), from any engine.
"""

from __future__ import annotations

from pathlib import Path

from tcplab.errors import UserError
from tcplab.outdir import command
from tcplab.plots import KINDS


def register(sub) -> None:
    p = sub.add_parser("plot", help="draw a run's traces (cwnd, queue, seq, rate)", description=__doc__)
    p.add_argument("run_dir", metavar="RUN_DIR", help="a directory written by `tcplab run ... --out RUN_DIR`")
    p.add_argument("--trace", default="cwnd", choices=KINDS, help="what to draw (default: cwnd)")
    p.add_argument("--flows", default=None, metavar="IDS", help="comma-separated TCP flow ids (default: all TCP flows)")
    p.add_argument("--out", default=None, metavar="FILE",
                   help="output file, .png, .svg or .pdf (default: RUN_DIR/<trace>.png)")
    p.add_argument("--start", default=None, metavar="TIME", help="start of the time axis, e.g. 100s (default: 0)")
    p.add_argument("--end", default=None, metavar="TIME", help="end of the time axis (default: the run's duration)")
    p.add_argument("--interval", default="1s", metavar="DURATION",
                   help="averaging interval of the rate plot (default: 1s)")
    p.add_argument("--link", type=int, default=0, metavar="ID",
                   help="link id for the queue plot (default: 0, the forward bottleneck; see links.csv)")
    p.set_defaults(func=main)


@command("out", inputs=("run_dir",))
def main(args) -> int:
    from tcplab.outdir import check_output_file
    from tcplab.plots import plot
    from tcplab.traces import load_run
    from tcplab.units import parse_duration

    if args.out:  # before the traces are read and drawn
        if Path(args.out).suffix.lower() not in (".png", ".svg", ".pdf"):
            raise UserError(f"--out: {args.out}: expected a .png, .svg or .pdf file name")
        check_output_file(args.out)
    res = load_run(args.run_dir)
    flows = None
    if args.flows:
        try:
            flows = [int(f) for f in args.flows.split(",") if f.strip()]
        except ValueError:
            raise UserError(f"--flows: expected comma-separated flow ids such as 0,1, got {args.flows!r}") from None
    out = Path(args.out) if args.out else Path(args.run_dir) / f"{args.trace}.png"
    plot(res, args.trace, flows=flows, out=out,
         start_s=None if args.start is None else parse_duration(args.start, "--start"),
         end_s=None if args.end is None else parse_duration(args.end, "--end"),
         interval_s=parse_duration(args.interval, "--interval"), link=args.link)
    print(out)
    return 0
