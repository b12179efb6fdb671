"""Throughput of one TCP(α,β) flow against its loss rate (paper B, PFTK, Mathis).

Paper B: C. Zhang and V. Tsaoussidis, "The Interrelation of TCP Responsiveness and
Smoothness in Heterogeneous Networks", IEEE ISCC 2002 (`tcplab.citations`). TCP(α,β)
adds α packets per RTT without loss and multiplies its window by β on a loss
indication. Its throughput equation (eq. 1) is GAIMD's (Yang and Lam), the
PFTK approximation of Padhye, Firoiu, Towsley and Kurose (SIGCOMM 1998) with α
and β in place of 1 and ½; the Mathis et al. (1997) square-root formula is
PFTK without timeouts.

Units: rates in packets per second, times in seconds, windows in packets.
"""

from __future__ import annotations

import numpy as np

from tcplab.models._domain import (
    as_float_array,
    count,
    non_negative,
    open_unit,
    positive,
    require,
    scalar_or_array,
)


def friendly_alpha(beta):
    """Increase α that makes TCP(α,β) as aggressive as TCP(1,½) for a given β.

    Equation (paper B, eq. 3, derived from GAIMD eqs. 1–2)::

        α = 4 (1 − β²) / 3

    β = 7/8 → 0.3125 (the paper's 0.31), β = 0.75 → 0.583, β = 0.25 → 1.25,
    β = ½ → 1. Validity: 0 < β < 1.

    Caveat (checked in tests/test_models_gaimd.py): this α makes the
    *timeout* term of eq. (1) and the mean window at a loss equal to TCP's,
    not the congestion-avoidance term. Without timeouts eq. (1) gives
    TCP(4(1−β²)/3, β) a rate 2(1+β)/3 times TCP(1,½)'s: 1.25 for β = 7/8,
    0.83 for β = ¼. Equating that term instead gives α = 3(1−β)/(1+β).
    """
    beta = open_unit("beta", beta)
    return scalar_or_array(4 * (1 - beta**2) / 3)


def _loss_rate(p) -> np.ndarray:
    p = as_float_array("p (loss event rate)", p)
    require("p (loss event rate)", p, (p > 0) & (p <= 1), "in (0, 1]")
    return p


def gaimd_throughput(p, rtt, t0, b=1, alpha=1.0, beta=0.5, w_max=None):
    """Steady-state throughput of TCP(α,β) in packets/s (GAIMD; paper B, eq. 1).

    Equation (paper B, eq. 1; garbled in the converted text, standard form)::

        T = 1 / ( RTT·sqrt(2b(1−β)p / (α(1+β)))
                  + T0·min(1, 3·sqrt((1−β²)·b·p / (2α)))·p·(1 + 32p²) )

    capped at w_max/RTT when a maximum window is given. For α = 1, β = ½ it is
    exactly the approximate PFTK formula (:func:`pftk_throughput_approx`).

    Assumptions: a greedy flow; loss indications at rate p per packet,
    independent between rounds, correlated within a round; RTT independent
    of the window; b packets acknowledged per ACK; timeouts after T0 with
    exponential backoff. Validity: 0 < p <= 1, RTT > 0, T0 >= 0, b >= 1,
    α > 0, 0 < β < 1; most accurate for p below a few percent.
    """
    p = _loss_rate(p)
    rtt = positive("rtt", rtt)
    t0 = non_negative("t0", t0)
    b = as_float_array("b (packets per ACK)", b)
    require("b (packets per ACK)", b, b >= 1, ">= 1")
    alpha = positive("alpha", alpha)
    beta = open_unit("beta", beta)
    ca = rtt * np.sqrt(2 * b * (1 - beta) * p / (alpha * (1 + beta)))
    to = t0 * np.minimum(1, 3 * np.sqrt((1 - beta**2) * b * p / (2 * alpha)))
    rate = 1 / (ca + to * p * (1 + 32 * p**2))
    return scalar_or_array(_window_cap(rate, rtt, w_max))


def _window_cap(rate, rtt, w_max):
    if w_max is None:
        return rate
    w_max = positive("w_max (maximum window)", w_max)
    return np.minimum(rate, w_max / rtt)


def pftk_throughput_approx(p, rtt, t0, b=1, w_max=None):
    """Approximate PFTK throughput of TCP Reno in packets/s.

    Equation (Padhye et al. 1998, eq. 33)::

        B(p) ≈ min( W_max/RTT,
                    1 / ( RTT·sqrt(2bp/3) + T0·min(1, 3·sqrt(3bp/8))·p·(1 + 32p²) ) )

    (the W_max term only when `w_max` is given). Identical to
    :func:`gaimd_throughput` with α = 1, β = ½ (paper B's eq. 1 generalizes it).
    Assumptions and validity as for :func:`gaimd_throughput`.
    """
    return gaimd_throughput(p, rtt, t0, b=b, alpha=1.0, beta=0.5, w_max=w_max)


def _pftk_q_hat(p, w):
    """Probability that a loss in a window of w packets is a timeout (PFTK eq. 24)."""
    q = 1 - p
    num = (1 - q**3) * (1 + q**3 * (1 - q ** (w - 3)))
    return np.minimum(1, num / (1 - q**w))


def pftk_throughput(p, rtt, t0, b=1, w_max=None):
    """Full PFTK model of TCP Reno throughput in packets/s.

    Equations (Padhye, Firoiu, Towsley, Kurose, SIGCOMM 1998):
    unconstrained mean window (eq. 13)::

        E[W_u] = (2+b)/(3b) + sqrt( 8(1−p)/(3bp) + ((2+b)/(3b))² )

    timeout probability Q̂(w) (eq. 24) and backoff factor
    f(p) = 1 + p + 2p² + 4p³ + 8p⁴ + 16p⁵ + 32p⁶ (eq. 28); then (eq. 31)::

        if E[W_u] < W_max:
            B = ((1−p)/p + E[W_u] + Q̂(E[W_u])/(1−p))
                / (RTT (b/2·E[W_u] + 1) + Q̂(E[W_u])·T0·f(p)/(1−p))
        else:
            B = ((1−p)/p + W_max + Q̂(W_max)/(1−p))
                / (RTT (b/8·W_max + (1−p)/(p·W_max) + 2) + Q̂(W_max)·T0·f(p)/(1−p))

    Without `w_max` the window is unconstrained (first branch).
    Assumptions: TCP Reno, greedy; losses correlated within a round and
    independent between rounds; RTT independent of the window; b packets per
    ACK; triple-duplicate and timeout loss indications with exponential
    backoff (capped at 64 T0). Validity: 0 < p < 1, RTT > 0, T0 >= 0, b >= 1,
    W_max > 0.
    """
    p = _loss_rate(p)
    require("p (loss event rate)", p, p < 1, "< 1 for the full PFTK model")
    rtt = positive("rtt", rtt)
    t0 = non_negative("t0", t0)
    b = as_float_array("b (packets per ACK)", b)
    require("b (packets per ACK)", b, b >= 1, ">= 1")
    q = 1 - p
    f = 1 + p + 2 * p**2 + 4 * p**3 + 8 * p**4 + 16 * p**5 + 32 * p**6
    c = (2 + b) / (3 * b)
    w_u = c + np.sqrt(8 * q / (3 * b * p) + c**2)
    q_u = _pftk_q_hat(p, w_u)
    unconstrained = (q / p + w_u + q_u / q) / (rtt * (b / 2 * w_u + 1) + q_u * t0 * f / q)
    if w_max is None:
        return scalar_or_array(unconstrained)
    w_max = positive("w_max (maximum window)", w_max)
    q_m = _pftk_q_hat(p, w_max)
    limited = (q / p + w_max + q_m / q) / (
        rtt * (b / 8 * w_max + q / (p * w_max) + 2) + q_m * t0 * f / q
    )
    return scalar_or_array(np.where(w_u < w_max, unconstrained, limited))


def mathis_throughput(p, rtt, b=1):
    """Mathis et al. (1997) square-root formula in packets/s.

    Equation::

        T = (1/RTT)·sqrt(3 / (2bp))          (constant C = sqrt(3/2) for b = 1)

    This is the congestion-avoidance term of PFTK/GAIMD(1,½) alone, i.e.
    :func:`pftk_throughput_approx` with T0 = 0. Assumptions: periodic losses,
    one per congestion epoch, no timeouts, RTT constant, b packets per ACK.
    Validity: 0 < p <= 1 (accurate for small p, say < 1 %), RTT > 0, b >= 1.
    """
    p = _loss_rate(p)
    rtt = positive("rtt", rtt)
    b = as_float_array("b (packets per ACK)", b)
    require("b (packets per ACK)", b, b >= 1, ">= 1")
    return scalar_or_array(np.sqrt(3 / (2 * b * p)) / rtt)


def congestion_epoch_rtts(w, alpha=1.0, beta=0.5):
    """Length of a TCP(α,β) congestion epoch in RTTs.

    Equation (paper B, eq. 4)::

        n = (1−β)·W/α + 1

    The epoch starts at βW packets, grows α per RTT and ends with a drop at W.
    Assumptions: one reduction per epoch, no timeouts. Validity: W > 0,
    α > 0, 0 < β < 1.
    """
    w = positive("w (window at the drop, packets)", w)
    alpha = positive("alpha", alpha)
    beta = open_unit("beta", beta)
    return scalar_or_array((1 - beta) * w / alpha + 1)


def fair_share_window(rate, rtt, n):
    """Each flow's window when N flows share a bottleneck evenly.

    Equation (paper B, eq. 5)::

        W = B·RTT/N        (B: bottleneck capacity in packets/s)

    Assumptions: N flows with the same RTT get equal shares (the control
    system of Chiu and Jain); queueing is not counted in RTT.
    Validity: rate > 0, RTT > 0, N >= 1.
    """
    rate = positive("rate (packets/s)", rate)
    rtt = positive("rtt", rtt)
    n = count("n (number of flows)", n)
    return scalar_or_array(rate * rtt / n)
