"""tcplab.metrics: each measure of the papers against a small example computed by hand."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tcplab import metrics as M
from tcplab.traces import canonical


# --- paper A: normalized throughput --------------------------------------------------

def test_reference_and_normalized_throughput():
    # paper A: C = 1 Mb/s, background mean C/2 → reference 0.5 Mb/s (the engine's Plan,
    # the one definition); 0.45 Mb/s of TCP is 0.9
    from tcplab.plan import plan
    from tcplab.scenario import load_scenario

    sc = load_scenario("scenarios/a-constant-udp.toml")
    assert plan(sc).reference_bps == pytest.approx(5e5)
    sc["measure"] = {"reference": "capacity"}
    assert plan(sc).reference_bps == pytest.approx(1e6)
    assert M.normalized_throughput(4.5e5, 5e5) == pytest.approx(0.9)


# --- paper B: goodputs and fairness --------------------------------------------------

def test_system_and_aggregated_goodput():
    assert M.system_goodput([1.0, 2.0, 3.0]) == 6.0
    agg = M.aggregated_goodput([1.0, 2.0, 3.0, 4.0], ["a", "b", "a", "b"])
    assert agg.to_dict() == {"a": 4.0, "b": 6.0}


def test_jain_index_values():
    assert M.jain_index([5, 5, 5, 5]) == 1.0
    assert M.jain_index([1, 0, 0, 0]) == 0.25          # one takes all: 1/n
    assert M.jain_index([1, 2, 3]) == pytest.approx(36 / 42)   # 6² / (3·14)
    assert M.jain_index([2, np.nan, 2]) == 1.0          # inactive flows are left out
    assert np.isnan(M.jain_index([]))
    rows = M.jain_index([[1, 3], [2, 2], [np.nan, np.nan]], axis=1)
    assert rows[0] == pytest.approx(16 / 20) and rows[1] == 1.0 and np.isnan(rows[2])


def test_jain_index_bounds():
    rng = np.random.default_rng(1)
    for n in (1, 2, 5, 50):
        for _ in range(200):
            x = rng.exponential(size=n) * (rng.random(n) < 0.7)
            j = M.jain_index(x)
            assert 1 / n - 1e-12 <= j <= 1 + 1e-12


def test_result_reexports_jain_index():
    from tcplab.result import jain_index

    assert jain_index is M.jain_index


def tcp_trace():
    # flow 0 is acked up to 4 at 0.5 s, 9 at 1.2 s, 19 at 2.5 s; flow 1 up to 2 at 1.5 s
    return pd.DataFrame({"t": [0.0, 0.1, 0.5, 1.2, 1.5, 2.5], "flow": [0, 1, 0, 0, 1, 0],
                         "ack": [-1, -1, 4, 9, 2, 19]})


def test_delivered_packets_count_data_after_the_syn():
    tr = tcp_trace()
    got = M.delivered_packets_at(tr["t"], tr["flow"], tr["ack"], [0, 1, 2, 3], [0, 1])
    assert got.tolist() == [[0, 4, 9, 19], [0, 0, 2, 2]]
    # without a SYN packet 0 carries data: ack k means k + 1 packets
    got = M.delivered_packets_at(tr["t"], tr["flow"], tr["ack"], [1, 3], [0], first_data_seq=0)
    assert got.tolist() == [[5, 20]]


def test_allotted_goodput_system_goodput_and_fairness():
    pay = pd.Series([1000.0, 1000.0], index=[0, 1])      # 8000 bit per packet
    al = M.allotted_goodput(tcp_trace(), pay, 1.0, 0.0, 3.0)
    assert al.index.tolist() == [0.0, 1.0, 2.0]
    assert al[0].tolist() == [32000, 40000, 80000]      # 4, 5, 10 packets
    assert al[1].tolist() == [0, 16000, 0]              # 0, 2, 0 packets
    assert M.allotted_system_goodput(al).tolist() == [32000, 56000, 80000]
    assert M.allotted_fairness(al).tolist() == pytest.approx([0.5, 56**2 / (2 * (40**2 + 16**2)), 0.5])
    # flow 1 starts at 1 s: not counted in [0, 1)
    flows = pd.DataFrame({"id": [0, 1], "start_s": [0.0, 1.0], "stop_s": [3.0, 3.0]})
    al = M.allotted_goodput(tcp_trace(), pay, 1.0, 0.0, 3.0, flows)
    assert np.isnan(al.at[0.0, 1])
    assert M.allotted_fairness(al).iloc[0] == 1.0
    assert M.allotted_system_goodput(al).iloc[0] == 32000


def test_success_percentage():
    # paper B's 70% success: slots with ≥ 0.7 Mb/s of a 1 Mb/s target; NaN = no attempt
    slots = [1.0e6, 0.7e6, 0.69e6, 0.0, np.nan]
    assert M.success_percentage(slots, 1e6, 0.7) == 50.0
    table = pd.DataFrame({0: [1e6, 0.0], 1: [0.8e6, 0.75e6]})
    assert M.success_percentage(table, 1e6, 0.7) == 75.0
    assert M.success_percentage(table, 1e6, 0.9) == 25.0


# --- paper C: loss events, congestion events, P(z|w), synchronization ------------------

DROP_T = [0.00, 0.05, 0.30, 0.31, 1.00]
DROP_FLOW = [0, 0, 0, 1, 0]


def test_loss_events_clump_a_flows_drops_within_the_gap():
    le = M.loss_events(DROP_T, DROP_FLOW, gap_s=0.1)
    assert le["t"].tolist() == [0.0, 0.3, 0.31, 1.0]
    assert le["flow"].tolist() == [0, 0, 1, 0]
    assert le["drops"].tolist() == [2, 1, 1, 1]
    assert len(M.loss_events([], [], 0.1)) == 0


def test_congestion_events_by_gap_and_by_bins():
    le = M.loss_events(DROP_T, DROP_FLOW, gap_s=0.1)
    ce = M.congestion_events(le["t"], le["flow"], 0.1)
    assert ce["t_start"].tolist() == [0.0, 0.3, 1.0]
    assert ce["t_end"].tolist() == [0.0, 0.31, 1.0]
    assert ce["loss_events"].tolist() == [1, 2, 1]
    assert ce["flows_hit"].tolist() == [1, 2, 1]
    bins = M.congestion_events(le["t"], le["flow"], 0.5, method="bins")
    assert bins["flows_hit"].tolist() == [2, 1]          # bin [0, 0.5): flows 0, 1; bin [1, 1.5): flow 0
    assert bins["loss_events"].tolist() == [3, 1]


def test_flows_hit_distribution_and_synchronization():
    d = M.flows_hit_distribution([1, 2, 1], 3)
    assert d["events"].tolist() == [2, 1, 0]
    assert d["fraction"].tolist() == pytest.approx([2 / 3, 1 / 3, 0])
    assert d["p_ge"].tolist() == pytest.approx([1, 1 / 3, 0])
    assert d["ccdf"].tolist() == pytest.approx([1 / 3, 0, 0])
    s = M.synchronization([1, 2, 1], 3, window_drop_corr=0.25)
    assert s["congestion_events"] == 3
    assert s["share_multi"] == pytest.approx(1 / 3)
    assert s["share_all"] == 0.0
    assert s["mean_flows_hit"] == pytest.approx(4 / 3)
    assert s["mean_fraction_hit"] == pytest.approx(4 / 9)
    assert s["window_drop_correlation"] == 0.25


def test_p_loss_given_window_on_synthetic_records():
    # bins of 1 s over [0, 4); window = ⌊cwnd⌋ at each bin's start
    #   flow 0: w = 2, 2, 4, 2    flow 1: (none yet), 4, 4, 2
    tcp = pd.DataFrame({"t": [0.0, 0.5, 1.5, 2.5, 3.0], "flow": [0, 1, 0, 0, 1],
                        "cwnd": [2.0, 4.0, 4.7, 2.2, 2.0]})
    # drops: flow 0 twice in bin 2, flow 1 in bins 1 and 3, flow 5 (UDP) ignored
    drops = pd.DataFrame({"t": [2.2, 2.9, 1.1, 3.5, 0.5], "flow": [0, 0, 1, 1, 5]})
    p = M.p_loss_given_window(tcp, drops, 1.0, 0.0, 4.0, flows=[0, 1])
    assert p["w"].tolist() == [2, 4]
    assert p["samples"].tolist() == [4, 3]
    assert p["hits"].tolist() == [1, 2]
    assert p["p"].tolist() == pytest.approx([1 / 4, 2 / 3])


def test_window_drop_correlation():
    # flows 0 and 1 cut their windows in bins 0 and 2, flow 2 in bins 1 and 3:
    # correlations +1, −1, −1 → mean −1/3
    rows = [(0, [0, 0.5, 0.6, 2.3, 2.4], [4, 2, 3, 1, 2]), (1, [0, 0.5, 0.6, 2.3, 2.4], [4, 2, 3, 1, 2]),
            (2, [0, 1.5, 1.6, 3.5], [4, 2, 3, 1])]
    tcp = pd.concat([pd.DataFrame({"t": t, "flow": f, "cwnd": c}) for f, t, c in rows]).sort_values("t", kind="stable")
    assert M.window_drop_correlation(tcp, 1.0, 0.0, 4.0) == pytest.approx(-1 / 3)
    assert M.window_drop_correlation(tcp[tcp["flow"] < 2], 1.0, 0.0, 4.0) == pytest.approx(1.0)
    assert np.isnan(M.window_drop_correlation(tcp[tcp["flow"] == 0], 1.0, 0.0, 4.0))


# --- paper D: slow-start phases per cycle ----------------------------------------------

def phases(*ps):
    """cwnd and ssthresh of consecutive slow-start phases, each (cwnds, ssthresh)."""
    c = [w for ws, _ in ps for w in ws]
    s = [th for ws, th in ps for _ in ws]
    return np.array(c, float), np.array(s, float)


def ramp(lo, hi):
    return list(range(lo, hi + 1))


def test_slowstart_cycles_of_a_hand_built_tahoe_trace():
    # Paper D's cycles, written out by hand: a slow start begins at cwnd = 1; its
    # loss occurred in slow start unless cwnd was ≥ 2 packets (2 RTTs of congestion
    # avoidance) above ssthresh when it was detected; a cycle ends with the phase
    # whose loss came in congestion avoidance, at W_max (60 here).
    c, s = phases(
        (ramp(1, 40), 1000),                 # start-up: slow-start loss at 40
        (ramp(1, 20) + ramp(21, 60), 20),    # congestion avoidance to 60: the start-up cycle ends (left out)
        # triple (Sec. 7: "gets shortly in congestion avoidance before detecting the loss")
        (ramp(1, 24), 30),                   # loss in slow start, detected at 24 < 30
        (ramp(1, 12) + [12.9], 12),          # reaches ssthresh 12, loss detected 0.9 above it
        (ramp(1, 6) + ramp(7, 60), 6),       # congestion avoidance to W_max = 60
        # double
        (ramp(1, 24), 30),
        (ramp(1, 12) + ramp(13, 60), 12),
        # single: the first slow start reaches its threshold without a loss
        (ramp(1, 30) + ramp(31, 60), 30),
        # triple whose second loss is detected exactly at ssthresh (paper D's B = 21)
        (ramp(1, 24), 30),
        (ramp(1, 12), 12),
        (ramp(1, 6) + ramp(7, 60), 6),
        (ramp(1, 10), 30),                   # unfinished cycle: the run ends (left out)
    )
    t = np.arange(c.size, dtype=float) * 0.01
    cy = M.tahoe_cycles(t, c, s)
    assert cy["slowstarts"].tolist() == [3, 2, 1, 3]
    assert cy["w_s"].tolist() == [6, 12, 30, 6]
    assert cy["w_e"].tolist() == [60, 60, 60, 60]
    assert cy["w_first"].tolist()[:2] == [12, 12] and np.isnan(cy["w_first"].iloc[2]) and cy["w_first"].iloc[3] == 12
    assert M.slowstart_cycles(c, s).tolist() == [3, 2, 1, 3]
    assert M.slowstart_cycles(c, s, t=t).tolist() == [3, 2, 1, 3]
    assert M.slowstart_phase_counts([3, 2, 1, 3]) == {"single": 1, "double": 1, "triple": 2}
    # a cycle's times: its first reset, its last slow start's reset, the detection of its CA loss
    first = 40 + 60                          # rows of the start-up and its congestion-avoidance phase
    assert cy["t_start"].iloc[0] == pytest.approx(t[first])
    assert cy["t_end"].iloc[0] == pytest.approx(t[first + 24 + 13])
    assert cy["t_loss"].iloc[0] == pytest.approx(t[first + 24 + 13 + 60])


def test_slowstart_counts_of_a_steady_double_cycle():
    one = [(ramp(1, 16), 32), (ramp(1, 8) + ramp(9, 30), 8)]   # SS loss, then SS into CA up to 30
    c, s = phases(*(one * 4), ([1], 15))     # the last CA loss is detected: its cycle is complete
    assert M.slowstart_cycles(c, s).tolist() == [2, 2, 2]
    assert M.slowstart_phase_counts([2, 2, 2]) == {"single": 0, "double": 3, "triple": 0}
    assert M.slowstart_phase_counts([]) == {"single": 0, "double": 0, "triple": 0}
    assert M.slowstart_phase_counts([4]) == {"single": 0, "double": 0, "triple": 0, "4x": 1}
    assert M.slowstart_cycles([1.0, 2.0, 4.0], [64.0] * 3).tolist() == []   # no reset at all


def test_paper_d_b21_is_a_triple_slow_start_every_cycle():
    # B = 21 waiting slots (ns-2 queue-limit 22): the second slow start's loss occurs
    # as cwnd reaches its threshold (53) and is detected in congestion avoidance; three
    # resets of cwnd to 1 per cycle, and the third slow start's threshold is W_B/2 = 26.
    # It used to read as alternating single and double cycles.
    import tcplab

    scenario = Path(__file__).resolve().parent.parent / "scenarios" / "d-tahoe-satellite.toml"
    counts = {}
    for b in (20, 21):
        res = tcplab.run(scenario, overrides=[f"topology.bottleneck.buffer={b}"], trace=["cwnd", "drops"])
        counts[b] = M.summarize(res)["slowstart_cycles"]
    assert counts[20]["single"] == counts[20]["triple"] == 0 and counts[20]["double"] >= 3
    assert counts[21]["single"] == counts[21]["double"] == 0 and counts[21]["triple"] >= 3


# --- traces of both engines in one shape -----------------------------------------------

def test_canonical_merges_ns2_tables_and_names_links():
    ns2 = {
        "cwnd": pd.DataFrame({"t": [0.0, 1.0], "flow": [1, 1], "cwnd": [1.0, 2.0], "ssthresh": [20, 20]}),
        "seq": pd.DataFrame({"t": [0.0, 0.5], "flow": [1, 1], "seq": [0, 2], "ack": [-1, 0]}),
        "queue": pd.DataFrame({"t": [0.1, 0.2, 0.2], "link": "bottleneck", "packets": [1, 2, 1]}),
        "drops": pd.DataFrame({"t": [0.3], "link": "bottleneck", "flow": [0]}),
    }
    links = pd.DataFrame({"name": ["bottleneck", "bottleneck"], "direction": ["forward", "reverse"]})
    c = canonical(ns2, links)
    assert c["tcp"]["t"].tolist() == [0.0, 0.5, 1.0]
    assert c["tcp"]["cwnd"].tolist() == [1.0, 1.0, 2.0]        # carried forward
    assert c["tcp"]["ack"].tolist() == [-1, 0, 0]
    assert c["queue"]["link"].tolist() == [0, 0]
    assert c["queue"]["packets"].tolist() == [1, 1]            # the state after each instant
    assert c["drops"]["link"].tolist() == [0]
    assert canonical(c)["tcp"].equals(c["tcp"])                 # idempotent


def test_canonical_packet_queue_totals_by_class():
    q = pd.DataFrame({"t": [0.1, 0.1, 0.2], "link": [0, 0, 0], "tcp": [1, 1, 2], "udp": [1, 0, 0]})
    c = canonical({"queue": q})["queue"]
    assert c["packets"].tolist() == [1, 2] and c["tcp"].tolist() == [1, 2]


# --- end to end ------------------------------------------------------------------------

def small(n=3, **over):
    from tcplab.scenario import apply_overrides

    sc = {
        "name": "metrics-e2e", "duration": "60s", "warmup": "10s", "seed": 3,
        "topology": {
            "bottleneck": {"rate": "2Mbps", "delay": "20ms", "buffer": 10},
            "access": {"rate": "20Mbps", "delay": "5ms", "buffer": 1000},
            "sink_access": {"rate": "20Mbps", "delay": "5ms", "buffer": 1000},
        },
        "flows": {"tcp": {"kind": "tcp", "variant": "newreno", "count": n, "start_jitter": "1s"}},
    }
    return apply_overrides(sc, list(over.items()))


def test_end_to_end_metrics_of_a_packet_run():
    import tcplab

    res = tcplab.run(small(), trace=["cwnd", "seq", "drops", "queue"])
    s = M.summarize(res)
    assert s["base_rtt_s"] == pytest.approx(0.06)
    # the per-second goodputs, summed over the window, are the counters' goodput
    # up to what is in flight at its edges (a few windows of 960-byte payloads)
    slack = 3 * 50 * 960 * 8 / 50.0
    assert s["allotted_system_goodput_mean_bps"] == pytest.approx(res.metrics["tcp_goodput_bps"], abs=slack)
    assert s["system_goodput_bps"] == pytest.approx(res.metrics["tcp_goodput_bps"])
    assert 1 / 3 <= s["allotted_fairness_min"] <= s["allotted_fairness_mean"] <= 1
    assert 0 <= s["success_percentage"] <= 100
    # every drop belongs to a loss event, every loss event to a congestion event
    assert 0 < s["synchronization"]["congestion_events"] <= s["loss_events"] <= s["drops"]
    assert sum(s["flows_hit"].values()) == s["synchronization"]["congestion_events"]
    assert set(s["flows_hit"]) == {1, 2, 3}
    assert -1 <= s["synchronization"]["window_drop_correlation"] <= 1
    assert all(0 <= p <= 1 for p in s["p_loss_given_window"].values())
    assert set(s["slowstart_cycles"]) >= {"single", "double", "triple"}
    # a DropTail bottleneck without error models only overflows
    from tcplab.traces import canonical

    drops = canonical(res.traces)["drops"]
    assert len(drops) >= s["drops"] > 0 and set(drops["cause"].astype(str)) == {"overflow"}


def test_tahoe_with_a_small_buffer_slow_starts_at_least_twice_per_cycle():
    # paper D: B = 20 ≪ μτ ≈ 205 packets, so the first slow start of each cycle
    # overflows the buffer before reaching its threshold — never a single one
    import tcplab

    res = tcplab.run(Path(__file__).resolve().parent.parent / "scenarios" / "d-tahoe-satellite.toml", trace=["cwnd"])
    counts = M.summarize(res)["slowstart_cycles"]
    assert counts["single"] == 0
    assert counts["double"] + counts["triple"] >= 3


@pytest.mark.ns2
def test_end_to_end_metrics_of_an_ns2_run():
    import tcplab

    res = tcplab.run(small(), engine="ns2", trace=["cwnd", "seq", "drops", "queue"])
    s = M.summarize(res)
    slack = 3 * 50 * 960 * 8 / 50.0
    assert s["allotted_system_goodput_mean_bps"] == pytest.approx(res.metrics["tcp_goodput_bps"], abs=slack)
    assert 0 < s["synchronization"]["congestion_events"] <= s["loss_events"] <= s["drops"]
    assert s["p_loss_given_window"]
