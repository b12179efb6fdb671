"""Paper D (Barakat–Altman): Tahoe with a small buffer and a large bandwidth-delay product.

The path of paper D, Sec. 8: μ = 366 packets/s (1.5 Mb/s, 512-byte packets),
τ = 0.56 s, B = packets that can wait (see docs/ns2.md).
Expected values are the paper's statements or computed by hand from its
equations (written out in each test), never by calling the code under test.
"""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tcplab.models import slowstart as ss

MU, TAU = 366.0, 0.56
buffers = st.integers(min_value=1, max_value=100_000)
mus = st.floats(min_value=10, max_value=1e5)
taus = st.floats(min_value=0.001, max_value=2.0)


# --- the paper's own answers -------------------------------------------------------------


@pytest.mark.parametrize("buffer,expected", [(19, 2), (20, 3), (22, 2)])
def test_figures_3_to_5_two_three_two_slow_starts(buffer, expected):
    assert ss.slowstarts_per_cycle(buffer, MU, TAU) == expected


def test_triple_slow_start_recurs_up_to_about_26_and_never_above():
    b = np.arange(1, 2001)
    n = ss.slowstarts_per_cycle(b, MU, TAU)
    triple = b[n == 3]
    assert 24 <= triple.max() <= 26
    assert len(triple) >= 3  # it appears cyclically, not once
    assert np.all(n[b > 26] <= 2)


def test_threshold_above_twice_the_overflow_window_exactly_below_26():
    # Paper D, Sec. 8: "a buffer capacity smaller than 26 packets is needed to get
    # W_th > 2 W_B"; for B from 27 to 64, W_B < W_th < 2 W_B.
    # By hand for n_B = 6 (17 <= B <= 32): (B + 205.96)/2 > 2(32 + B)  <=>  B < 25.99.
    b = np.arange(17, 65)
    regime = ss.slowstart_regime(b, MU, TAU)
    assert set(regime[b <= 25]) == {ss.REGIME_THEOREM_1}
    assert set(regime[b >= 26]) == {ss.REGIME_THEOREM_2}


def test_condition_16_never_holds_on_the_papers_path():
    # Theorem 2: no triple slow start once W_th < 2 W_B (B >= 26 here).
    b = np.arange(26, 65)
    assert not np.any(ss.condition_16(b, MU, TAU))


def test_b_equal_20_by_hand():
    # n_B: 16 < 20 <= 32 -> 6; W_B = 32 + 20 = 52; S = 32 - 20 + 2 = 14;
    # n_2: 14(1.5^2 - 1) = 17.5 <= 19 < 14(1.5^3 - 1) = 33.25 -> 2;
    # (10): 14 (2 * 2.25 - 1) = 49 > 39.
    info = ss.explain_slowstart_cycle(20, MU, TAU)
    assert (info["n_b"], info["w_b"], info["s"], info["n_2"]) == (6, 52, 14, 2)
    assert info["w_max"] == pytest.approx(20 + 366 * 0.56 + 1)
    assert info["condition_10"] and info["slowstarts"] == 3


def test_b_equal_19_and_22_by_hand():
    # B = 19: S = 15, n_2 = 1 (15 * 1.25 = 18.75 > 18), (10): 15 * 2 = 30 > 37 fails;
    #         n_1 = 4 (4 + 30 > 64 - 36 = 28 > 4 + 18), (9): 64 - 9 = 55 > 56 fails.
    # B = 22: S = 12, n_2 = 2, (10): 12 * 3.5 = 42 > 43 fails; (9): 55 > 65 fails.
    for b, s, n2 in ((19, 15, 1), (22, 12, 2)):
        info = ss.explain_slowstart_cycle(b, MU, TAU)
        assert (info["s"], info["n_2"], info["n_1"]) == (s, n2, 4)
        assert not info["condition_9"] and not info["condition_10"]


def test_condition_9_holds_just_above_a_power_of_two():
    # Paper D, Sec. 5 says (9) never holds on the left edge of an n_1 interval, so
    # every triple comes from (10). By hand, B = 17 and 18 (n_B = 6, n_1 = 4):
    # 2^6 - (3/4)*4*3 = 55 > 3B - 1 = 50 and 53: (9) holds, and at B = 18 alone,
    # since (10) gives 16 * 2 = 32 > 35 false. The paper's argument misses the n_1
    # interval that starts with an n_B interval.
    assert ss.condition_9(17) and ss.condition_9(18)
    assert not ss.condition_10(18)
    assert ss.slowstarts_per_cycle(18, MU, TAU) == 3


def test_ten_percent_is_the_largest_throughput_loss():
    # Paper D, Sec. 7: R = (α + 2)/(2α + 2) is 0.9 at α = 1/4 (W_th = 2 W_B).
    assert (0.25 + 2) / (2 * 0.25 + 2) == pytest.approx(0.9)
    b = np.arange(1, 26)
    r = ss.triple_slowstart_ratio(b, MU, TAU)
    assert np.all((r >= 0.9) & (r < 1))


def test_throughput_dips_where_the_triple_slow_start_appears():
    t = {b: ss.slowstart_cycle_throughput(b, MU, TAU) for b in (19, 20, 22, 25, 26)}
    assert t[20] < t[19] < t[22]
    assert t[25] < t[26]
    # by hand, B = 20: W_S = W_B/2 = 26, W_E = 225.96, RTT = 0.56 + 1/366
    assert t[20] == pytest.approx((26 + 225.96) / (2 * (0.56 + 1 / 366)), rel=1e-9)
    # the dip at 25 -> 26 is about 10 %, as Fig. 2 shows
    assert 0.85 < t[25] / t[26] < 0.92


# --- the equations' properties ---------------------------------------------------------------


@given(b=buffers)
def test_n_b_brackets_the_buffer(b):
    n_b = ss.overflow_minicycle(b)
    assert 2 ** (n_b - 2) < b <= 2 ** (n_b - 1)
    assert ss.overflow_window(b) == 2 ** (n_b - 1) + b


@given(k=st.integers(min_value=0, max_value=30))
def test_overflow_window_is_lakshman_madhows_2b_for_powers_of_two(k):
    assert ss.overflow_window(2**k) == 2 * 2**k


@given(b=st.integers(min_value=2, max_value=100_000))
def test_n1_and_n2_are_the_smallest_integers_of_eqs_7_and_8(b):
    n_b = math.ceil(math.log2(b)) + 1
    s = 2 ** (n_b - 1) - b + 2
    n1, n2 = ss.first_pass_minicycles(b), ss.second_pass_minicycles(b)
    eq7 = lambda n: 4 + 1.5 * n * (n + 1) > 2**n_b - 2 * (b - 1)  # noqa: E731
    eq8 = lambda n: s * (1.5 ** (n + 1) - 1) > b - 1  # noqa: E731
    assert eq7(n1) and (n1 == 0 or not eq7(n1 - 1))
    assert eq8(n2) and (n2 == 0 or not eq8(n2 - 1))
    assert 1 < s < b + 2  # used in paper D, Sec. 5


@given(b=st.integers(min_value=2, max_value=100_000))
def test_conditions_weaken_as_b_grows_inside_their_intervals(b):
    # Paper D, Sec. 5: inside an n_1 (n_2) interval a larger B moves away from (9) ((10)).
    same_nb = ss.overflow_minicycle(b) == ss.overflow_minicycle(b + 1)
    if same_nb and ss.first_pass_minicycles(b) == ss.first_pass_minicycles(b + 1):
        assert ss.condition_9(b) or not ss.condition_9(b + 1)
    if same_nb and ss.second_pass_minicycles(b) == ss.second_pass_minicycles(b + 1):
        assert ss.condition_10(b) or not ss.condition_10(b + 1)


@given(b=buffers, mu=mus, tau=taus)
def test_triple_only_below_one_seventh_and_surely_in_regime_below_one_eleventh(b, mu, tau):
    beta = b / (mu * tau + 1)
    n = ss.slowstarts_per_cycle(b, mu, tau)
    if n == 3:
        assert beta < 1 / 7
    if beta < 1 / 11:
        assert ss.slowstart_regime(b, mu, tau) == ss.REGIME_THEOREM_1
    if beta > 1 / 3 + 1e-12:
        assert n == 1  # no loss in slow start, whichever W_B (W_B >= 2B... > W_th)
    assert ss.lakshman_madhow_double_slowstart(b, mu, tau) == (beta <= 1 / 3)


@given(b=buffers, mu=mus, tau=taus)
def test_triple_cycles_lose_at_most_ten_percent(b, mu, tau):
    if ss.slowstart_regime(b, mu, tau) == ss.REGIME_THEOREM_1:
        assert 0.9 - 1e-12 <= ss.triple_slowstart_ratio(b, mu, tau) < 1


def test_vectorized_over_buffer_mu_and_tau():
    got = ss.slowstarts_per_cycle(np.array([19, 20, 22]), np.array([366.0]), 0.56)
    assert list(got) == [2, 3, 2]
    assert ss.slowstarts_per_cycle(20, [366.0, 366.0], [0.56, 0.56]).tolist() == [3, 3]


@pytest.mark.parametrize(
    "args,match",
    [((0, MU, TAU), "buffer"), ((2.5, MU, TAU), "buffer"), ((20, 0, TAU), "mu"), ((20, MU, -1), "tau")],
)
def test_bad_inputs_are_refused(args, match):
    with pytest.raises(ValueError, match=match):
        ss.slowstarts_per_cycle(*args)
