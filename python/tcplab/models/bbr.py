"""BBR's share of a bottleneck shared with loss-based flows: the in-flight-cap model.

Source: R. Ware, M. K. Mukerjee, S. Seshan, J. Sherry, "Modeling BBR's
Interactions with Loss-Based Congestion Control", Proceedings of the Internet
Measurement Conference (IMC '19), ACM, 2019, pp. 137–143,
doi:10.1145/3355369.3355604: the simple model (eqs. 1–5) and the extended
model (eqs. 6–11).

Why BBR (version 1) ends up window-limited: in probe-bw it paces at 5/4 of
its bandwidth estimate for one round, pushing loss-based flows (Reno, CUBIC)
out of a full FIFO queue, until its data in flight meets its in-flight cap::

    inflight_cap = 2 · BtlBw_est · RTT_est                                (eq. 1)

Notation: c the bottleneck in packets/s, l the round-trip propagation delay
(s), q the buffer in packets, X = q/(c·l) the buffer in BDPs, N the number of
BBR flows, p the loss-based flows' share of what is in flight (link and
queue; their share of the throughput, since the queue is FIFO and full).
The BBR flows' estimate of the bandwidth is their share, (1 − p)·c (eq. 2);
their minimum RTT comes from probe-rtt, where each drops to 4 packets, so
the queue then holds the loss-based flows' p·q packets and the BBR flows' 4N::

    RTT_est = (p·q + 4N)/c + l                                            (eq. 7)

BBR's in flight, (1 − p)(q + c·l), meets the cap 2(1 − p)c·RTT_est where::

    p = 1/2 − 1/(2X) − 4N/q                                               (eq. 9)

(the simple model, eq. 5: q ≫ c·l and 4N ≪ q give p = 1/2: one BBR flow takes
half the link against any number of loss-based flows). p < 0 means the cap
exceeds link plus buffer: BBR takes everything, p = 0. Probe-rtt costs BBR its
sending: about every 10 s it waits for the full queue to drain (q/c), holds
200 ms and one round trip (l), so over a long run::

    BBR's fraction = (1 − p)·(1 − (q/c + 0.2 + l)/10)                    (eqs. 10, 11)

(eq. 11 gives the time in probe-rtt over d seconds as (q/c + 0.2 + l)·d/10;
d cancels.) The number of loss-based flows appears nowhere: the model's
central finding.

Assumptions (the paper's): long-lived flows with data always to send; the
same propagation RTT for every flow; a FIFO drop-tail bottleneck whose queue
is typically full (the loss-based flows keep it so: deep buffers, X of about
1 and more); BBR flows synchronized, in probe-rtt together every 10 s; fixed
packet size; BBR version 1 (Linux's tcp_bbr.c). The paper reports median
errors of 5 % against CUBIC and 8 % against Reno in its testbed.
"""

from __future__ import annotations

import numpy as np

from tcplab.models._domain import count, positive, require, scalar_or_array

#: BBR v1 (tcp_bbr.c): probe-rtt every 10 s, held for 200 ms, 4 packets in flight.
PROBE_RTT_INTERVAL_S = 10.0
PROBE_RTT_HOLD_S = 0.2
PROBE_RTT_CWND = 4


def _inputs(buffer_bdp, rate, rtt, n_bbr):
    x = positive("buffer_bdp (buffer in BDPs, X)", buffer_bdp)
    c = positive("rate (bottleneck, packets/s)", rate)
    l = positive("rtt (round-trip propagation delay, s)", rtt)
    n = count("n_bbr (number of BBR flows)", n_bbr)
    return x, c, l, n


def loss_based_share(buffer_bdp, rate, rtt, n_bbr=1):
    """p: the loss-based flows' share of the link when BBR is at its cap (eq. 9).

    Equation (Ware et al. 2019, eq. 9)::

        p = max(0, 1/2 − 1/(2X) − 4N/q),   q = X·c·l

    Assumptions: see the module docstring. Validity: X > 0, c > 0, l > 0,
    N >= 1 (whole); meaningful where the queue is typically full, X >~ 1.
    """
    x, c, l, n = _inputs(buffer_bdp, rate, rtt, n_bbr)
    q = x * c * l
    return scalar_or_array(np.maximum(0.0, 0.5 - 1 / (2 * x) - PROBE_RTT_CWND * n / q))


def probe_rtt_fraction(buffer_bdp, rate, rtt):
    """Fraction of the time BBR spends in probe-rtt, not sending (eq. 11 / d).

    Equation (Ware et al. 2019, eq. 11 divided by the duration d)::

        (q/c + 0.2 + l)/10 = (X·l + 0.2 + l)/10

    Validity: X > 0, c > 0, l > 0; the result must stay below 1
    (X·l + l < 9.8 s), else the model has no answer.
    """
    x, c, l, _ = _inputs(buffer_bdp, rate, rtt, 1)
    frac = (x * c * l / c + PROBE_RTT_HOLD_S + l) / PROBE_RTT_INTERVAL_S
    require("buffer_bdp·rtt + rtt (probe-rtt drain, s)", x * l + l, frac < 1,
            "below 9.8 s (probe-rtt would take the whole 10 s period)")
    return scalar_or_array(frac)


def bbr_share(buffer_bdp, rate, rtt, n_bbr=1):
    """The BBR flows' aggregate fraction of the bottleneck (eqs. 9–11).

    Equation (Ware et al. 2019, eq. 10 with eqs. 9 and 11)::

        BBR fraction = (1 − p)·(1 − (q/c + 0.2 + l)/10)

    Independent of the number of loss-based flows (at least one).
    Assumptions: see the module docstring. Validity: as for
    :func:`loss_based_share` and :func:`probe_rtt_fraction`.
    """
    p = np.asarray(loss_based_share(buffer_bdp, rate, rtt, n_bbr))
    probe = np.asarray(probe_rtt_fraction(buffer_bdp, rate, rtt))
    return scalar_or_array((1 - p) * (1 - probe))


def explain_bbr_share(buffer_bdp, rate, rtt, n_bbr=1) -> dict:
    """The quantities behind :func:`bbr_share` for one input (scalar inputs)."""
    q = float(buffer_bdp) * float(rate) * float(rtt)
    p = float(loss_based_share(buffer_bdp, rate, rtt, n_bbr))
    probe = float(probe_rtt_fraction(buffer_bdp, rate, rtt))
    rtt_est = (p * q + PROBE_RTT_CWND * int(n_bbr)) / float(rate) + float(rtt)
    capped = p > 0
    caveat = ("; caveat: a buffer under 1 BDP is outside the model's domain (it assumes the "
              "loss-based flows keep the queue full)" if float(buffer_bdp) < 1 else "")
    return {
        "buffer_packets": q,
        "loss_based_share": p,
        "rtt_est": rtt_est,
        "probe_rtt_fraction": probe,
        "reason": (
            f"in-flight cap 2·(1−p)·c·RTT_est with RTT_est = {rtt_est * 1e3:.4g} ms meets BBR's "
            f"in flight at p = {p:.4g}; probe-rtt idles BBR {probe:.1%} of the time"
            if capped
            else f"the in-flight cap exceeds link plus buffer: BBR takes the link (p = 0); "
                 f"probe-rtt idles it {probe:.1%} of the time"
        ) + caveat,
    }
