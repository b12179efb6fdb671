"""CUBIC's response function: mean window and throughput against the loss rate.

Source: L. Xu, S. Ha, I. Rhee, V. Goel, L. Eggert, "CUBIC for Fast and
Long-Distance Networks", RFC 9438, IETF, August 2023, Section 5 ("Discussion")
and Section 5.1 (Tables 1 and 2), with the Reno-friendly region of Section 4.3.

Model (RFC 9438, Section 5): a deterministic loss model, exactly 1/p packets
between two losses, so CUBIC always runs on the concave part of its window
curve W(t) = C·(t − K)³ + W_max. Each loss multiplies the window by β_cubic.
The average window is (RFC 9438, Section 5; Eq. 5 of RFC 8312)::

    AVG_W_cubic = [C·(3 + β)/(4·(1 − β))]^(1/4) · RTT^(3/4) / p^(3/4)

= 1.054·RTT^0.75/p^0.75 for C = 0.4, β = 0.7 (RFC 9438, Section 5.1). Where
Reno would do better (small RTT or large p), CUBIC's Reno-friendly region
(Section 4.3) makes it grow at least as fast as an AIMD flow with
α_cubic = 3(1 − β)/(1 + β) and the same β, whose mean window under the same
deterministic losses is that of Reno::

    AVG_W_aimd = sqrt(α(1 + β)/(2(1 − β)p)) = sqrt(3/(2p))   (α = α_cubic)

The response function is the larger of the two (RFC 9438, Section 5.1: its
tables list "CUBIC ... calculated using Eq. 6 and the CUBIC TCP-friendly
region"). RFC 9438's tables take Reno's window from RFC 3649 as 1.2/√p, which
rounds sqrt(3/2) = 1.2247; this module keeps sqrt(3/2).

Units: windows in packets (segments), RTT in seconds, throughput in packets/s.
Every function is vectorized over its arguments (numpy broadcasting).
"""

from __future__ import annotations

import numpy as np

from tcplab.models._domain import as_float_array, open_unit, positive, require, scalar_or_array

#: RFC 9438, Section 5.1: C SHOULD be 0.4 (segments/s³).
C_CUBIC = 0.4
#: RFC 9438, Section 4.6: β_cubic SHOULD be 0.7.
BETA_CUBIC = 0.7


def _loss_rate(p) -> np.ndarray:
    p = as_float_array("p (loss rate per packet)", p)
    require("p (loss rate per packet)", p, (p > 0) & (p < 1), "in the open interval (0, 1)")
    return p


def _inputs(p, rtt, c, beta):
    return (
        _loss_rate(p),
        positive("rtt (s)", rtt),
        positive("c (CUBIC's scaling constant C)", c),
        open_unit("beta (β_cubic)", beta),
    )


def cubic_region_window(p, rtt, c=C_CUBIC, beta=BETA_CUBIC):
    """CUBIC's average window on its cubic curve alone, in packets.

    Equation (RFC 9438, Section 5)::

        AVG_W_cubic = [C·(3 + β)/(4·(1 − β))]^0.25 · RTT^0.75 / p^0.75

    Assumptions: deterministic losses (1/p packets between losses), one
    window reduction per loss, the concave profile only, RTT constant.
    Validity: 0 < p < 1, RTT > 0, C > 0, 0 < β < 1.
    """
    p, rtt, c, beta = _inputs(p, rtt, c, beta)
    return scalar_or_array((c * (3 + beta) / (4 * (1 - beta))) ** 0.25 * rtt**0.75 / p**0.75)


def reno_friendly_window(p, beta=BETA_CUBIC):
    """The mean window of CUBIC's Reno-friendly estimate W_est, in packets.

    An AIMD flow that adds α = 3(1 − β)/(1 + β) packets per RTT and
    multiplies by β at each loss (RFC 9438, Section 4.3) has, with 1/p packets
    between losses, the mean window::

        sqrt(α(1 + β)/(2(1 − β)p)) = sqrt(3/(2p))

    whatever β: the same as Reno's (Mathis et al.). Validity: 0 < p < 1,
    0 < β < 1.
    """
    p = _loss_rate(p)
    beta = open_unit("beta (β_cubic)", beta)
    alpha = 3 * (1 - beta) / (1 + beta)
    return scalar_or_array(np.sqrt(alpha * (1 + beta) / (2 * (1 - beta) * p)))


def cubic_window(p, rtt, c=C_CUBIC, beta=BETA_CUBIC):
    """CUBIC's response function: average window in packets.

    max(AVG_W_cubic, AVG_W_aimd) (RFC 9438, Sections 5 and 5.1; see
    :func:`cubic_region_window` and :func:`reno_friendly_window`). With
    C = 0.4, β = 0.7, the cubic curve wins where p < RTT³/1.823 (RTT in s):
    for RTT = 0.1 s below p ≈ 5.5·10⁻⁴.

    Assumptions: one long-lived flow; losses deterministic, 1/p packets apart,
    each a window reduction (no timeouts, no slow start); RTT constant
    (no queueing), so the window is not limited by the path.
    Validity: 0 < p < 1, RTT > 0, C > 0, 0 < β < 1.
    """
    return scalar_or_array(
        np.maximum(np.asarray(cubic_region_window(p, rtt, c, beta)), np.asarray(reno_friendly_window(p, beta)))
    )


def cubic_throughput(p, rtt, c=C_CUBIC, beta=BETA_CUBIC):
    """CUBIC's response function as a throughput, packets/s: AVG_W / RTT.

    Assumptions and validity as for :func:`cubic_window`.
    """
    w = np.asarray(cubic_window(p, rtt, c, beta))
    return scalar_or_array(w / positive("rtt (s)", rtt))


def explain_cubic(p, rtt, c=C_CUBIC, beta=BETA_CUBIC) -> dict:
    """Both candidate windows and which one the response function takes."""
    w_cubic = float(cubic_region_window(p, rtt, c, beta))
    w_aimd = float(reno_friendly_window(p, beta))
    region = "cubic" if w_cubic >= w_aimd else "reno-friendly"
    return {
        "w_cubic": w_cubic,
        "w_reno_friendly": w_aimd,
        "region": region,
        "reason": f"AVG_W_cubic = {w_cubic:.4g}, AVG_W_aimd = {w_aimd:.4g}: the {region} region",
    }
