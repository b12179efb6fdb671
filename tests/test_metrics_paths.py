"""Metrics that mean the same on every topology: each flow against its own
bottleneck and its max-min fair share; per-direction bottlenecks; no sum of flows
on different links set against one link; a warning when a goodput exceeds its
bottleneck; the per-group summary linear in the number of groups."""

from __future__ import annotations

import math

import numpy as np
import pytest

import tcplab
from tcplab.metrics import max_min_fair_shares
from tcplab.plan import plan
from tcplab.result import compute_metrics


def test_max_min_fair_shares_by_hand():
    # a parking lot of two equal links: the long flow and each cross flow get half
    assert max_min_fair_shares([10, 10], [[0, 1], [0], [1]]).tolist() == [5, 5, 5]
    # the second link is slower: it fills at 2 for the long flow and its cross
    # flow; the first link's cross flow takes the rest of it, 8
    assert max_min_fair_shares([10, 4], [[0, 1], [0], [1]]).tolist() == [2, 8, 2]
    # the second link has three flows, one of which also crosses the first: it
    # fills at 1/3, and the first link's other flow takes the rest, 2/3
    got = max_min_fair_shares([1, 1], [[0], [0, 1], [1], [1]])
    assert got.tolist() == pytest.approx([2 / 3, 1 / 3, 1 / 3, 1 / 3])
    # a flow with no route has no share
    assert math.isnan(max_min_fair_shares([10], [[0], []])[1])


def _dumbbell(access_rate):
    link = {"rate": "1Mbps", "delay": "1ms", "buffer": 10}
    return {"duration": "1s", "topology": {"bottleneck": link, "access": {**link, "rate": access_rate},
                                          "sink_access": {**link, "rate": "10Mbps"}},
            "flows": {"a": {"kind": "tcp"}}}


def test_a_flows_bottleneck_is_the_slowest_link_and_the_bottleneck_among_equals():
    # the engine's Plan decides it once (FlowPlan.bottleneck); every consumer reads it
    p = plan(_dumbbell("1Mbps"))  # access as fast as the bottleneck: the bottleneck
    f = p.first_of("a")
    assert p.links[f["bottleneck"]["forward"]]["role"] == "bottleneck"
    assert p.links[f["bottleneck"]["reverse"]]["role"] == "bottleneck"
    p = plan(_dumbbell("500kbps"))  # a slower access link is the flow's bottleneck
    f = p.first_of("a")
    assert p.links[f["bottleneck"]["forward"]]["role"] == "access"
    assert p.links[f["bottleneck"]["forward"]]["flow"] == 0
    assert p.bottleneck("a") is p.links[f["bottleneck"]["forward"]]
    # a chain of equal links: the first on the route
    chain = {"rate": "1Mbps", "delay": "1ms", "buffer": 10}
    p = plan({"duration": "1s", "topology": {"kind": "path", "links": [chain, chain]},
              "flows": {"a": {"kind": "tcp"}}})
    assert p.first_of("a")["bottleneck"] == {"forward": 0, "reverse": 3}


def _short(path):
    return tcplab.run(path, overrides={"duration": "40s", "warmup": "5s"})


def test_parking_lot_each_flow_against_its_own_bottleneck():
    r = _short("scenarios/parking-lot.toml")
    m = r.metrics
    assert [(b["link"], b["direction"]) for b in m["bottlenecks"]] == [("link[0]", "forward"), ("link[1]", "forward")]
    # the long flow crosses both links: each bottleneck carries two TCP flows
    assert [b["flows"] for b in m["bottlenecks"]] == [2, 2]
    for b in m["bottlenecks"]:
        assert 0 < b["normalized_goodput"] <= 1 and 0 < b["utilization"] <= 1
    # no sum of flows on different links over one link's capacity (was 1.78)
    assert math.isnan(m["normalized_goodput"]) and math.isnan(m["normalized_throughput"])
    f = r.flows
    assert (f["normalized_goodput"] <= 1).all()
    assert f["fair_share_bps"].tolist() == [5e6, 5e6, 5e6]
    assert m["jain_index_of"] == "goodput / max-min fair share"
    assert m["warnings"] == []


def test_two_way_traffic_reports_each_direction():
    r = _short("scenarios/two-way.toml")
    bns = {b["direction"]: b for b in r.metrics["bottlenecks"]}
    assert set(bns) == {"forward", "reverse"}
    for b in bns.values():
        assert b["link"] == "bottleneck" and b["flows"] == 1 and 0 < b["utilization"] <= 1
    assert (r.flows["normalized_goodput"] <= 1).all()


def test_a_dumbbell_keeps_its_headline():
    r = _short("scenarios/c-parallel-sack.toml")
    m = r.metrics
    assert len(m["bottlenecks"]) == 1 and m["bottlenecks"][0]["flows"] == 10
    assert m["normalized_goodput"] == pytest.approx(m["tcp_goodput_bps"] / m["reference_bps"])
    assert m["bottlenecks"][0]["tcp_goodput_bps"] == pytest.approx(m["tcp_goodput_bps"])


def _plan(n_flows, rate=1e6):
    links = [{"name": "bottleneck", "direction": "forward", "rate_bps": rate}]
    flows = [{"id": i, "route": {"forward": [0], "reverse": []}, "bottleneck": {"forward": 0, "reverse": -1}}
             for i in range(n_flows)]
    return {"links": links, "flows": flows}


def test_a_goodput_above_its_bottleneck_is_warned_with_the_likely_cause():
    flows = {"id": [0, 1], "kind": ["tcp", "tcp"], "group": ["a", "a"],
             "goodput_bps": [1.31e6, 1e5], "throughput_bps": [1.4e6, 1.1e5]}
    links = {"name": ["bottleneck"], "direction": ["forward"], "utilization": [1.0], "drops": [0]}
    m = compute_metrics(flows, links, 1e6, 10.0, _plan(2))
    assert len(m["warnings"]) == 1
    assert "flow 0" in m["warnings"][0] and "warm-up" in m["warnings"][0]


def test_groups_summary_is_linear_in_groups():
    # 10^5 groups of one flow each: each group once scanned every flow (quadratic:
    # 10^4 groups took 8 s, 10^5 no answer in a minute)
    n = 100_000
    rng = np.random.default_rng(1)
    goodput = rng.uniform(1e3, 1e4, n)
    flows = {"id": np.arange(n), "kind": np.array(["tcp"] * n, dtype=object),
             "group": np.array([f"g{i:06d}" for i in range(n)], dtype=object),
             "goodput_bps": goodput, "throughput_bps": goodput * 1.04}
    links = {"name": ["bottleneck"], "direction": ["forward"], "utilization": [0.9], "drops": [0]}
    m = compute_metrics(flows, links, 1e9, 10.0, _plan(n, 1e9))
    assert len(m["groups"]) == n
    assert m["groups"]["g000007"]["goodput_bps"] == goodput[7]
    assert m["groups"]["g099999"]["flows"] == 1
    assert m["bottlenecks"][0]["flows"] == n


@pytest.mark.parametrize("path", ["scenarios/b-wireless-per.toml", "scenarios/b-realtime.toml"])
def test_flow_drops_add_up_to_link_drops(path):
    # a drop decided early (a chained link decides a packet's fate when it enters
    # the chain) once counted in the flow after the run's end mark: one flow had
    # 135 drops where its link counted 134
    r = tcplab.run(path)
    assert int(r.flows["drops"].sum()) == int(r.links["drops"].sum())
