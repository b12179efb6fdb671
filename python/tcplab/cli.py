"""The `tcplab` command line.

Each subcommand lives in `tcplab.commands.<name>` and exposes
`register(subparsers)`, which adds its parser and sets `func` to a callable
taking the parsed arguments and returning an exit code. User errors raise
`tcplab.errors.UserError`; they are printed without a traceback and exit 2.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from tcplab.errors import UserError

#: Subcommand modules, in the order `tcplab --help` lists them.
COMMANDS = ["run", "compare", "predict", "fluid", "sweep", "results", "export-ns2", "plot", "reproduce", "linux"]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tcplab",
        description="What throughput will TCP get on this path, and why?",
    )
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        module = importlib.import_module(f"tcplab.commands.{name.replace('-', '_')}")
        module.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.version:
        from tcplab import __version__

        print(f"tcplab {__version__}")
        return 0
    if not getattr(args, "func", None):
        parser.print_help()
        return 0
    try:
        return int(args.func(args) or 0)
    except UserError as exc:
        print(f"tcplab: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("tcplab: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
