"""Paper B's closed forms on the dumbbell's numbers (`runs.setup`, from the
scenario's Plan): round-trip times, eq. 1 (GAIMD) as goodput, the regrowth after
a handoff (Observation 2), the Chiu–Jain convergence and the refill time after
departures (Observations 1, 3). Separate from `claims` because the claims, the
figures and the tests all use them."""

from __future__ import annotations

import numpy as np

from tcplab.models import gaimd
from tcplab.reproduce.alpha_beta.runs import ACK, setup


def rtt_min(rate_bps: float) -> float:
    """Round trip without queueing: propagation plus one data packet and one ack
    serialized on each of the three hops."""
    s = setup()
    return s.prop_rtt + 3 * (s.packet + ACK) * 8 / rate_bps


def rtt_full(rate_bps: float) -> float:
    """Round trip with the bottleneck buffer full."""
    s = setup()
    return rtt_min(rate_bps) + s.buffer * s.packet * 8 / rate_bps


def t0_of(rtt: float) -> float:
    """Retransmission timeout for eq. 1: ns-2's srtt + 4·rttvar with rttvar ≈ RTT/4
    (its initial ratio), at least minrto_ = 0.2 s."""
    return max(setup().min_rto, 2 * rtt)


def payload_capacity_bps(rate_bps: float) -> float:
    s = setup()
    return rate_bps * s.payload / s.packet


def eq1_goodput_bps(p, rtt, alpha, beta, t0=None) -> np.ndarray:
    """GAIMD eq. 1 for one flow, as goodput in bit/s (NaN where p ≤ 0)."""
    p = np.atleast_1d(np.asarray(p, dtype=float))
    out = np.full(p.shape, np.nan)
    ok = (p > 0) & np.isfinite(p)
    if ok.any():
        t0 = t0_of(rtt) if t0 is None else t0
        out[ok] = (np.asarray(gaimd.gaimd_throughput(np.minimum(p[ok], 1.0), rtt, t0, alpha=alpha, beta=beta))
                   * setup().payload * 8)
    return out


def regrowth_model(alpha: float, rate_bps: float, tau: np.ndarray, w0: float = 2.0) -> np.ndarray:
    """Goodput (bit/s) τ seconds after a handoff for one flow alone on the path, by
    paper B's Observation 2: the window restarts at 2 (ssthresh 2 after the
    repeated timeouts of a long outage) and grows α per RTT; capped at the link."""
    rtt = rtt_min(rate_bps)
    w = w0 + alpha * np.asarray(tau, float) / rtt
    return np.minimum(w * setup().payload * 8 / rtt, payload_capacity_bps(rate_bps))


def chiu_jain_seconds(p, rate_bps: float, n: int, eps: float = 0.1) -> float:
    """Time for the gap between two AIMD flows to shrink by `eps` (Chiu–Jain: each
    decrease multiplies it by β) with epochs of eq. 4 at the window of eq. 5."""
    rtt = (rtt_min(rate_bps) + rtt_full(rate_bps)) / 2
    w = float(gaimd.fair_share_window(rate_bps / (setup().packet * 8), rtt, n))
    epochs_needed = np.log(eps) / np.log(p[1])
    return float(epochs_needed * gaimd.congestion_epoch_rtts(w, p[0], p[1]) * rtt)


def refill_seconds(p, rate_bps: float, remaining: int) -> float:
    """Time for `remaining` flows to take over the window half the flows left behind:
    the aggregate window must grow by (B·RTT + buffer)/2 at remaining·α per RTT
    (Observations 1 and 3)."""
    s = setup()
    rtt = (rtt_min(rate_bps) + rtt_full(rate_bps)) / 2
    gap = (rate_bps / (s.packet * 8) * rtt_min(rate_bps) + s.buffer) / 2
    return float(gap / (remaining * p[0]) * rtt)


def bdp_buffer(rate_bps: float) -> int:
    """One bandwidth-delay product in packets (the sensitivity runs' buffer)."""
    s = setup()
    return int(round(rate_bps / (s.packet * 8) * s.prop_rtt))
