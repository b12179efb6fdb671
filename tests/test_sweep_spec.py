"""Sweep files: axes expand into the points the user meant, errors name the key."""

import pytest

from tcplab.errors import UserError
from tcplab.sweep import derive_seed, parse_sweep

BASE = {"scenario": {"seed": 1, "duration": "20s"}, "engine": "packet"}


def sweep(axes, **kw):
    return parse_sweep({**BASE, **kw, "axes": axes})


def values(s, i=0):
    return [v[0] for v in s.axes[i].values]


def test_grid_is_every_combination_first_axis_slowest():
    s = sweep({"flows.sack.count": [1, 2, 3], "topology.bottleneck.buffer": [5, 60]})
    pts = s.points()
    assert len(pts) == 6
    assert [(p.axes["flows.sack.count"], p.axes["topology.bottleneck.buffer"]) for p in pts] == [
        (1, 5), (1, 60), (2, 5), (2, 60), (3, 5), (3, 60)]


def test_dotted_toml_keys_and_quoted_paths_are_the_same_axis():
    a = sweep({"flows": {"sack": {"count": [1, 2]}}})
    b = sweep({"flows.sack.count": [1, 2]})
    assert a.axes == b.axes


def test_integer_range_is_inclusive():
    assert values(sweep({"n": {"range": [1, 10]}})) == list(range(1, 11))
    assert values(sweep({"n": {"range": [0, 1], "step": 0.25}})) == [0.0, 0.25, 0.5, 0.75, 1.0]


def test_log_range_over_unit_strings_keeps_the_unit_and_is_geometric():
    s = sweep({"background.freq": {"log": ["0.05Hz", "10Hz"], "n": 30}})
    v = values(s)
    assert len(v) == 30 and v[0] == "0.05Hz" and v[-1] == "10Hz"
    hz = [float(x[:-2]) for x in v]
    ratios = [b / a for a, b in zip(hz, hz[1:])]
    assert max(ratios) == pytest.approx(min(ratios), rel=1e-4)  # 6 significant digits written
    assert s.axes[0].log


def test_linear_range_over_unit_strings():
    assert values(sweep({"topology.bottleneck.rate": {"linear": ["1Mbps", "10Mbps"], "n": 4}})) == [
        "1Mbps", "4Mbps", "7Mbps", "10Mbps"]
    assert values(sweep({"topology.bottleneck.delay": {"range": ["10ms", "30ms"], "step": "10ms"}})) == [
        "10ms", "20ms", "30ms"]


def test_zipped_paths_vary_together():
    s = sweep({"rtt": {"zip": {"topology.bottleneck.delay": ["10ms", "50ms"],
                               "topology.access.delay": {"linear": [1, 5], "n": 2}}},
               "flows.sack.count": [1, 2]})
    assert s.columns == ["topology.bottleneck.delay", "topology.access.delay", "flows.sack.count"]
    pts = s.points()
    assert len(pts) == 4
    assert {(p.axes["topology.bottleneck.delay"], p.axes["topology.access.delay"]) for p in pts} == {
        ("10ms", 1), ("50ms", 5)}


def test_replications_run_the_own_seed_then_derived_distinct_seeds():
    s = sweep({"n": [1]}, replications=4)
    pts = s.points()
    assert [p.replication for p in pts] == [0, 1, 2, 3]
    seeds = [derive_seed(7, r) for r in range(4)]
    assert seeds[0] == 7 and len(set(seeds)) == 4 and all(0 <= x < 2**63 for x in seeds)
    assert derive_seed(7, 2) == derive_seed(7, 2) != derive_seed(8, 2)


@pytest.mark.parametrize("axes, words", [
    ({"n": {"log": [0, 10], "n": 3}}, "positive"),
    ({"n": {"log": ["1Hz", "10ms"], "n": 3}}, "different kinds"),
    ({"n": {"linear": [1, 2]}}, "n ="),
    ({"n": {"range": [5, 1]}}, "low ≤ high"),
    ({"n": {"range": [1, 2], "stpe": 1}}, "unknown key"),
    ({"n": []}, "at least one value"),
    ({"rtt": {"zip": {"a": [1, 2], "b": [1]}}}, "equal lengths"),
    ({"n": 3}, "expected a list"),
])
def test_bad_axes_are_user_errors_naming_the_axis(axes, words):
    with pytest.raises(UserError, match=words) as err:
        sweep(axes)
    assert "axes" in str(err.value)


def test_unknown_top_level_key_and_engine_are_user_errors():
    with pytest.raises(UserError, match="unknown key"):
        parse_sweep({**BASE, "axis": {}})
    with pytest.raises(UserError, match="engine"):
        parse_sweep({**BASE, "engine": "ns3"})


def test_engine_override_drops_the_file_metric():
    s = parse_sweep({**BASE, "metric": "normalized_throughput"}, engine="predict")
    assert s.engine == "predict" and s.metric is None


def test_unit_strings_are_split_by_the_engines_grammar():
    """Python has no grammar of its own for "1.5Mbps": the engine splits it
    (number text kept exactly, for the sweep keys' Decimal arithmetic)."""
    from tcplab.units import parse_duration, parse_rate, split_quantity

    assert split_quantity("1.5Mbps") == ("1.5", "Mbps")
    assert split_quantity(" 5 ms ") == ("5", "ms")
    assert split_quantity("1e6bps") == ("1e6", "bps")
    assert split_quantity(".25s") == (".25", "s")
    for bad in ("ms", "1-2ms", "nan", "inf", ""):
        assert split_quantity(bad) is None, bad
    assert parse_rate("1e6bps") == 1e6
    assert parse_duration("2min") == 120.0
