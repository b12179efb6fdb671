"""`tcplab.result`: the tables and summary metrics every engine's run ends in.

The packet engine hands its per-flow and per-link tables over as columns and
the metrics are computed from those with numpy; DataFrames are built only when
read. These tests hold that path to what the tables and metrics were when they
were built with pandas from the engine's JSON records: same columns in the same
order, same dtypes, and the same metric values to the last bit.
"""

import copy
import math

import numpy as np
import pandas as pd
import pytest

import tcplab
from tcplab.metrics import jain_index
from tcplab.result import Result, compute_metrics
from tcplab.scenario import apply_overrides

FLOW_COLUMNS = ["id", "group", "kind", "variant", "start_s", "stop_s", "delivered_packets", "delivered_bytes",
                "goodput_bps", "throughput_bps", "sent_packets", "retransmissions", "timeouts",
                "fast_retransmits", "drops"]
# what every flow is measured against (tcplab.metrics.path_metrics), after the engine's columns
PATH_COLUMNS = ["bottleneck_bps", "normalized_goodput", "fair_share_bps"]
LINK_COLUMNS = ["id", "name", "direction", "rate_bps", "arrivals", "drops", "errors", "departures", "utilization"]


def dumbbell(flows: dict, duration="20s", rate="2Mbps") -> dict:
    return {
        "duration": duration, "warmup": "2s",
        "topology": {
            "bottleneck": {"rate": rate, "delay": "5ms", "buffer": 20},
            "access": {"rate": "20Mbps", "delay": "5ms", "buffer": 100},
            "sink_access": {"rate": "20Mbps", "delay": "5ms", "buffer": 100},
        },
        "flows": flows,
    }


TCP = {"kind": "tcp", "variant": "reno"}
UDP = {"kind": "udp", "rate": "0.5Mbps"}


def test_flow_table_columns_are_those_of_the_engine_records():
    # The engine's JSON record of a UDP flow has no `variant`; pandas puts a
    # column where the first record has it, at the end when only later ones do.
    tcp_first = tcplab.run(dumbbell({"a": TCP, "b": UDP}))
    assert list(tcp_first.flows.columns) == FLOW_COLUMNS + PATH_COLUMNS
    assert tcp_first.flows["variant"].isna().tolist() == [False, True]
    udp_first = tcplab.run(dumbbell({"a": UDP, "b": TCP}))
    assert list(udp_first.flows.columns) == [c for c in FLOW_COLUMNS if c != "variant"] + ["variant"] + PATH_COLUMNS
    udp_only = tcplab.run(dumbbell({"a": UDP}))
    assert "variant" not in udp_only.flows.columns
    assert list(udp_only.links.columns) == LINK_COLUMNS
    f = tcp_first.flows
    assert str(f["delivered_packets"].dtype) == "int64" and str(f["goodput_bps"].dtype) == "float64"
    assert f["group"].tolist() == ["a", "b"] and f["kind"].tolist() == ["tcp", "udp"]
    assert str(tcp_first.links["arrivals"].dtype) == "int64"


def pandas_metrics(flows: pd.DataFrame, links: pd.DataFrame, reference_bps: float) -> dict:
    """The summary metrics as pandas computes them (column sums and groupby),
    the way they were computed before the numpy path."""
    tcp, udp = flows[flows["kind"] == "tcp"], flows[flows["kind"] == "udp"]
    bn = links[(links["name"] == "bottleneck") & (links["direction"] == "forward")].iloc[0]
    total = float(flows["goodput_bps"].sum())
    return {
        "tcp_goodput_bps": float(tcp["goodput_bps"].sum()),
        "tcp_throughput_bps": float(tcp["throughput_bps"].sum()),
        "udp_throughput_bps": float(udp["throughput_bps"].sum()),
        "jain_index": jain_index(tcp["goodput_bps"]),
        "bottleneck_utilization": float(bn["utilization"]),
        "bottleneck_loss_rate": float(bn["drops"]) / float(bn["arrivals"]),
        "tcp_retransmissions": int(tcp["retransmissions"].sum()),
        "groups": {g: {"flows": len(d), "goodput_bps": float(d["goodput_bps"].sum()),
                       "throughput_bps": float(d["throughput_bps"].sum()),
                       "share": float(d["goodput_bps"].sum()) / total,
                       "normalized_goodput": float(d["goodput_bps"].sum()) / reference_bps,
                       "jain_index": jain_index(d["goodput_bps"])}
                   for g, d in flows.groupby("group", sort=True)},
    }


def test_metrics_are_bit_identical_to_pandas_sums():
    # 40 + 30 TCP flows of unequal goodput: more than numpy's 8-way unrolled
    # pairwise block, and a window of 7.7 s makes the rates inexact, so a
    # different summation order shows in the last bits (Python's sequential sum
    # differs from numpy's in the z-reno group's goodput).
    sc = dumbbell({"z-reno": dict(TCP, count=40, start_jitter="2s"),
                   "a-newreno": dict(TCP, variant="newreno", count=30, start_jitter="2s"),
                   "m-udp": dict(UDP, count=3)}, duration="9.7s", rate="20Mbps")
    res = tcplab.run(sc)
    want = pandas_metrics(res.flows, res.links, res.metrics["reference_bps"])
    got = {k: res.metrics[k] for k in want}
    assert got == want
    assert list(res.metrics["groups"]) == ["a-newreno", "m-udp", "z-reno"]
    # the same function on DataFrames gives the same dict
    again = compute_metrics(res.flows, res.links, res.metrics["reference_bps"], res.metrics["measured_s"])
    assert again == {k: v for k, v in res.metrics.items() if k not in ("events", "bottlenecks", "warnings")}


def test_records_with_gaps_make_the_frame_pandas_makes():
    # ns-2 and linux backends report records; a UDP flow has no retransmission
    # count (None) and a key may be missing. The table is what pd.DataFrame makes
    # of the records plus the rates computed from the delivered counts.
    flows = [
        {"id": 0, "group": "bg", "kind": "udp", "delivered_packets": 10, "delivered_bytes": 10000,
         "sent_packets": None, "retransmissions": None},
        {"id": 1, "group": "tcp", "kind": "tcp", "variant": "reno", "delivered_packets": 20,
         "delivered_bytes": 19200, "sent_packets": 25, "retransmissions": 5},
    ]
    links = [{"name": "bottleneck", "direction": "forward", "drops": 3, "departures": 30, "utilization": 0.5}]
    # the rates read every group's packet_size from the scenario's Plan
    from tcplab.scenario import resolve
    sc = resolve({"duration": "10s",
                  "topology": {"bottleneck": {"rate": "1Mbps", "delay": "5ms", "buffer": 10},
                               "access": {"rate": "10Mbps", "delay": "1ms", "buffer": 100},
                               "sink_access": {"rate": "10Mbps", "delay": "1ms", "buffer": 100}},
                  "flows": {"bg": {"kind": "udp", "rate": "0.1Mbps", "packet_size": 1000},
                            "tcp": {"kind": "tcp", "packet_size": 1000}}})
    raw = {"engine": "x", "engine_version": 1, "scenario": sc, "measured_s": 2.0, "reference_bps": 1000.0,
           "flows": copy.deepcopy(flows), "links": links}
    res = Result.from_raw(raw)
    want = pd.DataFrame(flows)
    want["goodput_bps"] = [10000 * 8.0 / 2.0, 19200 * 8.0 / 2.0]
    want["throughput_bps"] = [10 * 1000 * 8.0 / 2.0, 20 * 1000 * 8.0 / 2.0]
    # (and the per-path columns the Plan's routes give: bottleneck, fair share)
    pd.testing.assert_frame_equal(res.flows[list(want.columns)], want, check_exact=True)
    pd.testing.assert_frame_equal(res.links, pd.DataFrame(links), check_exact=True)
    m = res.metrics
    assert m["tcp_retransmissions"] == 5 and "tcp_timeouts" not in m
    assert m["bottleneck_drops"] == 3 and "bottleneck_loss_rate" not in m, "no arrivals column"
    assert m["tcp_goodput_bps"] == 76800.0 and m["udp_throughput_bps"] == 40000.0
    assert m["groups"]["bg"]["share"] == 40000.0 / 116800.0
    assert m["jain_index"] == 1.0 and math.isnan(Result.from_raw(dict(raw, flows=flows[:1])).metrics["jain_index"])


def test_tables_are_built_once_and_changes_stay():
    res = tcplab.run(dumbbell({"a": TCP}))
    f = res.flows
    assert res.flows is f
    f["mine"] = 1
    assert list(res.flows["mine"]) == [1]
    res.links = res.links.iloc[:1]
    assert len(res.links) == 1
    # the constructor takes DataFrames (positionally, as before)
    r2 = Result("packet", "v", res.scenario, f, res.links, {"x": 1}, {})
    assert r2.flows is f and r2.traces == {} and r2.wall_s is None
    assert "packet" in repr(r2)


def test_run_leaves_the_callers_scenario_as_it_was(tmp_path):
    trace = tmp_path / "bg.csv"
    trace.write_text("t_s,rate_bps\n0,100000\n5,300000\n")
    sc = dumbbell({"a": TCP, "bg": {"kind": "udp", "rate": {"shape": "piecewise", "file": str(trace)}}})
    before = copy.deepcopy(sc)
    res = tcplab.run(sc, overrides=["flows.a.variant=newreno"], trace=["cwnd"])
    assert sc == before
    assert res.scenario["flows"]["bg"]["rate"]["points"][1][1] == "300kbps", "the file was read"
    assert res.scenario["flows"]["a"]["variant"] == "newreno" and "tcp" in res.traces
    plain = apply_overrides(sc, [])
    tcplab.run(plain)
    assert plain == before


def test_traces_and_summary_columns_are_writable_arrays():
    res = tcplab.run(dumbbell({"a": TCP}), trace=["cwnd"])
    res.flows.loc[0, "drops"] = 99
    assert res.flows.loc[0, "drops"] == 99
    assert isinstance(res.traces["tcp"]["t"].to_numpy(), np.ndarray)
