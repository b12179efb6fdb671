"""The `tcplab` command line.

Each subcommand lives in `tcplab.commands.<name>` and exposes
`register(subparsers)`, which adds its parser and sets `func` to a callable
taking the parsed arguments and returning an exit code. User errors raise
`tcplab.errors.UserError`; they are printed without a traceback and exit 2.

Only the command being run is imported: the others appear in `tcplab --help`
through their one-line help in `COMMANDS` (a test checks it matches what each
module registers), so `tcplab --help` imports neither pandas nor matplotlib.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys

from tcplab.errors import UserError

#: Subcommands (module tcplab.commands.<name>) and their one-line help, in the
#: order `tcplab --help` lists them.
COMMANDS = {
    "run": "run one scenario on an engine",
    "compare": "one scenario on several engines: metrics table and overlaid cwnd",
    "predict": "closed-form throughput models from the papers",
    "fluid": "the hybrid AIMD model of paper C (exact, event-driven)",
    "sweep": "run a parameter sweep (resumable; Parquet results)",
    "results": "query a sweep's results (DuckDB SQL, CSV export)",
    "plan": "what a run will do: links, routes, flow instants, parameters",
    "export-ns2": "write the ns-2 Tcl script for a scenario",
    "plot": "draw a run's traces (cwnd, queue, seq, rate)",
    "reproduce": "reproduce the papers' claims: figures, verdicts, HTML report",
    "linux": "housekeeping of the linux engine",
    "lab": "a live laboratory in the browser: every engine side by side, plots, why",
}


def build_parser(load: str | None = "all") -> argparse.ArgumentParser:
    """The parser; `load` names the command whose module is imported and registered
    ("all": every one; None: none, the others are listed by their help only)."""
    parser = argparse.ArgumentParser(
        prog="tcplab",
        description="What throughput will TCP get on this path, and why?",
    )
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, help_text in COMMANDS.items():
        if load == "all" or load == name:
            module = importlib.import_module(f"tcplab.commands.{name.replace('-', '_')}")
            module.register(sub)
        else:
            sub.add_parser(name, help=help_text)
    return parser


def _command_in(argv: list[str]) -> str | None:
    """The subcommand argv names (its first non-option word), if it names one."""
    for word in argv:
        if not word.startswith("-"):
            return word if word in COMMANDS else None
    return None


def main(argv: list[str] | None = None) -> int:
    from tcplab import provenance

    argv = sys.argv[1:] if argv is None else list(argv)
    # what every output's metadata records as its command line
    provenance.COMMAND = ["tcplab", *argv]
    parser = build_parser(load=_command_in(argv))
    args = parser.parse_args(argv)
    if args.version:
        from tcplab import __version__

        print(f"tcplab {__version__}")
        return 0
    if not getattr(args, "func", None):
        parser.print_help()
        return 0
    # many runs in one process: freed memory reused, not mapped and zeroed again
    from tcplab.malloc import keep_freed_memory

    keep_freed_memory()
    try:
        return int(args.func(args) or 0)
    except UserError as exc:
        print(f"tcplab: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("tcplab: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # the reader of our output went away (`tcplab plan --json | head`): stop
        # quietly, as a Unix filter does, without a second error as Python exits
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141


if __name__ == "__main__":
    sys.exit(main())
