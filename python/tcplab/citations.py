"""The four papers `tcplab reproduce` checks, cited in full (one place for the
README, the report pages and docs/claims.md).

    >>> from tcplab.citations import CITATIONS, text
    >>> print(text("parallel-aimd"))
"""

from __future__ import annotations

import html as _html
from dataclasses import dataclass

__all__ = ["Citation", "CITATIONS", "text", "markdown", "html"]


@dataclass(frozen=True)
class Citation:
    letter: str
    authors: tuple[str, ...]
    title: str
    venue: str
    year: int | None
    doi: str | None = None
    url: str | None = None
    note: str = ""  # what the citation lacks, said rather than guessed

    def authors_text(self) -> str:
        a = list(self.authors)
        return a[0] if len(a) == 1 else ", ".join(a[:-1]) + " and " + a[-1]


#: paper slug (as `tcplab reproduce` names it) → citation
CITATIONS: dict[str, Citation] = {
    "adaptivity": Citation(
        "A", ("Zoltán Szabó", "Sándor Molnár", "Zsolt Kenesi"),
        "The Effect of TCP's Adaptivity on the Throughput",
        "High Speed Networks Laboratory, Budapest University of Technology and Economics, "
        "and Ericsson Hungary", None,
        note="the text we worked from names no venue or year; its references reach 2003"),
    "alpha-beta": Citation(
        "B", ("Chi Zhang", "Vassilis Tsaoussidis"),
        "The Interrelation of TCP Responsiveness and Smoothness in Heterogeneous Networks",
        "Proceedings of the Seventh IEEE International Symposium on Computers and Communications (ISCC 2002)",
        2002, doi="10.1109/ISCC.2002.1021692"),
    "parallel-aimd": Citation(
        "C", ("Eitan Altman", "Dhiman Barman", "Bruno Tuffin", "Milan Vojnović"),
        "Parallel TCP Sockets: Simple Model, Throughput and Validation",
        "Proceedings of IEEE INFOCOM 2006", 2006,
        note="also Microsoft Research technical report MSR-TR-2005-130 (2005)"),
    "triple-slowstart": Citation(
        "D", ("Chadi Barakat", "Eitan Altman"),
        "Analysis of TCP in Networks with Small Buffering Capacity and Large Bandwidth-Delay Product",
        "INRIA Research Report RR-3574", 1998, url="https://inria.hal.science/inria-00073107",
        note="HAL inria-00073107; no DOI"),
}


def _link(c: Citation) -> str | None:
    return f"https://doi.org/{c.doi}" if c.doi else c.url


def text(slug: str) -> str:
    """One line of plain text."""
    c = CITATIONS[slug]
    s = f"{c.authors_text()}. {c.title}. {c.venue}" + (f", {c.year}" if c.year else "") + "."
    if c.doi:
        s += f" doi:{c.doi}."
    elif c.url:
        s += f" {c.url}."
    if c.note:
        s += f" ({c.note[0].upper()}{c.note[1:]}.)"
    return s


def markdown(slug: str) -> str:
    """One line of Markdown (title in italics, DOI or archive linked)."""
    c = CITATIONS[slug]
    s = f"{c.authors_text()}. *{c.title}*. {c.venue}" + (f", {c.year}" if c.year else "") + "."
    if c.doi:
        s += f" [doi:{c.doi}]({_link(c)})."
    elif c.url:
        s += f" <{c.url}>."
    if c.note:
        s += f" ({c.note[0].upper()}{c.note[1:]}.)"
    return s


def html(slug: str) -> str:
    """The citation as an HTML fragment (for the report pages)."""
    c = CITATIONS[slug]
    e = _html.escape
    s = f"{e(c.authors_text())}. <i>{e(c.title)}</i>. {e(c.venue)}" + (f", {c.year}" if c.year else "") + "."
    link = _link(c)
    if link:
        label = f"doi:{c.doi}" if c.doi else link
        s += f' <a href="{e(link)}">{e(label)}</a>.'
    if c.note:
        s += f" ({e(c.note[0].upper() + c.note[1:])}.)"
    return s
