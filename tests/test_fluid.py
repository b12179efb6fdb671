"""tcplab.fluid: the hybrid AIMD model of paper C through the Python API.

The Rust crate states the paper's facts in full (cargo test -p tcplab-aimd);
these tests check that they survive the bindings and that the result has the
shape the other engines share.
"""

import json
import math

import pandas as pd
import pytest

import tcplab
from tcplab.errors import UserError
from tcplab.fluid import sigma_weights


def theorem1(n, beta):
    return 1 - 1 / (1 + n * (1 + beta) / (1 - beta))


@pytest.mark.parametrize("policy", ["rate-proportional", "largest-rate", "rate-independent", "beatdown"])
@pytest.mark.parametrize("n", [1, 3, 6])
def test_theorem1_through_the_api(policy, n):
    # 20 000 events: the ONE identity makes the error O(N/events) of the deficit.
    r = tcplab.fluid(n=n, beta=0.5, policy=policy, events=20_000, seed=3)
    assert r.metrics["mean_aggregate"] == pytest.approx(theorem1(n, 0.5), rel=0.005)
    assert r.metrics["prediction"] == pytest.approx(theorem1(n, 0.5))
    assert r.flows["mean"].sum() == pytest.approx(r.metrics["mean_aggregate"], rel=1e-9)


def test_all_gives_one_plus_beta_over_two():
    r = tcplab.fluid(n=5, beta=0.3, policy="all", events=1_000, seed=1)
    assert r.metrics["mean_aggregate"] == pytest.approx(0.65, rel=1e-9)


def test_result_shape():
    r = tcplab.fluid(n=3, beta=0.5, policy="rate-independent", events=5_000, seed=2, trace=10, bins=20)
    assert r.engine == "fluid" and r.engine_version
    assert r.scenario["n"] == 3 and r.scenario["policy"] == "rate-independent"
    assert isinstance(r.flows, pd.DataFrame) and len(r.flows) == 3
    for col in ["id", "mean", "mean_ci95", "second_moment", "second_moment_ci95", "cut_share"]:
        assert col in r.flows
    rates = r.traces["rates"]
    assert list(rates.columns) == ["time", "x0", "x1", "x2"]
    assert len(rates) == 20  # before and after each of 10 cuts
    # just before each cut the rates sum to c, so the path is piecewise linear
    pre = rates.iloc[::2][["x0", "x1", "x2"]].sum(axis=1)
    assert pre.to_numpy() == pytest.approx(1.0)
    hist = r.traces["rates_at_congestion"]
    assert hist.groupby("flow")["fraction"].sum().to_numpy() == pytest.approx(1.0)
    d = r.to_dict()
    json.dumps(d, allow_nan=False)
    assert d["mean_aggregate"] == r.metrics["mean_aggregate"]
    assert len(d["per_connection"]) == 3
    assert {"mean", "second_moment"} <= set(d["per_connection"][0])
    assert (d["n"], d["beta"], d["policy"], d["events"], d["seed"]) == (3, 0.5, "rate-independent", 5_000, 2)


def test_deterministic_for_a_seed():
    a = tcplab.fluid(n=4, policy="rate-proportional", events=5_000, seed=9).to_dict()
    b = tcplab.fluid(n=4, policy="rate-proportional", events=5_000, seed=9).to_dict()
    c = tcplab.fluid(n=4, policy="rate-proportional", events=5_000, seed=10).to_dict()
    assert a == b
    assert a["per_connection"] != c["per_connection"]


def test_example1_sigma_moves_classes():
    low = tcplab.fluid(n=4, policy="rate-independent", sigma=0.2, events=100_000, seed=1)
    high = tcplab.fluid(n=4, policy="rate-independent", sigma=0.8, events=100_000, seed=1)
    for r in (low, high):
        assert r.metrics["mean_aggregate"] == pytest.approx(theorem1(4, 0.5), rel=0.005)
    # rarely cut connections get more
    assert low.flows["mean"][0] > low.flows["mean"][2] + 0.1
    assert high.flows["mean"][0] < high.flows["mean"][2] - 0.1
    assert sigma_weights(4, 0.2) == pytest.approx([0.1, 0.1, 0.4, 0.4])


def test_heterogeneous_parameters():
    r = tcplab.fluid(n=3, beta=[0.5, 0.7, 0.3], eta=[1, 2, 0.5], policy="rate-proportional", events=20_000)
    assert r.metrics["prediction"] is None  # Theorem 1 is for identical β
    assert list(r.flows["beta"]) == [0.5, 0.7, 0.3]
    assert 0 < r.metrics["mean_aggregate"] < 1


def test_subset_policy():
    r = tcplab.fluid(n=3, policy="subset", probs=1.0, events=1_000)
    assert r.metrics["mean_aggregate"] == pytest.approx(0.75, rel=1e-9)  # every p = 1 is ALL
    r = tcplab.fluid(n=3, policy="subset", probs=[0.2, 0.5, 0.9], events=20_000)
    assert r.flows["cut_share"].sum() > 1  # more than one cut per event on average


@pytest.mark.parametrize(
    "kwargs, words",
    [
        (dict(n=0), "n:"),
        (dict(n=2, beta=1.0), "beta[0]"),
        (dict(n=2, beta=[0.5]), "beta: expected 2 values"),
        (dict(n=2, eta=-1), "eta[0]"),
        (dict(policy="nope"), "policy:"),
        (dict(policy="subset"), "probs:"),
        (dict(policy="largest-rate", sigma=0.3), "sigma:"),
        (dict(policy="rate-independent", sigma=1.5), "sigma:"),
        (dict(policy="rate-independent", weights=[1, 0]), "weights[1]"),
        (dict(events=10, batches=32), "events:"),
        (dict(n=2, initial=[0.8, 0.8]), "initial:"),
    ],
)
def test_bad_input_is_a_user_error(kwargs, words):
    with pytest.raises(UserError, match=None) as exc:
        tcplab.fluid(**kwargs)
    assert words in str(exc.value)


def test_nan_free_json_for_one_connection():
    d = tcplab.fluid(n=1, policy="largest-rate", events=100).to_dict()
    assert d["mean_aggregate"] == pytest.approx(0.75)
    assert all(v is None or math.isfinite(v) for v in [d["mean_aggregate_ci95"]])


def test_the_warmup_default_is_one_rule_for_the_api_the_sweep_and_the_cli():
    from tcplab.commands.fluid import register
    from tcplab.fluid import WARMUP_DIVISOR, default_warmup, resolve
    from tcplab.sweep.engines import prepare

    assert default_warmup(1000) == 1000 // WARMUP_DIVISOR
    assert tcplab.fluid(n=2, events=1000).scenario["warmup"] == default_warmup(1000)
    assert prepare("fluid", {"events": 1000}) == resolve({"events": 1000})
    assert resolve({"events": 1000})["warmup"] == default_warmup(1000)
    assert resolve({"events": 1000, "warmup": 7})["warmup"] == 7
    with pytest.raises(UserError, match="unknown key"):
        resolve({"trace": 5})
    import argparse

    sub = argparse.ArgumentParser().add_subparsers()
    register(sub)
    assert f"E/{WARMUP_DIVISOR}" in sub.choices["fluid"].format_help()
