"""`tcplab reproduce PAPER|all`: every claim of a paper, with a figure and a verdict.

Papers: adaptivity (A), alpha-beta (B), parallel-aimd (C), triple-slowstart (D),
by name or letter. Writes OUT/<paper>/index.html (the report),
OUT/<paper>/claims.json (a list of {id, verdict, measured, paper, note, ...}),
the figures as PNG and SVG, the data as Parquet, and OUT/index.html. Runs are
cached in the per-user cache directory (--cache, else $TCPLAB_CACHE, else
$XDG_CACHE_HOME/tcplab, else ~/.cache/tcplab), shared by every OUT, so a
second run computes nothing again; deleting the cache is always safe.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from tcplab.outdir import check_folder_target, command


def register(sub) -> None:
    p = sub.add_parser("reproduce", help="reproduce the papers' claims: figures, verdicts, HTML report",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("paper", metavar="PAPER|all",
                   help="adaptivity (A), alpha-beta (B), parallel-aimd (C), triple-slowstart (D), or all")
    p.add_argument("--claims", metavar="ID,...", help="only these claims, e.g. C1,D2")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--quick", dest="mode", action="store_const", const="quick",
                      help="shorter runs, coarser axes (default; C+D in a few minutes on 2 cores)")
    mode.add_argument("--full", dest="mode", action="store_const", const="full",
                      help="the papers' durations and axis resolution")
    mode.add_argument("--tiny", dest="mode", action="store_const", const="tiny", help=argparse.SUPPRESS)
    p.set_defaults(mode="quick")
    p.add_argument("--engine", choices=("packet", "ns2", "linux"), default="packet",
                   help="simulator for the packet-level claims (default: packet); linux runs only the "
                        "claims measured on real TCP (C11), in real time, as root")
    p.add_argument("--profile", choices=("ns2-2.35", "ns2-2001"), default="ns2-2.35",
                   help="TCP defaults of every TCP group that names none: ns-2 2.35's (default) or the "
                        "paper era's (ns-2 before May 2001); the era verdicts go to OUT/PAPER/ns2-2001/ "
                        "and each paper's page shows both profiles side by side")
    p.add_argument("--out", metavar="DIR", default="reports", help="report directory (default: reports/)")
    p.add_argument("--jobs", type=int, metavar="N", help="workers for the runs of all claims at once (default: every "
                   "core); 1 runs the claims one after another")
    p.add_argument("--cache", metavar="DIR", help="cache directory for runs and sweeps (default: $TCPLAB_CACHE, "
                   "else $XDG_CACHE_HOME/tcplab, else ~/.cache/tcplab)")
    p.set_defaults(func=main)


@command("out", "cache", resumable=True)
def main(args) -> int:
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from tcplab.errors import UserError
    from tcplab.reproduce import LETTERS, PAPERS, check_claim_ids, paper_slug, reproduce_all

    if args.jobs is not None and args.jobs < 1:
        raise UserError(f"--jobs: expected a whole number ≥ 1, got {args.jobs}")
    from tcplab.cache import checked_cache_dir

    check_folder_target(args.out, what="a folder for the reports")  # clear errors before anything is written
    checked_cache_dir(args.cache)
    claims = [c.strip().upper() for c in args.claims.split(",") if c.strip()] if args.claims else None
    if claims:
        check_claim_ids(claims)
    if args.paper == "all":
        papers = list(PAPERS)
        if claims:  # only the papers the claims belong to
            papers = [s for s in papers if any(LETTERS.get(c[0]) == s for c in claims)]
    else:
        args.paper = paper_slug(args.paper)  # a letter names its paper; UserError if unknown
        papers = [args.paper]
        if claims:
            mine = [c for c in claims if LETTERS.get(c[0]) == args.paper]
            if not mine:
                raise UserError(f"--claims: none of {', '.join(claims)} belongs to {args.paper}")
    console = Console(stderr=True)
    t0 = time.perf_counter()
    progress = Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                        TextColumn("{task.fields[claim]}"), TimeElapsedColumn(), console=console)
    with progress:
        # every paper's claims at once, their runs on --jobs workers (one after another with --jobs 1)
        done = reproduce_all(papers, claims, args.mode, args.engine, args.out, args.jobs, progress,
                             args.cache, args.profile)
    wall = time.perf_counter() - t0
    for slug, verdicts in done.items():
        print(f"\n{slug} ({args.out}/{slug}/index.html)")
        for v in verdicts:
            print(f"  {v.id:4} {v.verdict:15} {v.measured}")
    print(f"\n{sum(len(v) for v in done.values())} claims in {wall:.0f} s; index: {args.out}/index.html",
          file=sys.stderr)
    return 0
