"""tcplab.plan: what Python reads of the engine's resolution of a scenario."""

from __future__ import annotations

import pytest

from tcplab import plan
from tcplab.scenario import load_scenario


def scenario(**flows) -> dict:
    return {"name": "p", "seed": 3, "duration": "20s",
            "topology": {"bottleneck": {"rate": "1Mbps", "delay": "10ms", "buffer": 20},
                         "access": {"rate": "10Mbps", "delay": "1ms", "buffer": 100},
                         "sink_access": {"rate": "10Mbps", "delay": "1ms", "buffer": 100,
                                         "outages": {"start": "5s", "every": "5s", "duration": "1s"}}},
            "flows": flows}


def test_payload_and_wire_bytes_of_tcp_and_udp():
    sc = load_scenario(scenario(b={"kind": "udp", "rate": "0.1Mbps", "packet_size": 500},
                                a={"kind": "tcp", "packet_size": 1500, "header_size": 52}))
    assert plan.wire_bytes(sc, "a") == 1500 and plan.payload_bytes(sc, "a") == 1448
    assert plan.wire_bytes(sc, "b") == plan.payload_bytes(sc, "b") == 500
    assert plan.first_data_seq(sc) == 1  # the engine's default opens with a SYN
    sc = load_scenario(scenario(a={"kind": "tcp", "syn": False}, c={"kind": "tcp"}))
    assert plan.first_data_seq(sc) == 0  # one group without a SYN: traces count from 0


def test_payload_bytes_per_flow_builds_one_plan(monkeypatch):
    import pandas as pd

    from tcplab.traces import payload_bytes

    sc = load_scenario(scenario(b={"kind": "udp", "rate": "0.1Mbps", "packet_size": 500},
                                a={"kind": "tcp", "count": 50, "packet_size": 1500, "header_size": 52}))
    flows = pd.DataFrame({"id": range(51), "group": ["a"] * 50 + ["b"]})
    built = []
    real = plan.Plan.__init__
    monkeypatch.setattr(plan.Plan, "__init__", lambda self, *a, **k: built.append(1) or real(self, *a, **k))
    pay = payload_bytes(flows, sc)
    assert pay.to_dict() == {**{i: 1448.0 for i in range(50)}, 50: 500.0}
    assert len(built) == 1  # one plan, not one per flow (51 before)


def test_flows_in_engine_order_with_their_instants():
    p = plan.plan(scenario(z={"kind": "udp", "rate": "0.1Mbps", "start": "2s"},
                           a={"kind": "tcp", "count": 2, "stop": "15s"}))
    assert [(f.id, f.group, f.kind) for f in p.flows] == [(0, "a", "tcp"), (1, "a", "tcp"), (2, "z", "udp")]
    assert [(f.start_s, f.stop_s) for f in p.flows] == [(0.0, 15.0), (0.0, 15.0), (2.0, 20.0)]
    assert all(f.runs for f in p.flows)
    assert p.reference_bps == 1e6


def test_outages_of_a_link():
    p = plan.plan(scenario(a={"kind": "tcp"}))
    # links: 0/1 forward/reverse bottleneck, then per flow access and sink access
    found = [p.link_outages(i) for i in range(6)]
    fixed = [(k * 5_000_000_000, k * 5_000_000_000 + 1_000_000_000) for k in (1, 2, 3)]
    assert fixed in found


def test_rates_are_the_engines_report():
    g, t = plan.rates_bps([1200], [2], [1000], 2.0)
    assert g.tolist() == [4800.0] and t.tolist() == [8000.0]
    # the packet engine's own rates, recomputed from its counts, bit for bit
    import tcplab

    from pathlib import Path

    sc = Path(__file__).resolve().parents[1] / "scenarios" / "b-dumbbell.toml"
    r = tcplab.run(str(sc), overrides={"duration": "5s", "warmup": "1s"})
    f = r.flows
    sizes = [plan.wire_bytes(r.scenario, grp) for grp in f["group"]]
    g, t = plan.rates_bps(f["delivered_bytes"], f["delivered_packets"], sizes, r.metrics["measured_s"])
    assert g.tolist() == f["goodput_bps"].tolist() and t.tolist() == f["throughput_bps"].tolist()


def test_a_bad_scenario_is_a_user_error():
    from tcplab.errors import UserError

    with pytest.raises(UserError, match="flows.a.bogus"):
        plan.plan(scenario(a={"kind": "tcp", "bogus": 1}))


def test_a_plan_too_big_to_build_is_a_user_error_naming_the_key():
    # found by bench/fuzz_py.py: the engine's refusal reached Python as a bare ValueError
    from tcplab.errors import UserError

    with pytest.raises(UserError, match="flows.a.count"):
        plan.plan(scenario(a={"kind": "tcp", "count": 10_000_000})).engine
