"""Paper C (Eitan Altman, Dhiman Barman, Bruno Tuffin, Milan Vojnović, "Parallel
TCP Sockets: Simple Model, Throughput and Validation", Proceedings of IEEE
INFOCOM 2006): aggregate throughput of N parallel AIMD connections.

Model claims (C1–C5) run the exact hybrid model (`tcplab.fluid`) against the
closed forms (`tcplab.models.aimd`); simulation claims (C6–C10) run N TCP-SACK
flows over the 10 Mb/s, RTT 120 ms bottleneck of `scenarios/c-parallel-sack.toml`
(sweeps through the results store, traced runs cached as Parquet). RED and the
threshold-dropper (C7, C8, C9's RED half) run the engine's queue disciplines
(RED's "paper-c" preset as `scenarios/c-red.toml` has it,
`scenarios/c-threshold-dropper.toml`). C11 runs real Linux TCP (`--engine linux`).

The package: `runs` (the model's runs, scenarios and overrides per mode),
`figures`, `claims` (statements, criteria, checks) and `notes.md` (the notes
the report prints beside each verdict).
"""

from __future__ import annotations

from tcplab.reproduce import Paper, plan_of
from tcplab.reproduce.parallel_aimd.claims import CLAIMS
from tcplab.reproduce.parallel_aimd.figures import BUFFER_COLORS, buffer_color, thm1
from tcplab.reproduce.parallel_aimd.runs import SCENARIO, path

__all__ = ["PAPER", "BUFFER_COLORS", "buffer_color", "thm1"]


def _setup() -> list[tuple[str, str]]:
    """The report's setup table, the path's numbers from the scenario's Plan."""
    p = plan_of(SCENARIO)
    f = p.first_of()
    hops = p.route(f)
    bn = p.bottleneck()
    access = hops[0]
    return [
        ("model", "exact hybrid AIMD model (`tcplab.fluid`, crates/aimd): η = 1, β = ½, c = 1; "
                  "quick 10⁵ congestion events per point, full 10⁶; 10% warm-up; 95% batch-means intervals"),
        ("closed forms", "`tcplab.models.aimd`: Theorem 1 (eq. 5), eq. 6, MultTCP, Prop. 1 (eq. 9), Theorem 2"),
        ("scenario", f"`{SCENARIO}`: N TCP-SACK flows, one-way agents as ns-2 2.35"),
        ("path", f"bottleneck {bn['rate_bps'] / 1e6:g} Mb/s, {bn['delay_ns'] / 1e6:g} ms; access links "
                 f"{access['rate_bps'] / 1e6:g} Mb/s, {access['delay_ns'] / 1e6:g} ms: RTT {path().rtt_s * 1e3:.0f} ms; "
                 "DropTail buffer b"),
        ("packets", f"{f['packet_size']} bytes (ns-2 default; the paper: payload 1000 bytes); advertised window unlimited"),
        ("starts", "uniform in [0, 4] s, as the paper"),
        ("runs", "quick: 300 s, first 100 s discarded; full: the paper's 2000 s, first 1000 s discarded"),
        ("axes", "quick: N ∈ {1,2,3,4,6,8,10,12,15}, b ∈ {5,20,50,100}; full: N = 1..15, b ∈ {5,10,20,50,100,200}"),
        ("RED (C7, C9)", "paper C's: thresholds 0.6 b and 0.8 b, max p 0.1, weight 0.001, wait; gentle, packet mode, "
                         "mean packet size 500 (ns-2 2.35 defaults; `scenarios/c-red.toml`); quick b ∈ {20, 50, 100}"),
        ("threshold-dropper (C8)", f"Th ∈ {{2, 3}}, b ∈ {{30, 100}} (the paper's series), τ = {path().dropper_tau} "
                                   "(1 RTT), rate-independent and largest-rate (`scenarios/c-threshold-dropper.toml`)"),
    ]


PAPER = Paper(
    slug="parallel-aimd",
    letter="C",
    title="Aggregate throughput of N parallel AIMD connections (Infocom)",
    setup=_setup(),
    claims=CLAIMS,
)
