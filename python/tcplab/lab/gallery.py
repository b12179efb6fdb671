"""The papers' gallery: each claim A1…D4 as a card (its statement, the figure it
is about, the latest verdict, the knobs that matter) that opens live in the lab.

The claims, statements and figures are the reproduction's own (`tcplab.reproduce`);
the verdicts are read from the table docs/reproduce.md keeps (the latest
`tcplab reproduce` run), when the lab runs from a checkout; each card's scenario
and knobs are the setting its claim's runs use (python/tcplab/reproduce/*/runs.py),
at a duration short enough to feel live.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

_A = "a-sine-background"
_SHORT_A = {"duration": "300s", "warmup": "30s"}
_C = "c-parallel-sack"
_SHORT_C = {"duration": "120s", "warmup": "20s"}
_D = "d-tahoe-satellite"
_SHORT_D = {"duration": "300s", "warmup": "60s"}

#: claim → (example scenario, control changes, what to move and look at)
LIVE: dict[str, tuple[str, dict, str]] = {
    "A1": (_A, {**_SHORT_A, "flows.background.rate.frequency": "0.4Hz"}, "move the background's frequency: the dip near 0.4 Hz; variant reno vs newreno"),
    "A2": ("a-two-sines", _SHORT_A, "the two sines' frequencies (TOML pane)"),
    "A3": (_A, {**_SHORT_A, "flows.background.rate.frequency": "0.4Hz"}, "frequency 0.1, 0.4, 5 Hz: cwnd, queue and timeouts"),
    "A4": (_A, {**_SHORT_A, "topology.bottleneck.rate": "2Mbps"}, "bottleneck rate 1, 2, 5 Mb/s with the frequency"),
    "A5": (_A, {**_SHORT_A, "topology.bottleneck.delay": "50ms"}, "delay 5 → 50 ms with the frequency"),
    "A6": (_A, {**_SHORT_A}, "packet size (TOML: flows.*.packet_size) with the frequency"),
    "A7": (_A, {**_SHORT_A, "topology.bottleneck.buffer": 160}, "buffer 40 → 160 packets at 0.4 Hz"),
    "A8": (_A, {**_SHORT_A}, "maximum RTO (TOML: flows.tcp.max_rto = \"0.3s\") at 0.4 Hz"),
    "B1": ("b-dumbbell", {}, "α and β of the TCP group: eq. 3's friendly α, the congestion epoch"),
    "B2": ("b-dumbbell", {}, "N flows and the rate (10 vs 100 Mb/s), per α/β"),
    "B3": ("b-wireless-per", {}, "the loss model's packet error rate, per α/β"),
    "B4": ("b-handoff", {}, "α/β through the handoff outages: per-second goodput after each"),
    "B5": ("b-join", {}, "α/β as flows join: per-second goodput and Jain's index"),
    "B6": ("b-leave", {}, "α/β as flows leave"),
    "B7": ("b-realtime", {}, "α/β of the CBR-over-TCP flows, the error rate"),
    "B8": ("b-friendliness", {}, "N flows per group: smooth TCP's share against TCP(1, ½)"),
    "C1": (_C, _SHORT_C, "N flows: the fluid model against Theorem 1"),
    "C2": (_C, _SHORT_C, "N flows; the fluid model's rate-independent bias (fluid, CLI)"),
    "C3": (_C, _SHORT_C, "N flows: ALL = (1+β)/2 in the fluid model"),
    "C4": (_C, {**_SHORT_C, "flows.sack.count": 2}, "N = 2, β = ½: the fluid model's policies"),
    "C5": (_C, {**_SHORT_C, "flows.sack.count": 4}, "N = 4: the fluid model's fixed points"),
    "C6": (_C, {**_SHORT_C, "topology.bottleneck.buffer": 5}, "buffer 5 → 100 with N: below Theorem 1, then above"),
    "C7": ("c-red", {}, "N and the buffer under RED against Theorem 1"),
    "C8": ("c-threshold-dropper", {}, "N under the threshold dropper against Theorem 1"),
    "C9": (_C, {**_SHORT_C, "topology.bottleneck.buffer": 20}, "the buffer: P(loss | window) rises with the window"),
    "C10": (_C, {**_SHORT_C, "topology.bottleneck.buffer": 20}, "the buffer: flows hit per congestion event (the \"why\")"),
    "C11": (_C, {**_SHORT_C, "topology.bottleneck.buffer": 5}, "N flows; the linux engine (root) for real TCP"),
    "D1": (_D, _SHORT_D, "buffer B: W_max = B + μτ + 1 on the cwnd plot"),
    "D2": (_D, {"topology.bottleneck.buffer": 21}, "buffer B from 4 to 26 (B = 21: triple slow starts in the cwnd plot) and the throughput"),
    "D3": (_D, {**_SHORT_D, "topology.bottleneck.buffer": 20}, "B = 19, 20, 22: slow starts per cycle in the cwnd plot"),
    "D4": (_D, _SHORT_D, "buffer B: (W_S + W_E)/(2 RTT) against the packet engine"),
}


@functools.cache
def verdicts() -> dict[str, str]:
    """claim → latest verdict (packet engine) from docs/reproduce.md, when there is a checkout."""
    doc = Path(__file__).resolve().parents[3] / "docs" / "reproduce.md"
    out: dict[str, str] = {}
    if not doc.is_file():
        return out
    for line in doc.read_text().splitlines():
        m = re.match(r"^\|\s*([A-D]\d+)\s*\|\s*([a-z-]+)\s*\|", line)
        if m and m.group(1) not in out:
            out[m.group(1)] = m.group(2)
    return out


def report_rows(report: Path | None, slug: str) -> dict[str, dict]:
    """claim → its row of a `tcplab reproduce --out DIR` report (DIR/<paper>/claims.json), if there is one."""
    import json

    if report is None:
        return {}
    f = Path(report) / slug / "claims.json"
    try:
        return {r["id"]: r for r in json.loads(f.read_text())}
    except (OSError, ValueError, KeyError, TypeError):
        return {}


def figure_file(report: Path, slug: str, stem: str) -> Path | None:
    """The report's picture of a figure: its thumbnail, else the full PNG."""
    for f in (Path(report) / slug / "thumbs" / f"{stem}.png", Path(report) / slug / f"{stem}.png"):
        if f.is_file():
            return f
    return None


def cards(report: Path | None = None) -> list[dict]:
    """One card per claim, in the papers' order. With `report` (a folder `tcplab reproduce
    --out` wrote), each card takes its verdict and figure from there; else the verdict
    from docs/reproduce.md and no figure."""
    from tcplab.reproduce import PAPERS, load_paper

    v = verdicts()
    out = []
    for slug in PAPERS:
        paper = load_paper(slug)
        rows = report_rows(report, slug)
        for c in paper.claims:
            scenario, sets, knobs = LIVE.get(c.id, (None, {}, ""))
            row = rows.get(c.id, {})
            stems = [s for s in row.get("figures") or [] if isinstance(s, str) and figure_file(report, slug, s)]
            out.append({"id": c.id, "paper": paper.letter, "slug": slug, "paper_title": paper.title, "title": c.title,
                        "statement": c.paper, "figure": c.figure,
                        "verdict": row.get("verdict") or v.get(c.id, "run tcplab reproduce"),
                        "verdict_from": "report" if row.get("verdict") else "docs/reproduce.md",
                        "figures": stems, "scenario": scenario, "set": sets, "knobs": knobs})
    return out
