"""`tcplab export-ns2 SCENARIO`: the ns-2 2.35 Tcl script for a scenario.

    tcplab export-ns2 scenarios/c-parallel-sack.toml > c.tcl
    tcplab export-ns2 SCENARIO --set flows.tcp.count=4 --out c.tcl
    ns c.tcl        # writes tcplab-counters.txt (and any traces) into the current directory

The script is the one `tcplab run --engine ns2` runs: the scenario resolved
(every default filled in), buffers translated to ns-2 queue limits (B waiting
packets = queue-limit B + 1), TCP payload = packet size - header.
"""

from __future__ import annotations

import argparse
import sys

from tcplab.outdir import command


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "export-ns2",
        help="write the ns-2 Tcl script for a scenario",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("scenario", help="scenario TOML file (see scenarios/)")
    p.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                   help="override a scenario value by dotted path, e.g. flows.tcp.variant=newreno (repeatable)")
    p.add_argument("--trace", default="", metavar="SERIES",
                   help="comma-separated traces the script should record: cwnd,inflight,seq,queue,drops")
    p.add_argument("--trace-interval", default=None, metavar="DURATION",
                   help="sample traces every DURATION instead of at every change")
    p.add_argument("--out", "-o", default=None, metavar="FILE",
                   help="write the script to FILE instead of standard output")
    p.set_defaults(func=main)


@command("out", inputs=("scenario",))
def main(args) -> int:
    from tcplab.backends.ns2 import export_tcl
    from tcplab.outdir import atomic_file, check_output_file
    from tcplab.scenario import load_scenario

    target = check_output_file(args.out) if args.out else None

    overrides = list(args.overrides)
    series = [s.strip() for s in args.trace.split(",") if s.strip()]
    if series:
        overrides.append((["trace", "series"], series))
    if args.trace_interval is not None:
        overrides.append((["trace", "interval"], args.trace_interval))
    scenario = load_scenario(args.scenario, overrides)
    script = _header(scenario) + export_tcl(scenario)
    if target is not None:
        with atomic_file(target, "w", option="--out") as fh:
            fh.write(script)
    else:
        sys.stdout.write(script)
    return 0


def _header(scenario: dict) -> str:
    """Tcl comment lines saying what wrote the script (tcplab.provenance.metadata)."""
    from tcplab.provenance import metadata

    m = metadata(engine="ns2", seed=scenario.get("seed"))
    lines = [f"tcplab {m['tcplab_version']}, build {m['build']}"
             + (f", git {m['git']}" if m["git"] else ""),
             f"build id {m['build_id']}",
             f"scenario {scenario.get('name') or '(unnamed)'}, seed {m['seed']}",
             f"command: {m['command']}",
             f"written {m['created']} on {m['host']}"]
    return "".join(f"# {' '.join(line.split())}\n" for line in lines)
