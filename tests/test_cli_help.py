"""Every subcommand's `--help`, and every nested subcommand's (predict's models,
linux's housekeeping), prints its help and exits 0: no traceback from a help text
(a bare `%` in a model's summary once made `tcplab predict --help` raise)."""

from __future__ import annotations

import argparse
import contextlib
import io

import pytest

from tcplab import cli


def _help_paths() -> list[list[str]]:
    """Every command path the parser knows, e.g. ["predict", "dctcp-k"]."""
    paths: list[list[str]] = [[]]

    def walk(parser: argparse.ArgumentParser, prefix: list[str]) -> None:
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    paths.append(prefix + [name])
                    walk(sub, prefix + [name])

    walk(cli.build_parser(load="all"), [])
    return paths


PATHS = _help_paths()


def test_the_walk_finds_every_command_and_the_models():
    names = {p[0] for p in PATHS if p}
    assert names == set(cli.COMMANDS)
    assert ["predict", "dctcp-k"] in PATHS


@pytest.mark.parametrize("path", PATHS, ids=lambda p: " ".join(p) or "tcplab")
def test_help_prints_and_exits_zero(path):
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit) as stop:
        cli.main([*path, "--help"])
    assert stop.value.code == 0
    assert "usage: tcplab" in out.getvalue()


def test_bare_predict_prints_its_help_without_a_traceback():
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        try:
            code = cli.main(["predict"])
        except SystemExit as stop:
            code = stop.code
    assert code in (0, 2)
    assert "Traceback" not in out.getvalue()
