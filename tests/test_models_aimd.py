"""Paper C (parallel AIMD connections): facts the closed forms must reproduce.

Expected values are the paper's numbers, hand computations, or an independent
event-by-event run of the paper's hybrid model (eqs. 2-4) written here, never
the code under test.
"""

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tcplab.models import aimd

betas = st.floats(min_value=0.01, max_value=0.99)
ns = st.integers(min_value=1, max_value=10_000)


# --- Theorem 1 and eq. (6): the paper's numbers -----------------------------------------


def test_one_tcp_connection_uses_three_quarters_of_the_link():
    assert aimd.aimd_one_utilization(1, 0.5) == pytest.approx(0.75, abs=1e-15)


def test_three_connections_reach_ninety_percent_and_six_almost_ninety_five():
    # Paper C, Sec. II.B.1: "3 connections would already yield 90%", "6 sockets, almost 95%".
    assert aimd.aimd_one_utilization(3, 0.5) >= 0.9 - 1e-15
    assert aimd.aimd_one_utilization(6, 0.5) == pytest.approx(0.95, abs=0.005)


def test_two_tcp_connections_by_hand():
    # 1 - 1/(1 + 2*3) = 6/7
    assert aimd.aimd_one_utilization(2, 0.5) == pytest.approx(6 / 7, rel=1e-15)


def test_vectorized_over_n():
    got = aimd.aimd_one_utilization(np.arange(1, 5), 0.5)
    assert np.allclose(got, [3 / 4, 6 / 7, 9 / 10, 12 / 13], rtol=1e-15)


@given(beta=betas)
def test_one_connection_is_one_plus_beta_over_two(beta):
    assert aimd.aimd_one_utilization(1, beta) == pytest.approx((1 + beta) / 2, rel=1e-12)


@given(n=ns, beta=betas)
def test_more_connections_never_lower_utilization_and_stay_below_capacity(n, beta):
    u, u_next = aimd.aimd_one_utilization(n, beta), aimd.aimd_one_utilization(n + 1, beta)
    assert 0 < u < u_next <= 1


def test_many_connections_approach_capacity():
    assert aimd.aimd_one_utilization(10**9, 0.5) > 1 - 1e-8


@given(n=ns, beta=betas)
def test_one_beats_synchronized_all_except_for_a_single_connection(n, beta):
    one, all_ = aimd.aimd_one_utilization(n, beta), aimd.aimd_all_utilization(beta, n)
    assert all_ == pytest.approx((1 + beta) / 2, rel=1e-12)
    if n == 1:
        assert one == pytest.approx(all_, rel=1e-12)
    else:
        assert one > all_


@given(n=st.integers(min_value=1, max_value=1000))
def test_multtcp_is_one_minus_one_over_4n_and_within_2_5_percent_of_n_connections(n):
    m = aimd.multtcp_utilization(n, 0.5)
    one = aimd.aimd_one_utilization(n, 0.5)
    assert m == pytest.approx(1 - 1 / (4 * n), rel=1e-12)
    # Paper C, Sec. II.B.4: MultTCP >= ONE, equal only at N = 1, and less than 1.025 of it.
    assert m >= one - 1e-15
    assert m / one < 1.025
    if n > 1:
        assert m > one


@given(target=st.floats(min_value=0.5, max_value=0.999), beta=betas)
def test_connections_needed_is_the_smallest_n_reaching_the_target(target, beta):
    n = aimd.aimd_connections_needed(target, beta)
    k = (1 + beta) / (1 - beta)
    assert 1 - 1 / (1 + n * k) >= target * (1 - 1e-12)
    if n > 1:
        assert 1 - 1 / (1 + (n - 1) * k) < target


def test_ninety_percent_needs_three_tcp_connections():
    assert aimd.aimd_connections_needed(0.9, 0.5) == 3
    assert aimd.aimd_connections_needed(0.75, 0.5) == 1


# --- Proposition 1 and Sec. IV.B ----------------------------------------------------------


@given(n=st.integers(min_value=1, max_value=200), beta=betas)
def test_largest_rate_fixed_point_is_a_decreasing_point_of_the_simplex(n, beta):
    x = aimd.largest_rate_fixed_point(n, beta)
    assert x.shape == (n,)
    assert x.sum() == pytest.approx(1, rel=1e-12)
    assert np.all(x > 0) and np.all(np.diff(x) <= 0)


def _largest_rate_map(x, beta):
    """Paper C, eq. (7) with c = 1, eta_i = 1/N: the largest is cut, the others grow."""
    n = len(x)
    x = np.sort(x)[::-1]
    top = x[0]
    nxt = x + (1 - beta) * top / n
    nxt[0] = beta * top + (1 - beta) * top / n
    return np.sort(nxt)[::-1]


@pytest.mark.parametrize("n,beta", [(2, 0.5), (4, 0.5), (7, 0.8), (3, 0.25)])
def test_largest_rate_fixed_point_is_where_the_dynamics_settle(n, beta):
    rng = np.random.default_rng(1)
    x = rng.dirichlet(np.ones(n))
    for _ in range(5000):
        x = _largest_rate_map(x, beta)
    assert np.allclose(x, aimd.largest_rate_fixed_point(n, beta), atol=1e-9)


@given(n=st.integers(min_value=2, max_value=200))
def test_beatdown_stationary_point_sums_to_capacity_with_even_steps(n):
    y = aimd.beatdown_stationary_point(n)
    assert y.sum() == pytest.approx(1, rel=1e-12)
    assert y[0] == pytest.approx(2 / n, rel=1e-12)
    assert y[-1] == 0
    # the identity of Sec. IV.B: y_k = y_{k+1} + y_1/(N-1)
    assert np.allclose(y[:-1] - y[1:], y[0] / (n - 1), rtol=1e-12)


# --- Theorem 1 insensitivity and Theorem 2 against the hybrid model itself -------------


def _hybrid_moments(n, beta, pick, events=200_000, seed=7):
    """Time averages of sum(X) and X_1^2 for the hybrid model, eqs. (2)-(4), c = 1, eta = 1.

    Between congestion events every rate grows at slope 1 until the sum hits 1;
    the integrals over each interval are exact.
    """
    draws = np.random.default_rng(seed).random(events)
    x = np.full(n, 1.0 / n)
    t = s1 = s2 = 0.0
    for k in range(events):
        i = pick(x, draws[k])
        x[i] *= beta
        gap = (1 - x.sum()) / n
        if k > events // 10:
            t += gap
            s1 += x.sum() * gap + n * gap**2 / 2
            s2 += x[0] ** 2 * gap + x[0] * gap**2 + gap**3 / 3
        x += gap
    return s1 / t, s2 / t


def _rate_independent(x, u):
    return int(u * len(x))


def _rate_proportional(x, u):
    return min(int(np.searchsorted(np.cumsum(x), u * x.sum())), len(x) - 1)


def _largest(x, u):
    return int(np.argmax(x))


@pytest.mark.parametrize("pick", [_rate_independent, _rate_proportional, _largest])
def test_mean_is_insensitive_to_the_loss_policy(pick):
    mean, _ = _hybrid_moments(3, 0.5, pick, events=60_000)
    # 54k events: the time average is within a few 1e-3 of the stationary mean.
    assert mean == pytest.approx(aimd.aimd_one_utilization(3, 0.5), abs=0.005)


@pytest.mark.parametrize(
    "policy,pick",
    [("rate-independent", _rate_independent), ("rate-proportional", _rate_proportional), ("largest-rate", _largest)],
)
def test_theorem_2_second_moments_match_the_hybrid_model(policy, pick):
    _, second = _hybrid_moments(2, 0.5, pick)
    # The three values differ by >= 0.009; 180k events give an error well below 0.003.
    assert second == pytest.approx(float(aimd.second_moment_two_flows(policy)), abs=0.003)


def test_theorem_2_values_as_printed_and_ordered():
    got = {p: aimd.second_moment_two_flows(p) for p in aimd.SECOND_MOMENTS_N2}
    assert got == {
        "beatdown": Fraction(1, 3),
        "rate-independent": Fraction(5, 24),
        "rate-proportional": Fraction(679, 3396),
        "largest-rate": Fraction(4, 21),
    }
    assert got["largest-rate"] < got["rate-proportional"] < got["rate-independent"] < got["beatdown"]
    # E[X_1] = (6/7)/2 = 3/7 for every policy (Theorem 1); 0 <= X_1 <= 1 bounds the second moment.
    for v in got.values():
        assert Fraction(9, 49) <= v <= Fraction(3, 7)


def test_beatdown_second_moment_is_that_of_a_uniform_rate():
    # N = 2 beatdown: one flow at c, the other at 0 (stationary point), then the
    # tagged flow is beaten down linearly to 0 while the other rises to c, so X_1
    # is uniform on [0, c] and E[X_1^2] = 1/3.
    assert np.allclose(aimd.beatdown_stationary_point(2), [1, 0])
    grid = (np.arange(100_000) + 0.5) / 100_000
    assert float(np.mean(grid**2)) == pytest.approx(float(aimd.second_moment_two_flows("beatdown")), abs=1e-9)


# --- domain errors ------------------------------------------------------------------------


@pytest.mark.parametrize("beta", [0, 1, -0.5, 1.5, float("nan")])
def test_beta_outside_the_open_unit_interval_is_refused(beta):
    with pytest.raises(ValueError, match="beta"):
        aimd.aimd_one_utilization(2, beta)


@pytest.mark.parametrize("n", [0, -1, 2.5])
def test_n_must_be_a_whole_number_at_least_one(n):
    with pytest.raises(ValueError, match="n"):
        aimd.aimd_one_utilization(n, 0.5)
    with pytest.raises(ValueError, match="n"):
        aimd.multtcp_utilization(n, 0.5)


def test_theorem_2_outside_its_case_is_refused():
    with pytest.raises(ValueError, match="n = 2"):
        aimd.second_moment_two_flows("beatdown", n=3)
    with pytest.raises(ValueError, match="beta = 0.5"):
        aimd.second_moment_two_flows("beatdown", beta=0.7)
    with pytest.raises(ValueError, match="policy"):
        aimd.second_moment_two_flows("random-early")
    with pytest.raises(ValueError, match="n"):
        aimd.beatdown_stationary_point(1)
    with pytest.raises(ValueError, match="target"):
        aimd.aimd_connections_needed(1.0)
