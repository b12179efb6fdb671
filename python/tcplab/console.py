"""The consoles tcplab prints tables with.

Rich takes a piped or redirected stdout to be 80 columns wide and folds or cuts
any wider table to fit: `tcplab results ... > out.txt` lost columns. On a
terminal a table fits the terminal; anywhere else it is printed whole.
"""

from __future__ import annotations

import sys

#: the width a table may take when stdout is not a terminal (no folding, no cutting)
PIPED_WIDTH = 10_000


def stdout_console(**kwargs):
    """A rich Console on stdout: the terminal's width on a terminal, unlimited when piped."""
    from rich.console import Console

    if not sys.stdout.isatty():
        kwargs.setdefault("width", PIPED_WIDTH)
    return Console(**kwargs)


def markdown_table(df) -> str:
    """A DataFrame as a GitHub-flavoured Markdown table (every row and column, unabridged)."""
    def cell(v) -> str:
        if v is None or (isinstance(v, float) and v != v):
            return ""
        return str(v).replace("|", "\\|").replace("\n", " ")

    head = "| " + " | ".join(cell(c) for c in df.columns) + " |"
    rule = "| " + " | ".join("---" for _ in df.columns) + " |"
    rows = ["| " + " | ".join(cell(v) for v in r) + " |" for r in df.itertuples(index=False)]
    return "\n".join([head, rule, *rows]) + "\n"


#: characters of a name, label or title shown on a terminal or in a figure: layout
#: (rich's wrapping, matplotlib's text) grows faster than linearly with the text
DISPLAY_CHARS = 120


def shown(text, limit: int = DISPLAY_CHARS) -> str:
    """`text` for display: one line, at most about `limit` characters (cut in the
    middle, saying how many were left out); the outputs keep the full text."""
    s = str(text)
    if len(s) <= limit:
        return " ".join(s.split()) if any(c in s for c in "\n\r\t") else s
    keep = max(12, limit - 24)
    head, tail = s[: keep * 2 // 3], s[-(keep // 3):]
    left_out = len(s) - len(head) - len(tail)
    return f"{' '.join(head.split())}…[{left_out} more characters]…{' '.join(tail.split())}"
