"""Paper B (Chi Zhang, Vassilis Tsaoussidis, "The Interrelation of TCP
Responsiveness and Smoothness in Heterogeneous Networks", Proceedings of the
Seventh IEEE International Symposium on Computers and Communications, ISCC 2002):
TCP(α,β) protocols — smoothness versus responsiveness.

Four protocols on eq. 3's friendliness curve α = 4(1 − β²)/3 are compared:
TCP(0.31, 0.875) (smooth), TCP(0.583, 0.75), TCP(1, 0.5) (standard) and
TCP(1.25, 0.25) (responsive). Every run uses the dumbbell of the paper's Fig. 1
(`scenarios/b-dumbbell.toml`: access links 5 ms, bottleneck 25 ms, every link
at the bottleneck rate, ns-2 default buffers, Reno, 1000-byte packets);
sweeps go through the results store and traced runs are cached as Parquet, so
a second `tcplab reproduce alpha-beta` computes nothing again.

Static claims (B2, B3, B8) are sweeps whose metrics the store keeps; the
dynamic ones (B4–B7) read per-second ("allotted") goodput from the ack trace,
which the packet engine samples every 0.1 s (`trace.interval`), so the
per-second edges fall on samples. B5/B6 express "N doubles / halves every
5 s" with one flow group per step (start/stop times), which reproduces the
schedule exactly. B4 runs handoff outages on the sink links, B7 CBR over TCP
with the engine's playback reader.

Closed forms sit beside the simulation wherever they speak to a claim:
eq. 3 and the epoch length (eqs. 4, 5) against measured epochs (B1), the
GAIMD throughput (eq. 1) against system goodput (B2, B3) and group shares
(B8), the α-limited regrowth after a handoff (B4), and the Chiu–Jain
convergence and eq. 4/5 refill times after joins and departures (B5, B6).

The package: `runs` (the scenario, its flow groups and overrides, the sweeps and
traced runs), `model` (the closed forms on the dumbbell's numbers), `analysis`
(measurements on traces), `figures`, `claims` (statements, criteria, checks)
and `notes.md` (the notes the report prints beside each verdict, the summary).
"""

from __future__ import annotations

from tcplab.reproduce import Paper, load_notes, plan_of
from tcplab.reproduce.alpha_beta.analysis import epochs, first_at_or_above, handoffs, recovery_curve
from tcplab.reproduce.alpha_beta.claims import CLAIMS
from tcplab.reproduce.alpha_beta.model import chiu_jain_seconds, refill_seconds, rtt_full, rtt_min
from tcplab.reproduce.alpha_beta.runs import (PROTOCOLS, RESPONSIVE, SCENARIO, SMOOTH, STANDARD, join_groups,
                                              leave_groups, setup)

__all__ = ["PAPER", "PROTOCOLS", "SMOOTH", "STANDARD", "RESPONSIVE", "epochs", "handoffs", "recovery_curve",
           "first_at_or_above", "join_groups", "leave_groups", "rtt_min", "rtt_full", "chiu_jain_seconds",
           "refill_seconds", "setup"]


def _setup() -> list[tuple[str, str]]:
    """The report's setup table, the path's numbers from the scenario's Plan."""
    p = plan_of(SCENARIO)
    s = setup()
    hops = p.route(p.first_of("tcp"))
    bn = p.bottleneck("tcp")
    return [
        ("scenario", f"`{SCENARIO}` (the paper's Fig. 1), flows and rates set per claim"),
        ("protocols", "TCP(0.31, 0.875) smooth, TCP(0.583, 0.75), TCP(1, 0.5) standard, TCP(1.25, 0.25) responsive "
                      "(ns-2 Reno with increase_num_ = α, decrease_num_ = β)"),
        ("path", f"access links {hops[0]['delay_ns'] / 1e6:g} ms, bottleneck {bn['delay_ns'] / 1e6:g} ms "
                 f"(RTT {s.prop_rtt * 1e3:.0f} ms), every link at the bottleneck rate"),
        ("buffers", f"ns-2 default queue-limit {s.buffer + 1} on every link ({s.buffer} waiting slots); "
                    "the paper gives none"),
        ("packets", f"{s.packet} bytes on the wire ({s.payload} payload); advertised window unlimited (ns-2's 20 "
                    "would cap 100 Mb/s flows)"),
        ("errors", "Bernoulli per packet on the sink access links (ns-2 ErrorModel), data only"),
        ("runs", "quick: 100 s at 10 Mb/s, 60 s at 100 Mb/s (B2), 60 s (B5, B6), 50 s (B7), first 10 s "
                 "discarded in static runs; full: the paper's 100 s everywhere, N = 10..100 in steps of 10, "
                 "3 seeds for the sweeps"),
        ("models", "`tcplab.models.gaimd`: eq. 1 (GAIMD), eq. 3, eq. 4, eq. 5"),
    ]


PAPER = Paper(
    slug="alpha-beta",
    letter="B",
    title="TCP(α,β): smoothness versus responsiveness (ISCC 2002)",
    setup=_setup(),
    claims=CLAIMS,
    summary=load_notes(__name__)["summary"],
)
