"""The closed forms of CUBIC (RFC 9438), BBR against loss-based flows (Ware et al.,
IMC 2019), DCTCP (Alizadeh et al., SIGCOMM 2010) and buffer sizing (Appenzeller et al.,
SIGCOMM 2004), against numbers worked out by hand or printed in the sources."""

import math

import pytest

from tcplab.models import bbr, buffers, cubic, dctcp

# --- CUBIC: RFC 9438, Section 5.1, Tables 1 (RTT = 0.1 s) and 2 (RTT = 0.01 s) -------------

# (loss rate, RTT, C, the RFC's average window) for cells in CUBIC's own region: the
# table's integers are the formula rounded, so they hold within half a packet (or the
# table's 4-5 significant digits for the largest windows).
RFC9438_CUBIC_CELLS = [
    (1e-4, 0.1, 0.4, 187), (1e-5, 0.1, 0.4, 1054), (1e-6, 0.1, 0.4, 5926),
    (1e-7, 0.1, 0.4, 33325), (1e-8, 0.1, 0.4, 187400),
    (1e-3, 0.1, 4, 59), (1e-4, 0.1, 4, 333), (1e-5, 0.1, 4, 1874), (1e-6, 0.1, 4, 10538),
    (1e-8, 0.1, 4, 333250),
    (1e-5, 0.1, 0.04, 593), (1e-6, 0.1, 0.04, 3332), (1e-8, 0.1, 0.04, 105383),
    (1e-7, 0.01, 0.4, 5926), (1e-8, 0.01, 0.4, 33325), (1e-6, 0.01, 4, 1874),
]


@pytest.mark.parametrize("p,rtt,c,table", RFC9438_CUBIC_CELLS)
def test_cubic_window_matches_rfc9438_tables_in_the_cubic_region(p, rtt, c, table):
    assert cubic.cubic_window(p, rtt, c=c) == pytest.approx(table, abs=0.5, rel=2e-5)
    info = cubic.explain_cubic(p, rtt, c=c)
    assert info["region"] == "cubic"


# Cells in the Reno-friendly region: the RFC lists Reno's window from RFC 3649, 1.2/√p;
# the AIMD estimate with α = 3(1−β)/(1+β) has mean sqrt(3/(2p)) = 1.2247/√p, 2.06 % more.
RFC9438_FRIENDLY_CELLS = [(1e-2, 0.1, 12), (1e-3, 0.1, 38), (1e-4, 0.01, 120), (1e-5, 0.01, 379),
                          (1e-6, 0.01, 1200)]


@pytest.mark.parametrize("p,rtt,table", RFC9438_FRIENDLY_CELLS)
def test_cubic_window_in_the_reno_friendly_region(p, rtt, table):
    w = cubic.cubic_window(p, rtt)
    assert w == pytest.approx(math.sqrt(1.5 / p), rel=1e-12)
    assert w / table == pytest.approx(math.sqrt(1.5) / 1.2, abs=0.5 / table * 1.03 + 1e-9)
    assert cubic.explain_cubic(p, rtt)["region"] == "reno-friendly"


def test_cubic_constant_of_rfc9438_eq7():
    # "With C set to 0.4, Eq. 6 is reduced to AVG_W_cubic = 1.054 * (RTT^0.75) / (p^0.75)"
    assert cubic.cubic_region_window(1.0 - 1e-12, 1.0) == pytest.approx(1.054, abs=5e-4)
    assert (0.4 * 3.7 / 1.2) ** 0.25 == pytest.approx(1.0538, abs=1e-4)


@pytest.mark.parametrize("p,w", [(2.9e-4, 83.3), (1.4e-5, 833.3), (6.3e-7, 8333.3), (2.9e-8, 83333.3)])
def test_cubic_loss_rates_of_rfc9438_table3(p, w):
    # Table 3: the loss rate CUBIC needs for a throughput (1500-byte packets, RTT 0.1 s);
    # P is printed to two digits, up to ±3.6 % in p and so ±2.7 % in the window.
    assert cubic.cubic_window(p, 0.1) == pytest.approx(w, rel=0.03)


def test_cubic_throughput_is_window_over_rtt():
    # RTT 0.2 s, p = 1e-3: [0.4·3.7/1.2]^¼ · 0.2^¾ / 1e-3^¾ = 56.05 packets; Reno-friendly 38.73
    w = (0.4 * 3.7 / 1.2) ** 0.25 * 0.2**0.75 / 1e-3**0.75
    assert w == pytest.approx(56.05, abs=0.01)
    assert cubic.cubic_throughput(1e-3, 0.2) == pytest.approx(w / 0.2, rel=1e-12)
    assert cubic.reno_friendly_window(1e-3) == pytest.approx(38.73, abs=0.01)


def test_cubic_reno_friendly_mean_does_not_depend_on_beta():
    for beta in (0.5, 0.7, 0.8):
        alpha = 3 * (1 - beta) / (1 + beta)
        w_max = math.sqrt(2 * alpha / ((1 - beta**2) * 1e-3))  # (1−β²)W²/(2α) = 1/p packets
        assert cubic.reno_friendly_window(1e-3, beta) == pytest.approx((1 + beta) / 2 * w_max, rel=1e-12)


@pytest.mark.parametrize("kwargs,message", [
    ({"p": 0, "rtt": 0.1}, "p (loss rate per packet)"),
    ({"p": 1, "rtt": 0.1}, "p (loss rate per packet)"),
    ({"p": 0.01, "rtt": -1}, "rtt"),
    ({"p": 0.01, "rtt": 0.1, "beta": 1.0}, "beta"),
    ({"p": 0.01, "rtt": 0.1, "c": 0}, "c (CUBIC"),
])
def test_cubic_outside_its_domain_says_so(kwargs, message):
    with pytest.raises(ValueError, match=re_escape(message)):
        cubic.cubic_window(**kwargs)


def re_escape(s):
    import re

    return re.escape(s)


# --- BBR against loss-based flows: Ware et al., IMC 2019, eqs. (9)-(11) -------------------


def test_bbr_share_by_hand():
    # 10 Mb/s of 1000-byte packets (c = 1250 /s), l = 40 ms, X = 4: q = 200 packets.
    # eq. 9: p = 1/2 − 1/8 − 4/200 = 0.355; eq. 11 / d: (0.16 + 0.2 + 0.04)/10 = 0.04
    assert bbr.loss_based_share(4, 1250, 0.04) == pytest.approx(0.355, abs=1e-12)
    assert bbr.probe_rtt_fraction(4, 1250, 0.04) == pytest.approx(0.04, abs=1e-12)
    assert bbr.bbr_share(4, 1250, 0.04) == pytest.approx(0.645 * 0.96, abs=1e-12)
    # two BBR flows: 4N = 8 packets queued in probe-rtt; p = 0.375 − 0.04
    assert bbr.loss_based_share(4, 1250, 0.04, n_bbr=2) == pytest.approx(0.335, abs=1e-12)


def test_bbr_simple_model_is_half_the_link_with_deep_buffers():
    # the simple model (eq. 5): q ≫ c·l and q ≫ 4N give p = 1/2 (probe-rtt aside)
    assert bbr.loss_based_share(1e4, 1e6, 1e-3) == pytest.approx(0.5, abs=1e-4)


def test_bbr_takes_the_link_when_its_cap_exceeds_link_and_buffer():
    # X = 1: 1/2 − 1/2 − 4N/q < 0, so p = 0 and only probe-rtt is left
    assert bbr.loss_based_share(1, 1250, 0.04) == 0.0
    assert bbr.bbr_share(1, 1250, 0.04) == pytest.approx(1 - (0.04 + 0.2 + 0.04) / 10, abs=1e-12)
    assert "caveat" not in bbr.explain_bbr_share(1, 1250, 0.04)["reason"]
    assert "outside the model's domain" in bbr.explain_bbr_share(0.5, 1250, 0.04)["reason"]


def test_bbr_rtt_estimate_is_the_fixed_point_of_the_cap():
    # At the solution the cap equals BBR's in flight: 2(1−p)c·RTT_est = (1−p)(q + c·l)
    info = bbr.explain_bbr_share(8, 1250, 0.04)
    assert 2 * 1250 * info["rtt_est"] == pytest.approx(info["buffer_packets"] + 1250 * 0.04, rel=1e-12)


@pytest.mark.parametrize("kwargs,message", [
    ({"buffer_bdp": 0, "rate": 1250, "rtt": 0.04}, "buffer_bdp"),
    ({"buffer_bdp": 4, "rate": 1250, "rtt": 0.04, "n_bbr": 0}, "n_bbr"),
    ({"buffer_bdp": 4, "rate": 1250, "rtt": 0.04, "n_bbr": 1.5}, "n_bbr"),
    ({"buffer_bdp": 100, "rate": 1250, "rtt": 0.1}, "probe-rtt would take the whole 10 s"),
])
def test_bbr_outside_its_domain_says_so(kwargs, message):
    with pytest.raises(ValueError, match=re_escape(message)):
        bbr.bbr_share(**kwargs)


# --- DCTCP: Alizadeh et al., SIGCOMM 2010, Sec. 3.3 -------------------------------------

# 10 Gb/s of 1500-byte packets, RTT 100 µs: C·RTT = 83.33 packets
C_10G = 10e9 / (8 * 1500)
RTT_DC = 100e-6


def test_dctcp_steady_state_by_hand():
    # K = 20, N = 2: W* = (83.33 + 20)/2 = 51.67, α = sqrt(2/51.67) = 0.1967
    w = (C_10G * RTT_DC + 20) / 2
    assert w == pytest.approx(51.667, abs=1e-3)
    assert dctcp.window_at_threshold(C_10G, RTT_DC, 20, 2) == pytest.approx(w, rel=1e-12)
    assert dctcp.steady_state_alpha(C_10G, RTT_DC, 20, 2) == pytest.approx(0.19675, abs=1e-5)
    # D = (W* + 1)α/2 = 5.181, which the analysis takes as sqrt(W*/2) = 5.083 (W* large)
    assert (w + 1) * 0.196748 / 2 == pytest.approx(5.181, abs=1e-3)
    d = math.sqrt(w / 2)
    assert d == pytest.approx(5.083, abs=1e-3)
    assert dctcp.window_amplitude(C_10G, RTT_DC, 20, 2) == pytest.approx(d, rel=1e-12)
    # A = N·D = ½·sqrt(2N(C·RTT + K)) = 10.17 packets; Q_max = K + N; Q_min = 22 − 10.17
    a = 0.5 * math.sqrt(2 * 2 * (C_10G * RTT_DC + 20))
    assert dctcp.queue_amplitude(C_10G, RTT_DC, 20, 2) == pytest.approx(a, rel=1e-12)
    assert dctcp.queue_max(C_10G, RTT_DC, 20, 2) == 22
    assert dctcp.queue_min(C_10G, RTT_DC, 20, 2) == pytest.approx(22 - a, rel=1e-12)
    assert 22 - a == pytest.approx(11.83, abs=0.01)


def test_dctcp_alpha_approximates_the_exact_root():
    # α²(1 − α/4) = (2W* + 1)/(W* + 1)², solved by bisection
    for n, k in ((1, 0), (2, 20), (1, 300)):
        w = (C_10G * RTT_DC + k) / n
        lo, hi = 0.0, 1.0
        for _ in range(100):
            mid = (lo + hi) / 2
            if mid**2 * (1 - mid / 4) < (2 * w + 1) / (w + 1) ** 2:
                lo = mid
            else:
                hi = mid
        assert dctcp.steady_state_alpha(C_10G, RTT_DC, k, n) == pytest.approx(lo, rel=0.05)


def test_dctcp_marking_threshold_guideline():
    bdp = C_10G * RTT_DC
    assert dctcp.min_marking_threshold(C_10G, RTT_DC) == pytest.approx(bdp / 7, rel=1e-12)
    n_values = [n for n in range(1, 200) if (bdp + 0) / n >= 2]
    # comfortably above the guideline the queue never empties for any N; well below, some N empties it
    k_ok = 1.01 * bdp / 7
    assert all(dctcp.full_throughput(C_10G, RTT_DC, k_ok, n) for n in n_values if (bdp + k_ok) / n >= 2)
    k_low = 0.5 * bdp / 7
    assert not all(dctcp.full_throughput(C_10G, RTT_DC, k_low, n) for n in n_values if (bdp + k_low) / n >= 2)
    # the worst N is near (C·RTT + K)/8, where Q_min ≈ K − (C·RTT + K)/8
    worst = round((bdp + k_low) / 8)
    assert dctcp.queue_min(C_10G, RTT_DC, k_low, worst) == pytest.approx(k_low - (bdp + k_low) / 8, abs=0.1)


@pytest.mark.parametrize("kwargs,message", [
    ({"rate": C_10G, "rtt": RTT_DC, "k": -1}, "k (marking threshold"),
    ({"rate": C_10G, "rtt": RTT_DC, "k": 10, "n": 0}, "n (number of flows"),
    ({"rate": 100, "rtt": 0.01, "k": 0}, "W* = (C·RTT + K)/N"),
])
def test_dctcp_outside_its_domain_says_so(kwargs, message):
    with pytest.raises(ValueError, match=re_escape(message)):
        dctcp.queue_min(**kwargs)


# --- Buffer sizing: Appenzeller, Keslassy, McKeown, SIGCOMM 2004 --------------------------


def test_buffer_rules_with_the_papers_examples():
    # abstract: "a 10Gb/s router linecard needs approximately 250ms × 10Gb/s = 2.5Gbits"
    assert buffers.bdp_buffer(10e9, 0.25) == pytest.approx(2.5e9, rel=1e-12)
    # "a 10Gb/s link carrying 50,000 flows requires only 10Mbits of buffering" (2.5 Gbit/√50000 = 11.2)
    assert buffers.sqrt_n_buffer(10e9, 0.25, 50_000) == pytest.approx(2.5e9 / 223.607, rel=1e-5)
    # "A 2.5Gb/s link carrying 10,000 flows could reduce its buffers by 99%"
    assert buffers.sqrt_n_buffer(2.5e9, 0.25, 10_000) / buffers.bdp_buffer(2.5e9, 0.25) == pytest.approx(0.01)
    assert buffers.sqrt_n_buffer(1250, 0.1, 1) == buffers.bdp_buffer(1250, 0.1)


def test_buffer_rules_outside_their_domain_say_so():
    with pytest.raises(ValueError, match="n \\(number of long-lived flows"):
        buffers.sqrt_n_buffer(1250, 0.1, 0)
    with pytest.raises(ValueError, match="rtt"):
        buffers.bdp_buffer(1250, 0)
