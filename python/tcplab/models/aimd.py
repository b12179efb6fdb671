"""Aggregate throughput of N parallel AIMD connections (paper C).

Paper C: E. Altman, D. Barman, B. Tuffin and M. Vojnović, "Parallel TCP Sockets:
Simple Model, Throughput and Validation", IEEE INFOCOM 2006 (`tcplab.citations`). The hybrid model of its
Section II: each connection's rate grows linearly (η_i), the link is congested
when Σ x_i = c (zero buffer: propagation delay dominates queueing delay), and a
loss policy picks who is cut to a fraction β of its rate (eqs. 2–4).

All throughputs here are normalized by the link capacity c (a fraction of c).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from tcplab.models._domain import count, open_unit, scalar_or_array


def aimd_one_utilization(n, beta=0.5):
    """Mean aggregate throughput E[X]/c of N AIMD connections under ONE (Thm. 1).

    Equation (paper C, eq. 1 = eq. 5, Theorem 1)::

        E[X_ONE]/c = 1 − 1 / (1 + N (1+β)/(1−β))

    Assumptions: N identical AIMD connections (same η and β) on one link of
    capacity c; exactly one connection is cut per congestion event (ONE); the
    system has a unique stationary distribution and a positive mean time
    between congestion events; receiver windows never bind (R); zero buffer.
    The value is insensitive to which connection is cut (rate-proportional,
    largest-rate, rate-independent with any bias, beatdown) and to η (RTT).

    Validity: N >= 1 (whole), 0 < β < 1. N = 1 gives (1+β)/2 (0.75 for β=½).
    Vectorized over `n` and `beta` (numpy broadcasting).
    """
    n = count("n (number of connections)", n)
    beta = open_unit("beta", beta)
    k = (1 + beta) / (1 - beta)
    return scalar_or_array(1 - 1 / (1 + n * k))


def aimd_all_utilization(beta=0.5, n=1):
    """Mean aggregate throughput E[X]/c when ALL connections are cut together.

    Equation (paper C, eq. 6)::

        E[X_ALL]/c = (1+β)/2        for every N

    Assumptions: N identical AIMD connections, every one cut at every
    congestion event (synchronized windows, loss policy ALL); the rates
    converge to the even share c/N before each event; zero buffer.
    Validity: 0 < β < 1, N >= 1. `n` is accepted (and checked) only so that a
    table over N can be printed beside the ONE policy; the value does not
    depend on it.
    """
    n = count("n (number of connections)", n)
    beta = open_unit("beta", beta)
    return scalar_or_array((1 + beta) / 2 + 0 * n)


def multtcp_utilization(n, beta=0.5):
    """Mean throughput E[X]/c of one MultTCP connection emulating N connections.

    MultTCP (Oechlin and Crowcroft) is a single AIMD connection with increase
    N·η and decrease β_N = 1 − (1−β)/N; under ALL (one connection, so ONE = ALL)
    paper C, eq. 6 gives::

        E[X_MultTCP]/c = (1+β_N)/2 = 1 − (1−β)/(2N)

    which is paper C's (Sec. II.B.4) 1 − 1/(4N) for β = ½. (The converted
    text's "decrease parameter 1−N/2" is garbled; 1 − (1−β)/N is the design.)

    Assumptions: as for eq. 6 with one connection; zero buffer; no receiver
    window limit. Validity: N >= 1 (whole), 0 < β < 1.
    """
    n = count("n (number of emulated connections)", n)
    beta = open_unit("beta", beta)
    return scalar_or_array(1 - (1 - beta) / (2 * n))


def aimd_connections_needed(target, beta=0.5):
    """Smallest N whose Theorem 1 utilization reaches `target` (paper C, eq. 5).

    Solving 1 − 1/(1 + N (1+β)/(1−β)) >= u for N gives::

        N = ceil( u (1−β) / ((1−u)(1+β)) ),  at least 1

    (u = 0.9, β = ½ gives N = 3, as paper C, Sec. II.B.1 states.)
    Assumptions: those of Theorem 1 (ONE, identical connections, zero buffer).
    Validity: 0 < target < 1 (full utilization needs infinitely many),
    0 < β < 1. Returns an int (or an int64 array).
    """
    u = open_unit("target (utilization)", target)
    beta = open_unit("beta", beta)
    exact = u * (1 - beta) / ((1 - u) * (1 + beta))
    # A relative slack of 1e-9 so that an exact integer (u = 0.9 -> 3.0000000000000004)
    # is not rounded up by floating-point noise.
    needed = np.maximum(1, np.ceil(exact * (1 - 1e-9))).astype(np.int64)
    needed = np.asarray(needed)
    return int(needed) if needed.ndim == 0 else needed


def largest_rate_fixed_point(n, beta=0.5):
    """Rates just before a congestion event at the largest-rate fixed point.

    Equation (paper C, Prop. 1, eq. 9), rates as fractions of c, sorted in
    decreasing order::

        x_1 = 2 / ((1+β) N + (1−β))
        x_i = x_1 (1 − (1−β)(i−1)/N),   i = 2..N

    At this point the connections are cut in round-robin order (Remark 2).
    Assumptions: N identical AIMD connections, largest-rate loss policy (the
    connection with the largest rate is cut), zero buffer.
    Validity: N >= 1 (whole, scalar), 0 < β < 1 (scalar). Returns an array of
    N fractions summing to 1.
    """
    n_arr = count("n (number of connections)", n)
    beta_arr = open_unit("beta", beta)
    if n_arr.ndim or beta_arr.ndim:
        raise ValueError("largest_rate_fixed_point takes a scalar n and beta")
    n_i, b = int(n_arr), float(beta_arr)
    x1 = 2 / ((1 + b) * n_i + (1 - b))
    i = np.arange(1, n_i + 1)
    return x1 * (1 - (1 - b) * (i - 1) / n_i)


def beatdown_stationary_point(n):
    """Rates at the tagging times of the beatdown policy, sorted, as fractions of c.

    Paper C, Sec. IV.B: the stationary point satisfies
    ỹ_k = ỹ_{k+1} + ỹ_1/(N−1), hence ỹ_k = (N−k)/(N−1) ỹ_1 and, from Σ ỹ = c,
    ỹ_1 = 2c/N::

        ỹ_k / c = 2 (N−k) / (N (N−1)),   k = 1..N     (ỹ_1 = 2/N, ỹ_N = 0)

    (The converted text prints the middle terms as (1/(N−1))(1 − i/N); that
    lacks the factor 2 which its own ỹ_1 = 2c/N and Σ ỹ = c require.)
    Assumptions: N identical AIMD connections, beatdown policy (the tagged
    connection is cut for as long as the link stays congested), zero buffer.
    Does not depend on β. Validity: N >= 2 (whole, scalar).
    """
    n_arr = count("n (number of connections)", n, minimum=2)
    if n_arr.ndim:
        raise ValueError("beatdown_stationary_point takes a scalar n")
    n_i = int(n_arr)
    k = np.arange(1, n_i + 1)
    return 2 * (n_i - k) / (n_i * (n_i - 1))


#: Theorem 2 of paper C: E[X_1²]/c² for N = 2 identical connections, β = ½.
SECOND_MOMENTS_N2 = {
    "beatdown": Fraction(1, 3),
    "rate-independent": Fraction(5, 24),
    "rate-proportional": Fraction(679, 3396),
    "largest-rate": Fraction(4, 21),
}


def second_moment_two_flows(policy, n=2, beta=0.5) -> Fraction:
    """Time-stationary second moment E[X_1(0)²]/c² of either of two flows.

    Paper C, Theorem 2 (values as printed, exact fractions): beatdown 1/3,
    rate-independent 5/24, rate-proportional 679/3396, largest-rate 4/21.
    They differ although the mean is the same for all four (Theorem 1): the
    distribution is not insensitive to the loss policy.

    Assumptions: exactly two identical AIMD connections with β = ½, zero
    buffer, the named loss policy. Validity: n = 2 and β = ½ only (the paper
    gives no general formula); anything else raises ValueError.
    """
    if policy not in SECOND_MOMENTS_N2:
        raise ValueError(
            f"policy must be one of {', '.join(SECOND_MOMENTS_N2)}, got {policy!r}"
        )
    if np.ndim(n) or float(n) != 2:
        raise ValueError(f"Theorem 2 holds for n = 2 connections only, got {n}")
    if np.ndim(beta) or float(beta) != 0.5:
        raise ValueError(f"Theorem 2 holds for beta = 0.5 only, got {beta}")
    return SECOND_MOMENTS_N2[policy]
