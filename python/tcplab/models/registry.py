"""The closed-form models `tcplab predict` offers: name, parameters, assumptions.

Each :class:`Model` wraps one vectorized function of `tcplab.models` with what
a user needs to judge the answer: a one-line summary, the paper and equation,
the assumptions, its parameters (with defaults and units) and what the value
means. The CLI and the scenario mapper read this table; nothing else about a
model lives in the command.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from tcplab.models import aimd, bbr, buffers, cubic, dctcp, gaimd, slowstart


@dataclass(frozen=True)
class Param:
    """One model input. `name` is both the keyword argument and the CLI option."""

    name: str
    help: str
    default: float | int | str | None = None  # None: required
    kind: str = "float"  # "float", "int" or "choice"
    choices: tuple[str, ...] = ()

    @property
    def required(self) -> bool:
        return self.default is None


@dataclass(frozen=True)
class Model:
    name: str
    summary: str
    source: str
    assumptions: str
    quantity: str
    func: Callable
    params: tuple[Param, ...]
    #: False when the value is itself a vector (one entry per connection):
    #: such a model takes scalar inputs only.
    vector_inputs: bool = True
    #: Optional function of the same inputs returning a dict that explains
    #: the value (scalar inputs); `tcplab predict` prints it.
    explain: Callable | None = None

    def param(self, name: str) -> Param:
        for p in self.params:
            if p.name == name:
                return p
        raise KeyError(name)


# Parameters shared by several models.
_N = Param("n", "number of connections N (whole, >= 1)", kind="int")
_BETA = Param("beta", "multiplicative decrease β, 0 < β < 1", 0.5)
_ALPHA = Param("alpha", "additive increase α, packets per RTT", 1.0)
_P = Param("p", "loss event rate p per packet, 0 < p <= 1")
_RTT = Param("rtt", "round-trip time, s")
_T0 = Param("t0", "retransmission timeout T0, s", 1.0)
_B = Param("b", "packets acknowledged per ACK (2 with delayed ACKs)", 1)
_WMAX = Param("wmax", "maximum (receiver) window, packets; 0 = unlimited", 0.0)
_BUFFER = Param("buffer", "packets that can wait in the bottleneck buffer, B", kind="int")
_MU = Param("mu", "bottleneck rate μ, packets/s (paper D: 366)", 366.0)
_TAU = Param("tau", "round-trip propagation delay τ, s (paper D: 0.56)", 0.56)

_PAPER_C = "paper C (parallel AIMD connections)"
_ZERO_BUFFER = (
    "N identical AIMD connections (same η, β); the link is congested when the rates sum "
    "to c (zero buffer: propagation delay dominates queueing); no receiver-window limit."
)
_PFTK_ASSUMPTIONS = (
    "One greedy flow; losses correlated within a round, independent between rounds; "
    "RTT independent of the window; timeouts with exponential backoff."
)
_TAHOE_ASSUMPTIONS = (
    "One greedy TCP Tahoe flow, one FIFO bottleneck of μ packets/s with B waiting "
    "slots, round-trip propagation τ, receiver acks every packet and keeps out-of-order "
    "data, no other traffic, no corruption."
)


_CUBIC_ASSUMPTIONS = (
    "One long-lived CUBIC flow; losses deterministic, 1/p packets apart, each one window "
    "reduction (no timeouts); RTT constant (no queueing, the path never limits the window)."
)
_P_CUBIC = Param("p", "loss rate per packet p, 0 < p < 1")
_C_CUBIC = Param("c", "CUBIC's constant C, segments/s³", cubic.C_CUBIC)
_BETA_CUBIC = Param("beta", "CUBIC's multiplicative decrease β_cubic, 0 < β < 1", cubic.BETA_CUBIC)
_DCTCP_ASSUMPTIONS = (
    "N long-lived DCTCP flows with one RTT, synchronized; the switch ECN-marks packets arriving "
    "to a queue above K; no loss; W* = (C·RTT + K)/N large (α < 1). The packet engine runs DCTCP over an ECN-marking RED step (scenarios/dctcp.toml)."
)
_DCTCP_PARAMS = (
    Param("rate", "bottleneck rate C, packets/s"),
    Param("rtt", "round-trip time, s"),
    Param("k", "marking threshold K, packets (>= 0)"),
    Param("n", "number of flows N (whole, >= 1)", 1, "int"),
)


def _wmax(wmax):
    return None if not wmax else wmax


def _pftk(p, rtt, t0=1.0, b=1, wmax=0.0, form="full", alpha=1.0, beta=0.5):
    if alpha != 1.0 or beta != 0.5:
        raise ValueError("PFTK is TCP(1, 1/2); for other alpha/beta use the model 'gaimd'")
    if form == "approx":
        return gaimd.pftk_throughput_approx(p, rtt, t0, b, _wmax(wmax))
    return gaimd.pftk_throughput(p, rtt, t0, b, _wmax(wmax))


MODELS: tuple[Model, ...] = (
    Model(
        "aimd-one",
        "mean utilization of N AIMD connections, one cut per congestion event",
        f"{_PAPER_C}, Theorem 1, eq. (1)/(5): 1 − 1/(1 + N(1+β)/(1−β))",
        _ZERO_BUFFER + " Exactly one connection is cut per event (ONE), any policy.",
        "E[X]/c, mean aggregate throughput as a fraction of capacity",
        aimd.aimd_one_utilization,
        (_N, _BETA),
    ),
    Model(
        "aimd-all",
        "mean utilization when all connections are cut together (synchronized)",
        f"{_PAPER_C}, eq. (6): (1+β)/2",
        _ZERO_BUFFER + " Every connection is cut at every event (ALL).",
        "E[X]/c, mean aggregate throughput as a fraction of capacity",
        lambda beta=0.5, n=1: aimd.aimd_all_utilization(beta, n),
        (_BETA, Param("n", "number of connections (the value does not depend on it)", 1, "int")),
    ),
    Model(
        "multtcp",
        "mean utilization of one MultTCP connection emulating N connections",
        f"{_PAPER_C}, Sec. II.B.4 with eq. (6): 1 − (1−β)/(2N) (= 1 − 1/(4N) for β = ½)",
        "One AIMD connection with increase N·η and decrease 1 − (1−β)/N; zero buffer.",
        "E[X]/c, mean throughput as a fraction of capacity",
        aimd.multtcp_utilization,
        (_N, _BETA),
    ),
    Model(
        "aimd-connections",
        "connections needed for a target utilization under ONE",
        f"{_PAPER_C}, Theorem 1 solved for N: ceil(u(1−β)/((1−u)(1+β)))",
        _ZERO_BUFFER + " One connection cut per event (ONE).",
        "N, smallest number of connections reaching the target",
        lambda target, beta=0.5: aimd.aimd_connections_needed(target, beta),
        (Param("target", "target utilization u, 0 < u < 1"), _BETA),
    ),
    Model(
        "aimd-largest-rate",
        "rates before a congestion event at the largest-rate fixed point",
        f"{_PAPER_C}, Proposition 1, eq. (9)",
        _ZERO_BUFFER + " The connection with the largest rate is cut (round robin at the fixed point).",
        "x_i/c for i = 1..N, sorted in decreasing order",
        aimd.largest_rate_fixed_point,
        (_N, _BETA),
        vector_inputs=False,
    ),
    Model(
        "aimd-beatdown",
        "rates at tagging times at the beatdown stationary point",
        f"{_PAPER_C}, Sec. IV.B: ỹ_k/c = 2(N−k)/(N(N−1))",
        _ZERO_BUFFER + " Beatdown: the tagged connection is cut while the link stays congested.",
        "ỹ_k/c for k = 1..N, sorted in decreasing order",
        aimd.beatdown_stationary_point,
        (Param("n", "number of connections N (whole, >= 2)", kind="int"),),
        vector_inputs=False,
    ),
    Model(
        "aimd-second-moment",
        "second moment E[X₁²]/c² of either of two AIMD flows (β = ½)",
        f"{_PAPER_C}, Theorem 2",
        "Two identical AIMD connections, β = ½, zero buffer, the named loss policy.",
        "E[X₁²]/c² (exact fraction)",
        lambda policy: aimd.second_moment_two_flows(policy),
        (
            Param(
                "policy",
                "loss policy",
                kind="choice",
                choices=tuple(aimd.SECOND_MOMENTS_N2),
            ),
        ),
    ),
    Model(
        "gaimd-alpha",
        "increase α that makes TCP(α,β) friendly to TCP(1,½)",
        "paper B (TCP(α,β)), eq. (3): α = 4(1−β²)/3",
        "GAIMD throughput equation with rare timeouts; one reduction per congestion epoch.",
        "α, packets per RTT",
        gaimd.friendly_alpha,
        (Param("beta", "multiplicative decrease β, 0 < β < 1"),),
    ),
    Model(
        "gaimd",
        "throughput of one TCP(α,β) flow at loss rate p",
        "paper B, eq. (1) (GAIMD, Yang and Lam; the PFTK approximation generalized)",
        _PFTK_ASSUMPTIONS + " Window +α per RTT, ×β on a loss indication.",
        "throughput, packets/s",
        lambda p, rtt, t0=1.0, b=1, alpha=1.0, beta=0.5, wmax=0.0: gaimd.gaimd_throughput(
            p, rtt, t0, b, alpha, beta, _wmax(wmax)
        ),
        (_P, _RTT, _T0, _B, _ALPHA, _BETA, _WMAX),
    ),
    Model(
        "pftk",
        "throughput of TCP Reno at loss rate p (Padhye et al.)",
        "Padhye, Firoiu, Towsley, Kurose (SIGCOMM 1998), eq. (31) full, eq. (33) approx",
        _PFTK_ASSUMPTIONS + " TCP Reno = TCP(1, ½).",
        "throughput, packets/s",
        _pftk,
        (
            _P,
            _RTT,
            _T0,
            _B,
            _WMAX,
            Param("form", "full (eq. 31) or approx (eq. 33)", "full", "choice", ("full", "approx")),
            Param("alpha", "must be 1 (PFTK is TCP(1,½))", 1.0),
            Param("beta", "must be 0.5 (PFTK is TCP(1,½))", 0.5),
        ),
    ),
    Model(
        "mathis",
        "square-root formula: throughput without timeouts",
        "Mathis, Semke, Mahdavi, Ott (CCR 1997): (1/RTT)·sqrt(3/(2bp))",
        "Periodic losses, one per congestion epoch, no timeouts, constant RTT.",
        "throughput, packets/s",
        gaimd.mathis_throughput,
        (_P, _RTT, _B),
    ),
    Model(
        "gaimd-epoch",
        "length of a TCP(α,β) congestion epoch",
        "paper B, eq. (4): n = (1−β)W/α + 1",
        "Window grows α per RTT from βW to W, one reduction per epoch, no timeouts.",
        "n, RTTs per congestion epoch",
        lambda w, alpha=1.0, beta=0.5: gaimd.congestion_epoch_rtts(w, alpha, beta),
        (Param("w", "window at the drop W, packets"), _ALPHA, _BETA),
    ),
    Model(
        "gaimd-window",
        "each flow's window at an even share of the bottleneck",
        "paper B, eq. (5): W = B·RTT/N",
        "N flows with equal RTTs share the bottleneck evenly; queueing not counted.",
        "W, packets",
        lambda rate, rtt, n: gaimd.fair_share_window(rate, rtt, n),
        (Param("rate", "bottleneck capacity, packets/s"), _RTT, _N),
    ),
    Model(
        "slowstart-cycle",
        "slow starts per TCP Tahoe cycle (1, 2 or 3) with a small buffer",
        "paper D (Barakat–Altman), eqs. (1), (5)–(10), (12), (16); Theorems 1 and 2",
        _TAHOE_ASSUMPTIONS,
        "slow starts per cycle",
        slowstart.slowstarts_per_cycle,
        (_BUFFER, _MU, _TAU),
        explain=slowstart.explain_slowstart_cycle,
    ),
    Model(
        "slowstart-throughput",
        "Tahoe cycle throughput (W_S + W_E)/(2·RTT) with a small buffer",
        "paper D, Sec. 7, W_S from Theorems 1/2, W_E = W_max (eq. 1), RTT = τ + 1/μ",
        _TAHOE_ASSUMPTIONS + " RTT constant; slow-start packets ignored.",
        "throughput, packets/s",
        slowstart.slowstart_cycle_throughput,
        (_BUFFER, _MU, _TAU),
    ),
    Model(
        "slowstart-ratio",
        "throughput ratio R of a triple to a double slow-start cycle",
        "paper D, Sec. 7: R = (α+2)/(2α+2), α = W_B/W_max",
        _TAHOE_ASSUMPTIONS + " Meaningful where W_th > 2W_B (R >= 0.9 there).",
        "R (dimensionless)",
        slowstart.triple_slowstart_ratio,
        (_BUFFER, _MU, _TAU),
    ),
    Model(
        "cubic-window",
        "CUBIC's average window at loss rate p (response function)",
        "RFC 9438 (Xu, Ha, Rhee, Goel, Eggert, 2023), Sec. 5: max([C(3+β)/(4(1−β))]^¼·RTT^¾/p^¾, "
        "sqrt(3/(2p))), the second the Reno-friendly region (Sec. 4.3)",
        _CUBIC_ASSUMPTIONS,
        "average window, packets",
        cubic.cubic_window,
        (_P_CUBIC, _RTT, _C_CUBIC, _BETA_CUBIC),
        explain=cubic.explain_cubic,
    ),
    Model(
        "cubic",
        "throughput of one CUBIC flow at loss rate p (response function / RTT)",
        "RFC 9438, Sec. 5 and 5.1: AVG_W/RTT with AVG_W from 'cubic-window'",
        _CUBIC_ASSUMPTIONS,
        "throughput, packets/s",
        cubic.cubic_throughput,
        (_P_CUBIC, _RTT, _C_CUBIC, _BETA_CUBIC),
        explain=cubic.explain_cubic,
    ),
    Model(
        "bbr-share",
        "BBR v1 flows' share of a bottleneck against loss-based flows (in-flight cap)",
        "Ware, Mukerjee, Seshan, Sherry, IMC 2019, eqs. (9)–(11): "
        "(1 − p)(1 − (q/c + 0.2 + l)/10), p = max(0, ½ − 1/(2X) − 4N/q)",
        "BBR v1 against any number (>= 1) of Reno/CUBIC flows, which keep a FIFO drop-tail queue "
        "full (buffer about 1 BDP or more); equal propagation RTTs; long-lived flows; BBR flows "
        "synchronized, in probe-rtt every 10 s for 200 ms + one RTT after the queue drains.",
        "BBR flows' aggregate fraction of the bottleneck",
        bbr.bbr_share,
        (
            Param("buffer_bdp", "bottleneck buffer in BDPs, X = q/(c·l), > 0"),
            Param("rate", "bottleneck rate c, packets/s"),
            Param("rtt", "round-trip propagation delay l, s"),
            Param("n_bbr", "number of BBR flows N (the loss-based flows' number does not enter)", 1, "int"),
        ),
        explain=bbr.explain_bbr_share,
    ),
    Model(
        "dctcp",
        "DCTCP steady state: queue minimum Q_min = K + N − A (and W*, α, amplitudes)",
        "Alizadeh et al., SIGCOMM 2010, Sec. 3.3 (α ≈ sqrt(2/W*), A ≈ ½·sqrt(2N(C·RTT+K))); "
        "fluid model: Alizadeh, Javanmard, Prabhakar, SIGMETRICS 2011",
        _DCTCP_ASSUMPTIONS,
        "Q_min, packets (> 0: the link never idles)",
        dctcp.queue_min,
        _DCTCP_PARAMS,
        explain=dctcp.explain_dctcp,
    ),
    Model(
        "dctcp-alpha",
        "DCTCP's steady-state fraction of marked packets α ≈ sqrt(2/W*)",
        "Alizadeh et al., SIGCOMM 2010, Sec. 3.3, W* = (C·RTT + K)/N",
        _DCTCP_ASSUMPTIONS,
        "α (fraction of packets marked)",
        dctcp.steady_state_alpha,
        _DCTCP_PARAMS,
    ),
    Model(
        "dctcp-k",
        "smallest DCTCP marking threshold for 100 % throughput: K > C·RTT/7",
        "Alizadeh et al., SIGCOMM 2010, Sec. 3.3 (Q_min > 0 for every N)",
        _DCTCP_ASSUMPTIONS,
        "K, packets",
        dctcp.min_marking_threshold,
        (_DCTCP_PARAMS[0], _DCTCP_PARAMS[1]),
    ),
    Model(
        "buffer-bdp",
        "buffer for full utilization by one long-lived TCP flow (rule of thumb)",
        "Appenzeller, Keslassy, McKeown, 'Sizing Router Buffers', SIGCOMM 2004, Sec. 2: B = RTT × C",
        "Long-lived TCP Reno flows (or synchronized ones) in congestion avoidance; FIFO drop-tail.",
        "B, packets",
        buffers.bdp_buffer,
        (Param("rate", "bottleneck rate C, packets/s"), Param("rtt", "round-trip propagation delay, s")),
    ),
    Model(
        "buffer-sqrt-n",
        "buffer for near-full utilization by N desynchronized long-lived flows",
        "Appenzeller, Keslassy, McKeown, SIGCOMM 2004, Sec. 3: B = RTT × C / √N",
        "N long-lived TCP Reno flows whose losses are not synchronized (N large); FIFO drop-tail.",
        "B, packets",
        buffers.sqrt_n_buffer,
        (Param("rate", "bottleneck rate C, packets/s"), Param("rtt", "round-trip propagation delay, s"), _N),
    ),
)

_BY_NAME = {m.name: m for m in MODELS}


def get_model(name: str) -> Model:
    """The model called `name`; KeyError lists the known names."""
    try:
        return _BY_NAME[name]
    except KeyError:
        raise KeyError(f"unknown model {name!r}; known: {', '.join(_BY_NAME)}") from None
