"""Router buffer sizing: the bandwidth-delay-product rule and the BDP/√N rule.

Source: G. Appenzeller, I. Keslassy, N. McKeown, "Sizing Router Buffers",
Proceedings of ACM SIGCOMM 2004, pp. 281–292, doi:10.1145/1015467.1015499
(Section 2 for one flow, Section 3 for many long-lived flows).

One TCP Reno flow halves its window at a loss; the link stays busy through
the halving only if the buffer holds what the window exceeds the pipe by, so
the buffer must be at least the bandwidth-delay product (the rule of thumb,
after Villamizar and Song 1994)::

    B = RTT × C                     (2·T_p·C in the paper's notation)

With N long-lived flows whose sawtooths are not synchronized, the sum of
their windows is near-Gaussian (central limit theorem) with a standard
deviation that shrinks as 1/√N relative to its mean, so a buffer √N times
smaller keeps the link as busy::

    B = RTT × C / √N

Assumptions: long-lived TCP Reno (AIMD ½) flows in congestion avoidance;
a FIFO drop-tail bottleneck; for the √N rule, N large (a backbone link
carries thousands) and the flows desynchronized (different RTTs, or enough flows that losses hit
few of them at a time). With few flows or synchronized losses the BDP rule is
the one that holds. RTT is the round-trip propagation delay (2·T_p) and C the
bottleneck rate, so B comes out in packets when C is in packets/s.
"""

from __future__ import annotations

import numpy as np

from tcplab.models._domain import count, positive, scalar_or_array


def bdp_buffer(rate, rtt):
    """The rule of thumb: B = RTT × C packets (Appenzeller et al. 2004, Sec. 2).

    Validity: C > 0 (packets/s), RTT > 0 (s).
    """
    c = positive("rate (bottleneck C, packets/s)", rate)
    rtt = positive("rtt (round-trip propagation delay, s)", rtt)
    return scalar_or_array(c * rtt)


def sqrt_n_buffer(rate, rtt, n):
    """The small-buffer rule: B = RTT × C / √N packets (Appenzeller et al. 2004, Sec. 3).

    Assumptions: N long-lived, desynchronized Reno flows (see the module
    docstring). Validity: C > 0, RTT > 0, N >= 1 (whole); N = 1 gives the BDP
    rule.
    """
    n = count("n (number of long-lived flows N)", n)
    return scalar_or_array(np.asarray(bdp_buffer(rate, rtt)) / np.sqrt(n))
