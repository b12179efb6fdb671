"""Paper B (TCP(α,β)), PFTK and Mathis: facts the closed forms must reproduce."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tcplab.models import gaimd

losses = st.floats(min_value=1e-6, max_value=0.3)
rtts = st.floats(min_value=1e-3, max_value=2.0)
t0s = st.floats(min_value=0.0, max_value=10.0)
betas = st.floats(min_value=0.01, max_value=0.99)


@pytest.mark.parametrize(
    "beta,alpha,tol",
    [(7 / 8, 0.31, 0.005), (0.75, 0.583, 0.0005), (0.25, 1.25, 1e-12), (0.5, 1.0, 1e-12)],
)
def test_friendly_alpha_matches_paper_b(beta, alpha, tol):
    # Paper B: TCP(0.31, 0.875), TCP(0.583, 0.75), TCP(1.25, 0.25), standard TCP(1, 0.5).
    assert gaimd.friendly_alpha(beta) == pytest.approx(alpha, abs=tol)


@given(beta=betas)
def test_smoother_decrease_needs_smaller_increase(beta):
    assert 0 < gaimd.friendly_alpha(min(beta + 0.005, 0.995)) < gaimd.friendly_alpha(beta) < 4 / 3


@given(p=losses, rtt=rtts, t0=t0s, b=st.sampled_from([1, 2]))
def test_pftk_approximation_is_gaimd_with_one_and_a_half(p, rtt, t0, b):
    # Padhye et al. eq. (33), written out here.
    expected = 1 / (rtt * math.sqrt(2 * b * p / 3) + t0 * min(1, 3 * math.sqrt(3 * b * p / 8)) * p * (1 + 32 * p**2))
    assert gaimd.pftk_throughput_approx(p, rtt, t0, b) == pytest.approx(expected, rel=1e-12)
    assert gaimd.gaimd_throughput(p, rtt, t0, b, alpha=1, beta=0.5) == pytest.approx(expected, rel=1e-12)


@given(p=losses, rtt=rtts, b=st.sampled_from([1, 2]))
def test_mathis_is_pftk_without_timeouts(p, rtt, b):
    assert gaimd.mathis_throughput(p, rtt, b) == pytest.approx(
        gaimd.pftk_throughput_approx(p, rtt, 0.0, b), rel=1e-12
    )
    assert gaimd.mathis_throughput(p, rtt, b) == pytest.approx(math.sqrt(3 / (2 * b * p)) / rtt, rel=1e-12)


@given(p=st.floats(min_value=1e-7, max_value=1e-4), rtt=rtts, b=st.sampled_from([1, 2]))
def test_full_pftk_agrees_with_approximation_at_small_loss(p, rtt, b):
    # Both tend to (1/RTT) sqrt(3/(2bp)); the relative gap is O(sqrt(p)) plus the
    # timeout term, which is O(p^1.5) against O(sqrt(p)) here (T0 = 4 RTT).
    full = gaimd.pftk_throughput(p, rtt, 4 * rtt, b)
    approx = gaimd.pftk_throughput_approx(p, rtt, 4 * rtt, b)
    assert full == pytest.approx(approx, rel=10 * math.sqrt(p) + 1e-9)


def test_full_pftk_by_hand_at_one_percent():
    # Padhye eqs. (13), (24), (28), (31), evaluated step by step for p=0.01, RTT=0.1, T0=0.4, b=1.
    p, rtt, t0, b = 0.01, 0.1, 0.4, 1
    q = 1 - p
    w = (2 + b) / (3 * b) + math.sqrt(8 * q / (3 * b * p) + ((2 + b) / (3 * b)) ** 2)
    qh = min(1, (1 - q**3) * (1 + q**3 * (1 - q ** (w - 3))) / (1 - q**w))
    f = 1 + p + 2 * p**2 + 4 * p**3 + 8 * p**4 + 16 * p**5 + 32 * p**6
    expected = (q / p + w + qh / q) / (rtt * (b / 2 * w + 1) + qh * t0 * f / q)
    assert gaimd.pftk_throughput(p, rtt, t0, b) == pytest.approx(expected, rel=1e-12)
    assert 100 < expected < 120  # sanity: about 111 packets/s


@given(p=losses, rtt=rtts, t0=t0s)
def test_window_limit_caps_throughput(p, rtt, t0):
    assert gaimd.pftk_throughput(p, rtt, t0, w_max=8) <= 8 / rtt * (1 + 1e-12)
    assert gaimd.gaimd_throughput(p, rtt, t0, w_max=8) <= 8 / rtt * (1 + 1e-12)


@given(p=st.floats(min_value=1e-6, max_value=0.2), rtt=rtts, t0=t0s, alpha=st.floats(0.1, 4), beta=betas)
def test_more_loss_means_less_throughput(p, rtt, t0, alpha, beta):
    lo = gaimd.gaimd_throughput(p, rtt, t0, alpha=alpha, beta=beta)
    hi = gaimd.gaimd_throughput(p * 1.5, rtt, t0, alpha=alpha, beta=beta)
    assert hi < lo


@given(p=losses, rtt=rtts, beta=betas)
def test_friendly_alpha_equalizes_the_timeout_term_but_not_the_sawtooth_term(p, rtt, beta):
    # With α = 4(1−β²)/3 the timeout-probability term of eq. (1) equals TCP's;
    # the congestion-avoidance term does not: without timeouts (T0 = 0) the ratio
    # to TCP(1,½) is 2(1+β)/3 (by hand: sqrt((2/3) / (3/(2(1+β)²)))).
    alpha = 4 * (1 - beta**2) / 3
    ratio = gaimd.gaimd_throughput(p, rtt, 0.0, alpha=alpha, beta=beta) / gaimd.gaimd_throughput(p, rtt, 0.0)
    assert ratio == pytest.approx(2 * (1 + beta) / 3, rel=1e-9)


def test_congestion_epoch_and_window_by_hand():
    # Paper B eq. (4): W = 20 packets, TCP(1, ½): 10 RTTs + 1; TCP(0.31, 7/8): 2.5/0.31 + 1.
    assert gaimd.congestion_epoch_rtts(20, 1, 0.5) == pytest.approx(11)
    assert gaimd.congestion_epoch_rtts(20, 0.31, 7 / 8) == pytest.approx(2.5 / 0.31 + 1)
    # Paper B eq. (5): 10 Mb/s of 1000-byte packets = 1250 pkt/s, RTT 0.07 s, N = 10.
    assert gaimd.fair_share_window(1250, 0.07, 10) == pytest.approx(8.75)
    got = gaimd.congestion_epoch_rtts(np.array([10, 20]), 1, 0.5)
    assert np.allclose(got, [6, 11])


@given(w=st.floats(1, 1e5), beta=betas)
def test_friendly_epoch_is_three_quarters_w_over_one_plus_beta(w, beta):
    # Eq. (4) with eq. (3): (1−β)W/α = 3W/(4(1+β)), by hand. So at the same W a
    # friendly smoother TCP has a SHORTER epoch (TCP(0.31, 7/8): 0.4W vs 0.5W RTTs),
    # although regaining a given ΔW takes it longer (ΔW/α, paper B Obs. 1).
    got = gaimd.congestion_epoch_rtts(w, gaimd.friendly_alpha(beta), beta)
    assert got == pytest.approx(3 * w / (4 * (1 + beta)) + 1, rel=1e-12)


@pytest.mark.parametrize(
    "call,match",
    [
        (lambda: gaimd.gaimd_throughput(-0.01, 0.1, 1), "p"),
        (lambda: gaimd.gaimd_throughput(0, 0.1, 1), "p"),
        (lambda: gaimd.pftk_throughput(1.0, 0.1, 1), "p"),
        (lambda: gaimd.mathis_throughput(0.01, 0), "rtt"),
        (lambda: gaimd.gaimd_throughput(0.01, 0.1, 1, beta=1.0), "beta"),
        (lambda: gaimd.gaimd_throughput(0.01, 0.1, 1, alpha=0), "alpha"),
        (lambda: gaimd.gaimd_throughput(0.01, 0.1, -1), "t0"),
        (lambda: gaimd.friendly_alpha(0), "beta"),
        (lambda: gaimd.fair_share_window(1000, 0.1, 0), "n"),
        (lambda: gaimd.congestion_epoch_rtts(-5), "w"),
    ],
)
def test_bad_inputs_are_refused_with_the_parameter_named(call, match):
    with pytest.raises(ValueError, match=match):
        call()
