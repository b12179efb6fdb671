"""Paper A (Zoltán Szabó, Sándor Molnár, Zsolt Kenesi, "The Effect of TCP's
Adaptivity on the Throughput", High Speed Networks Laboratory, Budapest
University of Technology and Economics, and Ericsson Hungary): the effect of
TCP's adaptivity on the throughput.

One greedy TCP flow and a UDP background r(t) = C/2 (1 + sin 2πft) share a
bottleneck; every link 1 Mb/s, 5 ms, 40-packet DropTail buffers, 1000-byte
packets (`scenarios/a-sine-background.toml`, two sines: `a-two-sines.toml`).
Normalized throughput is the TCP flow's goodput over the free capacity C/2
(`measure.reference = "free"`, metric `normalized_goodput`).

Every throughput characteristic (A1, A4–A8) is a sweep over the frequency f
(and the parameter the claim varies, zipped into one axis) run through the
sweep store with several seeds per point: at some frequencies the throughput
depends on the phase of the early timeouts (bimodal across seeds, in ns-2 as
in tcplab), so each point is the mean over seeds and the figures show the
spread (min–max band). A3 reads traced runs (cwnd, packets in flight, sends,
drops, queue occupancy by class).

The paper's figures lost their data in conversion, so the parameter values of
Figs. 11–15 are ours (listed in each claim's note).

The package: `runs` (scenarios, overrides per mode, the sweeps), `figures`,
`claims` (statements, criteria, checks) and `notes.md` (the notes the report
prints beside each verdict, and the summary).
"""

from __future__ import annotations

from tcplab.reproduce import Paper, load_notes, plan_of
from tcplab.reproduce.adaptivity.claims import CLAIMS, DIP_LEVEL, dip
from tcplab.reproduce.adaptivity.runs import SCENARIO, TWO_SINES, setup

__all__ = ["PAPER", "DIP_LEVEL", "dip"]


def _setup() -> list[tuple[str, str]]:
    """The report's setup table, the path's numbers from the scenario's Plan."""
    p = plan_of(SCENARIO)
    links = {(link["rate_bps"], link["delay_ns"], link["buffer_pkts"]) for link in p.links}
    if len(links) == 1:  # the paper's: every link the same
        rate, delay, buffer = links.pop()
        path = f"every link {rate / 1e6:g} Mb/s, {delay / 1e6:g} ms, {buffer}-packet DropTail buffer"
    else:
        path = "links as the scenario sets them"
    tcp = p.first_of("tcp")["tcp"]
    return [
        ("scenario", f"`{SCENARIO}` (A1, A3–A8), `{TWO_SINES}` (A2)"),
        ("topology", f"TCP source, UDP source → R1 → R2 → sinks; {path}"),
        ("TCP", f"one greedy Reno flow (A1 also NewReno), ns-2 2.35 defaults: min RTO {tcp['min_rto_ns'] / 1e9:g} s, "
                f"max RTO {tcp['max_rto_ns'] / 1e9:g} s, tick {tcp['tick_ns'] / 1e6:g} ms"),
        ("background", f"UDP at r(t) = C/2 (1 + sin 2πft), {setup().udp_packet}-byte packets; "
                       "A2: C/4 sin 2πf1t + C/4 sin 2πf2t + C/4"),
        ("metric", "normalized throughput = TCP goodput / (C − mean background) = goodput / (C/2)"),
        ("runs", "quick: 300 s (30 s warm-up), A1 20 frequencies × 5 seeds, A2 8 × 8, A4–A8 12 frequencies × 3 "
                 "seeds; full: 1800 s (100 s warm-up), A1 30 × 10 seeds, A2 15 × 15 × 3, A4–A8 20 × 5"),
    ]


PAPER = Paper(
    slug="adaptivity",
    letter="A",
    title="The effect of TCP's adaptivity on the throughput (Szabó, Molnár, Kenesi)",
    setup=_setup(),
    claims=CLAIMS,
    summary=load_notes(__name__)["summary"],
)
