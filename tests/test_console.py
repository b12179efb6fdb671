"""What the CLI prints: tables whole when piped, help texts that name real files."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest

from tcplab.cli import main

ROOT = Path(__file__).resolve().parents[1]


def test_a_piped_table_is_printed_whole(capsys):
    """Rich assumes 80 columns off a terminal and folds wider tables; ours are whole."""
    from rich.table import Table

    from tcplab.console import stdout_console

    t = Table()
    for i in range(12):
        t.add_column(f"column_number_{i}")
    t.add_row(*[f"value-{i:02d}-abcdefgh" for i in range(12)])
    stdout_console().print(t)  # pytest's captured stdout is not a terminal
    out = capsys.readouterr().out
    assert "value-11-abcdefgh" in out and "column_number_11" in out
    assert max(len(line) for line in out.splitlines()) > 200  # one line per row, not folded


def test_markdown_table_keeps_every_row_and_escapes_pipes():
    from tcplab.console import markdown_table

    df = pd.DataFrame({"flows.sack.count": [1, 2, 3], "note": ["a|b", None, "c"]})
    md = markdown_table(df).splitlines()
    assert md[0] == "| flows.sack.count | note |" and md[1] == "| --- | --- |"
    assert md[2:] == ["| 1 | a\\|b |", "| 2 |  |", "| 3 | c |"]


@pytest.mark.parametrize("command", ["run", "compare", "export-ns2", "sweep", "reproduce", "plot", "results"])
def test_help_names_only_files_that_exist(command, capsys):
    with pytest.raises(SystemExit):
        main([command, "--help"])
    text = capsys.readouterr().out
    for path in re.findall(r"\b(?:scenarios|sweeps)/[\w./-]+\.toml", text):
        assert (ROOT / path).is_file(), f"`tcplab {command} --help` names {path}, which does not exist"
