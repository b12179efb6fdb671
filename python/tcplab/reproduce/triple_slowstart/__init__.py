"""Paper D (Chadi Barakat, Eitan Altman, "Analysis of TCP in Networks with Small
Buffering Capacity and Large Bandwidth-Delay Product", INRIA Research Report
RR-3574, 1998): TCP Tahoe with a small buffer and a large bandwidth-delay product.

One Tahoe source, 1.5 Mb/s bottleneck, 512-byte packets (μ ≈ 366 packets/s),
τ = 560 ms, FIFO buffer of B waiting slots (`scenarios/d-tahoe-satellite.toml`;
the numbers are read from its Plan, `runs.path`). Every claim reads the same
traced runs (cwnd, ssthresh, drops) over B, cached.

Slow starts per cycle are counted as paper D defines them (`metrics.tahoe_cycles`):
every fall of cwnd to 1 starts a slow start ("starting at W = 1", Sec. 1), and a
cycle runs up to the congestion avoidance that ends with "the loss due to a
window size W_max exceeding the network capacity" (Sec. 2). A loss that occurs
in slow start belongs to it even when "the source gets shortly in congestion
avoidance before detecting the loss" (Sec. 7, the triple case): such a loss is
detected less than one RTT of congestion avoidance (one packet of cwnd) above
ssthresh, a congestion-avoidance loss ≈ W_max/2 RTTs above it. This count
equals ns-2's event-trace count (falls of cwnd to 1 less than a few RTTs apart
form one cycle) at every B = 1..64, on both engines and both profiles.

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
