"""TCP Tahoe with a small buffer and a large bandwidth-delay product (paper D).

Paper D: Barakat and Altman, "Analysis of TCP in Networks with Small Buffering
Capacity and Large Bandwidth-Delay Product", INRIA RR-3574, 1998
(`tcplab.citations`).

Model (paper D, Sec. 2): one greedy TCP Tahoe source behind a single
bottleneck of rate μ packets/s with a FIFO buffer of B packets, round-trip
propagation delay τ seconds; the receiver acknowledges every packet and keeps
out-of-order packets, ACKs return uncongested, the link never corrupts
packets. Slow start is split into mini-cycles of one RTT; each ACK of a
mini-cycle releases two packets at rate 2μ, so the queue grows at rate μ.

B is the number of packets that can *wait* in the buffer (ns-2 `queue-limit`
B + 1: ns-2 counts the packet in service, see docs/ns2.md).

Every function is vectorized over its arguments (numpy broadcasting).
"""

from __future__ import annotations

import numpy as np

from tcplab.models._domain import count, positive, scalar_or_array

#: Names of the regimes :func:`slowstart_regime` returns.
REGIME_NO_LOSS = "no-loss"  # W_th < W_B: slow start ends without a loss
REGIME_THEOREM_2 = "theorem-2"  # W_B <= W_th <= 2 W_B
REGIME_THEOREM_1 = "theorem-1"  # W_th > 2 W_B


def _buffer(buffer) -> np.ndarray:
    return count("buffer (packets that can wait, B)", buffer)


def _path(mu, tau):
    return positive("mu (bottleneck rate, packets/s)", mu), positive("tau (round-trip propagation delay, s)", tau)


def max_window(buffer, mu, tau):
    """Window at the end of congestion avoidance, W_max, in packets.

    Equation (paper D, eq. 1)::  W_max = B + μτ + 1

    The pipe (μτ), the buffer (B) and the packet in service. The first slow
    start after a loss has threshold W_th = W_max/2.
    Validity: B >= 1 (whole), μ > 0, τ > 0.
    """
    b = _buffer(buffer)
    mu, tau = _path(mu, tau)
    return scalar_or_array(b + mu * tau + 1)


def overflow_minicycle(buffer):
    """n_B: the slow-start mini-cycle in which the buffer first overflows.

    Equation (paper D, eq. 6)::  2^(n_B−2) < B <= 2^(n_B−1)

    i.e. n_B = ceil(log2 B) + 1. Validity: B >= 1 (whole). Returns ints.
    """
    b = _buffer(buffer)
    # log2 of a power of two is exact in binary floating point.
    n_b = np.ceil(np.log2(b)).astype(np.int64) + 1
    return scalar_or_array(n_b)


def overflow_window(buffer):
    """W_B: the window at which slow start overflows the buffer, in packets.

    Equation (paper D, eq. 5)::  W_B = 2^(n_B−1) + B

    (2^(n_B−1) ACKs open mini-cycle n_B; B more ACKs send the 2B-packet burst
    that fills the buffer, which grows at rate μ.) Lakshman–Madhow's
    W_B = 2B (paper D, eq. 2) is the power-of-two special case.
    Validity: B >= 1 (whole).
    """
    b = _buffer(buffer)
    return scalar_or_array(2 ** (np.asarray(overflow_minicycle(b)) - 1) + b)


def second_burst(buffer):
    """S: the burst from part (iii) sent once the second slow start passes (i).

    Equation (paper D, eq. 12)::  S = 2^(n_B−1) − (B − 1) + 1 = 2^(n_B−1) − B + 2

    Validity: B >= 1 (whole); the analysis assumes W_th > 2 W_B.
    """
    b = _buffer(buffer)
    return scalar_or_array(2 ** (np.asarray(overflow_minicycle(b)) - 1) - b + 2)


def _smallest_integer(condition, guess) -> np.ndarray:
    """The smallest integer n >= 0 with condition(n), starting from a close guess.

    `condition` must be monotone in n (false, then true); the guess comes from
    a closed-form root and may be off by one through rounding.
    """
    n = np.maximum(np.asarray(guess, dtype=np.int64), 0)
    for _ in range(64):
        lower = (n > 0) & condition(np.maximum(n - 1, 0))
        higher = ~condition(n)
        if not (lower.any() or higher.any()):
            return n
        n = np.where(lower, n - 1, np.where(higher, n + 1, n))
    raise AssertionError("closed-form guess did not converge")  # pragma: no cover


def first_pass_minicycles(buffer):
    """n_1: mini-cycles of the second slow start until it reaches part (ii).

    Equation (paper D, eq. 7): n_1 is the smallest integer (>= 0) with::

        4 + (3/2)·n_1·(n_1 + 1) > 2^(n_B) − 2(B − 1)

    (In the second slow start each ACK releases three packets, bursts grow
    by three per mini-cycle: 4 + 3 + 6 + ... packets, eq. 11.)
    Validity: B >= 1 (whole); the analysis assumes W_th > 2 W_B.
    """
    b = _buffer(buffer)
    rhs = 2.0 ** np.asarray(overflow_minicycle(b)) - 2 * (b - 1)
    # n(n+1) > k with k = (rhs − 4)/1.5; positive root of n² + n − k.
    k = (rhs - 4) / 1.5
    guess = np.floor((-1 + np.sqrt(1 + 4 * np.maximum(k, 0))) / 2) + 1

    def holds(n):
        return 4 + 1.5 * n * (n + 1) > rhs

    return scalar_or_array(_smallest_integer(holds, guess))


def second_pass_minicycles(buffer):
    """n_2: mini-cycles after burst S until a burst contains new packets.

    Equation (paper D, eq. 8): n_2 is the smallest integer (>= 0) with::

        S·[(3/2)^(n_2+1) − 1] > B − 1

    Validity: B >= 1 (whole); the analysis assumes W_th > 2 W_B.
    """
    b = _buffer(buffer)
    s = np.asarray(second_burst(b), dtype=float)
    ratio = (b - 1) / s + 1
    guess = np.floor(np.log(ratio) / np.log(1.5))

    def holds(n):
        return s * (1.5 ** (n + 1) - 1) > b - 1

    return scalar_or_array(_smallest_integer(holds, guess))


def condition_9(buffer):
    """Condition (9) of Theorem 1: burst S overflows the buffer.

    Equation (paper D, eq. 9)::  2^(n_B) − (3/4)·n_1·(n_1 − 1) > 3B − 1

    If it holds (and W_th > 2 W_B) the second slow start loses a packet.
    The paper shows (Sec. 5) it never holds on the left edge of an n_1
    interval. Validity: B >= 1 (whole).
    """
    b = _buffer(buffer)
    n_b = np.asarray(overflow_minicycle(b))
    n_1 = np.asarray(first_pass_minicycles(b))
    return scalar_or_array(2.0**n_b - 0.75 * n_1 * (n_1 - 1) > 3 * b - 1)


def condition_10(buffer):
    """Condition (10) of Theorem 1: the burst N_2 with new packets overflows.

    Equation (paper D, eq. 10)::

        (2^(n_B−1) − B + 2)·[2·(3/2)^(n_2) − 1] > 2B − 1

    i.e. S·(2·(3/2)^n_2 − 1) > 2B − 1 (from N_2 − N_2³/2 > B, eqs. 13–14).
    Validity: B >= 1 (whole).
    """
    b = _buffer(buffer)
    s = np.asarray(second_burst(b), dtype=float)
    n_2 = np.asarray(second_pass_minicycles(b))
    return scalar_or_array(s * (2 * 1.5**n_2 - 1) > 2 * b - 1)


def condition_16(buffer, mu, tau):
    """Condition (16): the worst case for a triple slow start when W_B < W_th < 2 W_B.

    Equation (paper D, eq. 16): both of::

        (2^(n_B−1) − B + 2)·[2·(3/2)^(n_2) − 1] > 2B − 1          (= condition 10)
        4·(2^(n_B−1) − B + 2)·(3/2)^(n_2)      < μτ − 3B + 1

    The second line is W'_th = W_max/4 > 2^(n_B−1) + B − N_2³/2 + 1: the
    buffer must overflow before the second slow start reaches its threshold.
    The paper keeps parts (i)–(iii) unchanged (a worst case) and concludes
    (Sec. 6, Theorem 2) that the triple slow start in this regime "can be
    ignored". Validity: B >= 1 (whole), μ > 0, τ > 0.
    """
    b = _buffer(buffer)
    mu, tau = _path(mu, tau)
    s = np.asarray(second_burst(b), dtype=float)
    n_2 = np.asarray(second_pass_minicycles(b))
    return scalar_or_array(np.asarray(condition_10(b)) & (4 * s * 1.5**n_2 < mu * tau - 3 * b + 1))


def slowstart_regime(buffer, mu, tau):
    """Which analysis of paper D applies: compares W_th = W_max/2 with W_B.

    - ``"no-loss"``   W_th < W_B: slow start reaches its threshold before the
      buffer overflows (eq. 3's condition fails);
    - ``"theorem-2"`` W_B <= W_th <= 2 W_B: the first loss is detected at W_th,
      the second threshold W_th/2 < W_B (paper D, Sec. 6);
    - ``"theorem-1"`` W_th > 2 W_B: the first loss is detected at 2 W_B, the
      second threshold is W_B (paper D, Secs. 3–5).

    Validity: B >= 1 (whole), μ > 0, τ > 0. Returns str or an array of str.
    """
    w_th = np.asarray(max_window(buffer, mu, tau)) / 2
    w_b = np.asarray(overflow_window(buffer))
    regime = np.where(
        w_th > 2 * w_b, REGIME_THEOREM_1, np.where(w_th >= w_b, REGIME_THEOREM_2, REGIME_NO_LOSS)
    )
    return regime.item() if regime.ndim == 0 else regime


def slowstarts_per_cycle(buffer, mu, tau):
    """Predicted number of consecutive slow starts per TCP Tahoe cycle: 1, 2 or 3.

    Paper D, Theorems 1 and 2:

    - W_th < W_B (no loss in slow start): 1;
    - W_B <= W_th <= 2 W_B: 2 (Theorem 2: no triple slow start; condition (16)
      is the paper's worst case and is reported by :func:`explain_slowstart_cycle`
      but not counted);
    - W_th > 2 W_B: 3 if condition (9) or (10) holds, else 2 (Theorem 1).

    On paper D's path (μ = 366 packets/s, τ = 0.56 s) this gives 2 for B = 19,
    3 for B = 20 and 2 for B = 22 (its Figs. 3–5), and never 3 above B = 25.
    Validity: B >= 1 (whole), μ > 0, τ > 0. Returns int or an int array.
    """
    regime = np.asarray(slowstart_regime(buffer, mu, tau))
    triple = np.asarray(condition_9(buffer)) | np.asarray(condition_10(buffer))
    result = np.where(
        regime == REGIME_THEOREM_1, np.where(triple, 3, 2), np.where(regime == REGIME_THEOREM_2, 2, 1)
    ).astype(np.int64)
    return int(result) if result.ndim == 0 else result


def normalized_buffer(buffer, mu, tau):
    """β = B/(μτ + 1), the buffer relative to the bandwidth-delay product (paper D, eq. 3)."""
    b = _buffer(buffer)
    mu, tau = _path(mu, tau)
    return scalar_or_array(b / (mu * tau + 1))


def lakshman_madhow_double_slowstart(buffer, mu, tau):
    """Lakshman–Madhow condition for a loss in slow start (double slow start).

    Equation (paper D, eq. 3, after Lakshman and Madhow 1997)::

        β = B/(μτ + 1) <= 1/3

    Their fluid model uses W_B = 2B (eq. 2); paper D's refined W_B (eq. 5)
    moves the boundary (see :func:`slowstart_regime`).
    Validity: B >= 1 (whole), μ > 0, τ > 0.
    """
    return scalar_or_array(np.asarray(normalized_buffer(buffer, mu, tau)) <= 1 / 3)


def triple_slowstart_necessary(buffer, mu, tau):
    """Paper D's necessary condition for a cyclic triple slow start: β < 1/7.

    From W_th > 2 W_B with 2^(n_B) ≈ 2B (paper D, end of Sec. 6)::

        μτ + 1 > 7B   ⇔   B/(μτ + 1) < 1/7

    With B at the left end of eq. (6) the same inequality reads β < 1/11
    (:func:`triple_slowstart_surely_possible`). Validity as for
    :func:`normalized_buffer`.
    """
    return scalar_or_array(np.asarray(normalized_buffer(buffer, mu, tau)) < 1 / 7)


def triple_slowstart_surely_possible(buffer, mu, tau):
    """Paper D's lower bound: β = B/(μτ + 1) < 1/11 guarantees W_th > 2 W_B.

    Substituting B = 2^(n_B−2) (left edge of eq. 6) in W_th > 2 W_B gives
    μτ + 1 > 11B (paper D, end of Sec. 6); below it every B lies in the
    Theorem 1 regime, where triple slow starts recur cyclically.
    Validity as for :func:`normalized_buffer`.
    """
    return scalar_or_array(np.asarray(normalized_buffer(buffer, mu, tau)) < 1 / 11)


def cycle_throughput(w_start, w_end, rtt):
    """Throughput over one congestion-avoidance phase, packets/s.

    Equation (paper D, Sec. 7)::  Throughput = (W_S + W_E) / (2·RTT)

    Assumptions: RTT constant (queueing negligible against τ with a small
    buffer), window linear in time, packets sent in slow start ignored.
    Validity: 0 < W_S <= W_E, RTT > 0.
    """
    w_s = positive("w_start (packets)", w_start)
    w_e = positive("w_end (packets)", w_end)
    rtt = positive("rtt", rtt)
    if np.any(w_s > w_e):
        raise ValueError("w_start must not exceed w_end")
    return scalar_or_array((w_s + w_e) / (2 * rtt))


def congestion_avoidance_start(buffer, mu, tau):
    """W_S: the window at which congestion avoidance starts, in packets.

    Paper D, Sec. 7 and Sec. 6: triple slow start → W_B/2; double slow start
    in the Theorem 1 regime → W'_th = W_B; Theorem 2 regime → W_th/2 = W_max/4;
    no loss in slow start → W_th = W_max/2. Validity as for
    :func:`slowstarts_per_cycle`.
    """
    w_max = np.asarray(max_window(buffer, mu, tau))
    w_b = np.asarray(overflow_window(buffer))
    regime = np.asarray(slowstart_regime(buffer, mu, tau))
    n_ss = np.asarray(slowstarts_per_cycle(buffer, mu, tau))
    w_s = np.where(
        regime == REGIME_THEOREM_1,
        np.where(n_ss == 3, w_b / 2, w_b),
        np.where(regime == REGIME_THEOREM_2, w_max / 4, w_max / 2),
    )
    return scalar_or_array(w_s.astype(float))


def slowstart_cycle_throughput(buffer, mu, tau):
    """Throughput of the Tahoe cycle, (W_S + W_E)/(2·RTT) packets/s (paper D, Sec. 7).

    W_S from :func:`congestion_avoidance_start`, W_E = W_max (eq. 1),
    RTT = τ + 1/μ (propagation plus one service time; waiting neglected, as
    paper D, Sec. 7 does). Assumptions: those of :func:`cycle_throughput`;
    it ignores the packets sent in slow start and the window above μτ + 1
    that only fills the buffer, so it is a rough estimate, good for
    comparing neighbouring B. Validity as for :func:`slowstarts_per_cycle`.
    """
    mu_a, tau_a = _path(mu, tau)
    w_s = congestion_avoidance_start(buffer, mu, tau)
    w_e = max_window(buffer, mu, tau)
    return cycle_throughput(w_s, w_e, tau_a + 1 / mu_a)


def triple_slowstart_ratio(buffer, mu, tau):
    """R: throughput with a triple slow start over that with a double one.

    Equation (paper D, Sec. 7)::

        R = (W_B/2 + W_max)/(W_B + W_max) = (α + 2)/(2α + 2),   α = W_B/W_max

    R decreases with α; at the edge of the Theorem 1 regime (W_th = 2 W_B,
    α = 1/4) R = 0.9: up to 10 % of the throughput is lost.
    Validity: B >= 1 (whole), μ > 0, τ > 0; meaningful where W_th > 2 W_B.
    """
    alpha = np.asarray(overflow_window(buffer)) / np.asarray(max_window(buffer, mu, tau))
    return scalar_or_array((alpha + 2) / (2 * alpha + 2))


def explain_slowstart_cycle(buffer, mu, tau) -> dict:
    """All intermediate quantities of paper D for one (B, μ, τ), and why.

    Returns a dict with W_max, W_th, n_B, W_B, S, n_1, n_2, the conditions
    (3), (9), (10), (16), the 1/7 and 1/11 bounds, the regime, the predicted
    number of slow starts per cycle and a sentence giving the reason.
    Scalar inputs only. Validity as for :func:`slowstarts_per_cycle`.
    """
    for name, value in (("buffer", buffer), ("mu", mu), ("tau", tau)):
        if np.ndim(value):
            raise ValueError(f"explain_slowstart_cycle takes a scalar {name}")
    info = {
        "w_max": float(max_window(buffer, mu, tau)),
        "w_th": float(max_window(buffer, mu, tau)) / 2,
        "n_b": int(overflow_minicycle(buffer)),
        "w_b": int(overflow_window(buffer)),
        "s": int(second_burst(buffer)),
        "n_1": int(first_pass_minicycles(buffer)),
        "n_2": int(second_pass_minicycles(buffer)),
        "normalized_buffer": float(normalized_buffer(buffer, mu, tau)),
        "condition_3_lakshman_madhow": bool(lakshman_madhow_double_slowstart(buffer, mu, tau)),
        "condition_9": bool(condition_9(buffer)),
        "condition_10": bool(condition_10(buffer)),
        "condition_16": bool(condition_16(buffer, mu, tau)),
        "below_1_7": bool(triple_slowstart_necessary(buffer, mu, tau)),
        "below_1_11": bool(triple_slowstart_surely_possible(buffer, mu, tau)),
        "regime": str(slowstart_regime(buffer, mu, tau)),
        "slowstarts": slowstarts_per_cycle(buffer, mu, tau),
    }
    info["reason"] = _reason(info)
    return info


def _reason(i: dict) -> str:
    w = f"W_th = {i['w_th']:.2f}, W_B = {i['w_b']}"
    if i["regime"] == REGIME_NO_LOSS:
        return f"{w}: W_th < W_B, slow start ends before the buffer overflows (one slow start)"
    if i["regime"] == REGIME_THEOREM_2:
        extra = (
            "; condition (16) holds, so the paper's worst case allows a third one, "
            "which Theorem 2 discards"
            if i["condition_16"]
            else "; condition (16) fails"
        )
        return f"{w}: W_B <= W_th <= 2 W_B, Theorem 2: no triple slow start{extra}"
    if i["slowstarts"] == 3:
        which = " and ".join(c for c, k in (("(9)", "condition_9"), ("(10)", "condition_10")) if i[k])
        return f"{w}: W_th > 2 W_B and condition {which} holds (Theorem 1): the second slow start overflows"
    return f"{w}: W_th > 2 W_B but neither (9) nor (10) holds: the second slow start does not overflow"
