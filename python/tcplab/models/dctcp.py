"""DCTCP's steady state: window sawtooth, α, queue oscillation, marking threshold K.

Sources: M. Alizadeh, A. Greenberg, D. A. Maltz, J. Padhye, P. Patel,
B. Prabhakar, S. Sengupta, M. Sridharan, "Data Center TCP (DCTCP)", Proceedings
of ACM SIGCOMM 2010, Section 3.3 ("Analysis"); M. Alizadeh, A. Javanmard,
B. Prabhakar, "Analysis of DCTCP: Stability, Convergence, and Fairness",
Proceedings of ACM SIGMETRICS 2011 (the fluid model that justifies the
sawtooth analysis and α ≈ sqrt(2/W*)).

Model (SIGCOMM 2010, Sec. 3.3): N identical long-lived flows with the same
round-trip time RTT share a bottleneck of C packets/s; the switch marks (ECN)
every packet that arrives to a queue longer than K packets; the flows are
synchronized (same sawtooth). A sender grows its window by one packet per RTT
and, once per window with marks, cuts it to W·(1 − α/2), α the fraction of
its packets marked. The queue reaches K when every window is::

    W* = (C·RTT + K)/N

and the window rises one packet above W* before the marks arrive, so the
fraction marked solves α²(1 − α/4) = (2W* + 1)/(W* + 1)², i.e. for large W*::

    α ≈ sqrt(2/W*)

The window's sawtooth amplitude, the queue's oscillation, the period and the
queue's extremes::

    D   = (W* + 1)·α/2            ≈ sqrt(W*/2)                packets per flow
                                     (tcplab uses the ≈ forms, as the guideline does)
    A   = N·D                     ≈ ½·sqrt(2N(C·RTT + K))      packets
    T_C = D                        RTTs (one packet per RTT)
    Q_max = N(W* + 1) − C·RTT = K + N
    Q_min = Q_max − A             ≈ K + N − ½·sqrt(2N(C·RTT + K))

The queue never empties (100 % throughput) while Q_min > 0; the smallest K
that ensures it for every N (the worst case, N ≈ (C·RTT + K)/8) gives the
guideline::

    K > (C·RTT)/7

Assumptions: synchronized flows with equal RTT; marking on the instantaneous
queue; no loss (the buffer exceeds Q_max); the approximation needs W* large
(α ≪ 1). The packet engine runs DCTCP (cc = "dctcp") over a RED queue that
ECN-marks at a step K (scenarios/dctcp.toml), and `tcplab predict scenario`
applies these models to such a scenario (tcplab.models.scenario).
"""

from __future__ import annotations

import numpy as np

from tcplab.models._domain import count, non_negative, positive, scalar_or_array


def _inputs(rate, rtt, k, n):
    return (
        positive("rate (bottleneck C, packets/s)", rate),
        positive("rtt (round-trip time, s)", rtt),
        non_negative("k (marking threshold K, packets)", k),
        count("n (number of flows N)", n),
    )


def window_at_threshold(rate, rtt, k, n=1):
    """W*: each flow's window when the queue reaches K (SIGCOMM 2010, Sec. 3.3).

    W* = (C·RTT + K)/N. Validity: C > 0, RTT > 0, K >= 0, N >= 1.
    """
    c, rtt, k, n = _inputs(rate, rtt, k, n)
    return scalar_or_array((c * rtt + k) / n)


def steady_state_alpha(rate, rtt, k, n=1):
    """α ≈ sqrt(2/W*), the fraction of packets marked (SIGCOMM 2010, Sec. 3.3).

    The approximation of α²(1 − α/4) = (2W* + 1)/(W* + 1)² for large W*.
    Validity: as for :func:`window_at_threshold`, and W* >= 2 (else α >= 1:
    every packet is marked and the window halves, as TCP's; outside the
    analysis).
    """
    w = np.asarray(window_at_threshold(rate, rtt, k, n))
    if np.any(w < 2):
        bad = w[w < 2].flat[0] if w.ndim else float(w)
        raise ValueError(f"W* = (C·RTT + K)/N (rate, rtt, k, n) must be >= 2 packets for DCTCP's analysis (α < 1), got {bad:g}")
    return scalar_or_array(np.sqrt(2 / w))


def window_amplitude(rate, rtt, k, n=1):
    """D ≈ sqrt(W*/2) packets: each window's sawtooth amplitude (Sec. 3.3).

    D = (W* + 1)·α/2 with α ≈ sqrt(2/W*) and W* + 1 ≈ W*: the form the
    paper's queue amplitude, period and guideline K > C·RTT/7 are built on
    (for W* = 4, (W* + 1)α/2 is 1.77 against 1.41: the analysis wants W* large).
    It is also the period T_C in RTTs (one packet per RTT).
    """
    w = np.asarray(window_at_threshold(rate, rtt, k, n))
    steady_state_alpha(rate, rtt, k, n)  # the domain check (W* >= 2)
    return scalar_or_array(np.sqrt(w / 2))


def queue_amplitude(rate, rtt, k, n=1):
    """A = N·D ≈ ½·sqrt(2N(C·RTT + K)) packets: the queue's oscillation (Sec. 3.3)."""
    d = np.asarray(window_amplitude(rate, rtt, k, n))
    return scalar_or_array(np.asarray(count("n (number of flows N)", n)) * d)


def queue_max(rate, rtt, k, n=1):
    """Q_max = N(W* + 1) − C·RTT = K + N packets (Sec. 3.3)."""
    _, _, k, n = _inputs(rate, rtt, k, n)
    return scalar_or_array(k + n)


def queue_min(rate, rtt, k, n=1):
    """Q_min = Q_max − A packets (Sec. 3.3); the queue empties where it is < 0."""
    return scalar_or_array(np.asarray(queue_max(rate, rtt, k, n)) - np.asarray(queue_amplitude(rate, rtt, k, n)))


def min_marking_threshold(rate, rtt):
    """The guideline's lower bound on K: C·RTT/7 packets (SIGCOMM 2010, Sec. 3.3)."""
    c = positive("rate (bottleneck C, packets/s)", rate)
    rtt = positive("rtt (round-trip time, s)", rtt)
    return scalar_or_array(c * rtt / 7)


def full_throughput(rate, rtt, k, n=1):
    """Whether the queue never empties (Q_min > 0): 100 % throughput by the analysis."""
    return scalar_or_array(np.asarray(queue_min(rate, rtt, k, n)) > 0)


def explain_dctcp(rate, rtt, k, n=1) -> dict:
    """Every steady-state quantity for one input (scalar inputs)."""
    info = {
        "w_star": float(window_at_threshold(rate, rtt, k, n)),
        "alpha": float(steady_state_alpha(rate, rtt, k, n)),
        "window_amplitude": float(window_amplitude(rate, rtt, k, n)),
        "period_rtts": float(window_amplitude(rate, rtt, k, n)),
        "queue_amplitude": float(queue_amplitude(rate, rtt, k, n)),
        "queue_max": float(queue_max(rate, rtt, k, n)),
        "queue_min": float(queue_min(rate, rtt, k, n)),
        "k_guideline": float(min_marking_threshold(rate, rtt)),
        "full_throughput": bool(full_throughput(rate, rtt, k, n)),
    }
    verdict = ("the queue stays above 0: 100 % throughput" if info["full_throughput"]
               else "the queue empties each cycle: below 100 % throughput")
    info["reason"] = (f"W* = {info['w_star']:.4g}, α = {info['alpha']:.3g}, queue {info['queue_min']:.4g}"
                      f"…{info['queue_max']:.4g} packets; K >= C·RTT/7 = {info['k_guideline']:.4g} "
                      f"{'holds' if float(k) > info['k_guideline'] else 'fails'}; {verdict}")
    return info
