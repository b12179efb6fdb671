"""Paper D (Chadi Barakat, Eitan Altman, "Analysis of TCP in Networks with Small
Buffering Capacity and Large Bandwidth-Delay Product", INRIA Research Report
RR-3574, 1998): TCP Tahoe with a small buffer and a large bandwidth-delay product.

One Tahoe source, 1.5 Mb/s bottleneck, 512-byte packets (μ ≈ 366 packets/s),
τ = 560 ms, FIFO buffer of B waiting slots (`scenarios/d-tahoe-satellite.toml`;
the numbers are read from its Plan, `runs.path`). Every claim reads the same
traced runs (cwnd, ssthresh, drops) over B, cached.

Slow starts per cycle are counted from the drops, not from cwnd alone: a
slow-start phase (cwnd reset to 1 → next reset) belongs to the *loss* that
ended it, and that loss happened in slow start when the sender's cwnd was
still below ssthresh at the instant of the drop. Paper D counts it that way
(its triple case "gets shortly in congestion avoidance before detecting the
loss occurring in the second slow-start"); see `metrics.tahoe_cycles`. Asking
only whether cwnd ever reached ssthresh counts such a phase as a cycle of its
own.

The package: `runs` (the scenario, its overrides per mode, the table over B),
`figures` (one per claim), `claims` (statements, criteria, checks) and
`notes.md` (the notes the report prints beside each verdict).
"""

from __future__ import annotations

from tcplab.reproduce import Paper, plan_of
from tcplab.reproduce.triple_slowstart.claims import CLAIMS
from tcplab.reproduce.triple_slowstart.runs import GROUP, SCENARIO, cycles, path

__all__ = ["PAPER", "SCENARIO", "cycles", "path"]


def _setup() -> list[tuple[str, str]]:
    """The report's setup table, its numbers from the scenario's Plan."""
    p = plan_of(SCENARIO)
    mu, tau, _ = path()
    route = p.route(p.first_of(GROUP))
    access = route[0]["rate_bps"] / 1e6
    size = p.first_of(GROUP)["packet_size"]
    return [
        ("scenario", f"`{SCENARIO}`"),
        ("TCP", "one Tahoe source (ns-2 `Agent/TCP` semantics), receiver acks every packet, keeps out-of-order data"),
        ("path", f"{access:g} Mb/s access, {p.bottleneck(GROUP)['rate_bps'] / 1e6:g} Mb/s bottleneck, "
                 f"round-trip propagation τ = {tau * 1e3:.0f} ms"),
        ("packets", f"{size} bytes on the wire: μ = {mu:.0f} packets/s, μτ + 1 = {mu * tau + 1:.0f}"),
        ("buffer", "B = 1..64 waiting slots (ns-2 queue-limit B+1), FIFO DropTail"),
        ("runs", "quick: 1200 s per B (≈ 10 cycles), full: 6000 s; the start-up cycle is left out"),
        ("model", "`tcplab.models.slowstart` (eqs. 1–16, Sec. 7)"),
    ]


PAPER = Paper(
    slug="triple-slowstart",
    letter="D",
    title="TCP with small buffers and a large bandwidth-delay product (Barakat, Altman)",
    setup=_setup(),
    claims=CLAIMS,
)
