"""The four papers tcplab reproduces, cited in full: one place for the README's
list, the HTML reports and anything else that names them.

`PAPERS` maps the paper's letter (the claim ids' prefix: A1, B2, ...) to a
`Citation`. A field the sources do not give is left empty rather than guessed:
paper A's text names no venue or year, paper C's DOI was not checked against
the publisher, paper D is a research report (no DOI; its HAL record instead).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Citation:
    authors: tuple[str, ...]
    title: str
    venue: str = ""
    year: int | None = None
    doi: str = ""
    url: str = ""

    def reference(self) -> str:
        """Authors, “title”, venue, year."""
        parts = [", ".join(self.authors), f"“{self.title}”"]
        if self.venue:
            parts.append(self.venue)
        if self.year:
            parts.append(str(self.year))
        return ", ".join(parts) + "."

    def text(self) -> str:
        """One line: the reference, then the DOI or URL."""
        if self.doi:
            return f"{self.reference()} doi:{self.doi}"
        return f"{self.reference()} {self.url}".rstrip()

    def link(self) -> str:
        """The DOI resolver's address, else the URL, else empty."""
        return f"https://doi.org/{self.doi}" if self.doi else self.url


PAPERS: dict[str, Citation] = {
    "A": Citation(("Zoltán Szabó", "Sándor Molnár", "Zsolt Kenesi"),
                  "The Effect of TCP's Adaptivity on the Throughput",
                  venue="manuscript, Budapest University of Technology and Economics and Ericsson Hungary "
                        "(its text states no venue or year)"),
    "B": Citation(("Chi Zhang", "Vassilis Tsaoussidis"),
                  "The Interrelation of TCP Responsiveness and Smoothness in Heterogeneous Networks",
                  venue="Proceedings of the Seventh IEEE International Symposium on Computers and "
                        "Communications (ISCC 2002)", year=2002, doi="10.1109/ISCC.2002.1021692"),
    "C": Citation(("Eitan Altman", "Dhiman Barman", "Bruno Tuffin", "Milan Vojnović"),
                  "Parallel TCP Sockets: Simple Model, Throughput and Validation",
                  venue="Proceedings of IEEE INFOCOM 2006", year=2006),
    "D": Citation(("Chadi Barakat", "Eitan Altman"),
                  "Analysis of TCP in Networks with Small Buffering Capacity and Large Bandwidth-Delay Product",
                  venue="INRIA Research Report RR-3574", year=1998, url="https://inria.hal.science/inria-00073107"),
}


def cite(letter: str) -> Citation:
    """The citation of paper `letter` (A–D)."""
    return PAPERS[letter.upper()]
