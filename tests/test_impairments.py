"""Impairments and flow dynamics in the packet engine (issue 5): outages lose
everything inside them and nothing outside, Gilbert-Elliott errors lose the
stationary rate in bursts of 1/p_bg, joins and leaves happen at the
scheduled times. Facts checked packet by packet against times computed here
from the link parameters, not from the engine."""

import json

import numpy as np
import pytest

import tcplab
from tcplab.errors import UserError
from tcplab.scenario import _core, load_scenario
from tcplab.traces import DROP_CAUSES

OUTAGE = DROP_CAUSES.index("outage")
ERROR = DROP_CAUSES.index("error")

MS = 1e-3
#: A UDP probe: 1000-byte packets every 8 ms (1 Mb/s) from t = 0 over three
#: 10 Mb/s links of 5 ms (0.8 ms transmission each), so nothing ever queues.
PROBE = {
    "duration": "40s", "seed": 5,
    "topology": {"bottleneck": {"rate": "10Mbps", "delay": "5ms", "buffer": 40},
                 "access": {"rate": "10Mbps", "delay": "5ms", "buffer": 40},
                 "sink_access": {"rate": "10Mbps", "delay": "5ms", "buffer": 40}},
    "flows": {"probe": {"kind": "udp", "rate": "1Mbps"}},
    "trace": {"series": ["drops", "udp"]},
}
HOP_S = 0.8 * MS + 5 * MS


def _outages(sc, link):
    resolved = load_scenario(sc)
    return [(a / 1e9, b / 1e9) for a, b in _core().link_outages(json.dumps(resolved), link)]


@pytest.mark.parametrize("link,outages", [
    ("sink_access", {"start": "5s", "every": "5s", "duration": "1s", "distribution": "exponential"}),
    ("sink_access", {"at": ["10s", "30s"], "duration": "2s"}),
    ("access", {"start": "2.5s", "every": "7s", "duration": "0.75s"}),
])
def test_outages_lose_everything_inside_them_and_nothing_outside(link, outages):
    sc = json.loads(json.dumps(PROBE))
    sc["topology"][link]["outages"] = outages
    hops_before = 0 if link == "access" else 2   # links crossed before the one that goes down
    intervals = _outages(sc, 2 if link == "access" else 4)
    assert len(intervals) >= 2
    res = tcplab.run(sc)
    sent = np.arange(int(40 / (8 * MS)))          # seq k leaves the source at 8 k ms
    arrive = sent * 8 * MS + hops_before * HOP_S  # ... and reaches the impaired link then
    # lost: arrives while the link is down, or is still on it (0.8 ms
    # transmission + 5 ms propagation) when it goes down
    lost = np.zeros(len(sent), bool)
    for a, b in intervals:
        lost |= (arrive >= a) & (arrive < b)
        lost |= (arrive < a) & (arrive + HOP_S > a)
    delivered_by = 40 - 3 * HOP_S                 # later packets are still in flight at the end
    expect_delivered = set(sent[~lost & (arrive + (3 - hops_before) * HOP_S <= delivered_by)])
    got = set(res.traces["udp"]["seq"].tolist())
    inside = got & set(sent[lost].tolist())
    assert not inside, f"delivered during an outage: {sorted(inside)[:5]}"
    assert expect_delivered <= got
    d = res.traces["drops"]
    assert set(d["cause"]) == {OUTAGE}
    done = arrive + HOP_S < 40  # off the impaired link before the run ends
    assert set(d["seq"]) & set(sent[done]) == set(sent[lost & done])


def test_outages_take_both_directions_down():
    """A TCP flow's acks are lost too: the reverse direction of the sink link drops."""
    sc = json.loads(json.dumps(PROBE))
    sc["flows"] = {"tcp": {"kind": "tcp"}}
    sc["topology"]["sink_access"]["outages"] = {"at": ["10s"], "duration": "1s"}
    res = tcplab.run(sc)
    links = res.links.set_index(["name", "direction"])
    assert links.loc[("sink_access[0]", "forward"), "errors"] > 0
    assert links.loc[("sink_access[0]", "reverse"), "errors"] > 0
    d = res.traces["drops"]
    d = d[d["cause"] == OUTAGE]
    assert set(d["link"]) == {4, 5}
    # the first loss is at most one packet time + propagation before 10 s, the last inside it
    assert 10 - 0.81 * MS - 5 * MS <= d["t"].min() and d["t"].max() < 11


def test_a_link_without_outages_is_untouched():
    """An outage schedule on one flow's link leaves another flow's path alone."""
    sc = json.loads(json.dumps(PROBE))
    sc["flows"] = {"a": {"kind": "udp", "rate": "1Mbps",
                         "sink_access": {"outages": {"at": ["10s"], "duration": "1s"}}},
                   "b": {"kind": "udp", "rate": "1Mbps"}}
    res = tcplab.run(sc)
    d = res.traces["drops"]
    assert set(d["flow"]) == {0}
    sent = np.arange(int(40 / (8 * MS)))
    assert res.flows.loc[1, "delivered_packets"] == np.count_nonzero(sent * 8 * MS + 3 * HOP_S <= 40)


def test_exponential_outage_durations_have_the_mean():
    """300 handoffs every 5 s, durations Exp(mean 1 s): σ of the mean is 1/√300."""
    sc = json.loads(json.dumps(PROBE))
    sc["duration"] = "1500s"
    sc["topology"]["sink_access"]["outages"] = {"start": "5s", "every": "5s", "duration": "1s",
                                                "distribution": "exponential"}
    iv = _outages(sc, 4)
    assert len(iv) > 280  # a few merge when one outage outlasts the period
    starts = np.array([a for a, _ in iv])
    assert np.allclose(np.diff(starts) % 5, 0, atol=1e-9) and starts[0] == 5
    # merged intervals only lengthen; the mean of the unmerged draws is within 4σ
    mean = np.mean([b - a for a, b in iv])
    assert abs(mean - 1.0) < 4 / np.sqrt(len(iv)) + 0.05


@pytest.mark.parametrize("p_gb,p_bg,per_good,per_bad", [(0.01, 0.3, 0.0, 1.0), (0.02, 0.5, 0.001, 0.6)])
def test_gilbert_elliott_errors_lose_the_stationary_rate(p_gb, p_bg, per_good, per_bad):
    """UDP over a GE sink link, 250 000 packets. Consecutive packets are
    correlated (ρ = 1 − p_gb − p_bg), which inflates the variance of the
    loss rate by (1+ρ)/(1−ρ); allow 4σ."""
    sc = json.loads(json.dumps(PROBE))
    sc["duration"] = "100s"
    sc["flows"]["probe"]["rate"] = "20Mbps"
    for l in ("bottleneck", "access", "sink_access"):
        sc["topology"][l]["rate"] = "100Mbps"
    sc["topology"]["sink_access"]["errors"] = {"model": "gilbert-elliott", "p_gb": p_gb, "p_bg": p_bg,
                                               "per_good": per_good, "per_bad": per_bad}
    res = tcplab.run(sc)
    d = res.traces["drops"]
    assert set(d["cause"]) == {ERROR}
    arrivals = int(res.links.query("name == 'sink_access[0]' and direction == 'forward'")["arrivals"].iloc[0])
    pi_bad = p_gb / (p_gb + p_bg)
    expect = (1 - pi_bad) * per_good + pi_bad * per_bad
    rho = 1 - p_gb - p_bg
    sigma = np.sqrt(expect * (1 - expect) * (1 + rho) / (1 - rho) / arrivals)
    assert abs(len(d) / arrivals - expect) < 4 * sigma, (len(d) / arrivals, expect)
    if per_good == 0 and per_bad == 1:
        # bursts: runs of consecutive lost sequence numbers; geometric, mean 1/p_bg
        seq = np.sort(d["seq"].to_numpy())
        bursts = 1 + np.count_nonzero(np.diff(seq) > 1)
        mean_burst = len(seq) / bursts
        sd = np.sqrt(1 - p_bg) / p_bg
        assert abs(mean_burst - 1 / p_bg) < 4 * sd / np.sqrt(bursts), mean_burst


B_SMALL = {
    "duration": "60s", "seed": 2,
    "topology": {"bottleneck": {"rate": "10Mbps", "delay": "25ms", "buffer": 100},
                 "access": {"rate": "10Mbps", "delay": "5ms", "buffer": 100},
                 "sink_access": {"rate": "10Mbps", "delay": "5ms", "buffer": 100}},
    "flows": {},
    "trace": {"series": ["seq"]},
}


def _first_last_send(res):
    s = res.traces["sends"]
    g = s.groupby("flow")["t"]
    return g.min(), g.max()


def test_joins_happen_at_the_scheduled_times():
    """12 flows: 3 at first, doubling at 15 s and 20 s (3 → 6 → 12)."""
    sc = json.loads(json.dumps(B_SMALL))
    sc["flows"]["tcp"] = {"kind": "tcp", "count": 12,
                          "joins": {"initial": 3, "at": "15s", "every": "5s", "factor": 2}}
    res = tcplab.run(sc)
    first, _ = _first_last_send(res)
    expect = [0.0] * 3 + [15.0] * 3 + [20.0] * 6
    assert res.flows["start_s"].tolist() == expect
    assert first.reindex(range(12)).tolist() == expect  # a TCP flow's SYN leaves as it starts


def test_leaves_happen_at_the_scheduled_times():
    """10 flows halving at 15, 20, 25 s: 10 → 5 → 2 → 1 (⌊n/2⌋, at least
    min = 1), highest index first.
    A flow that leaves sends no new data after its stop; it may still
    retransmit what was outstanding, so its last send is within a few RTOs."""
    sc = json.loads(json.dumps(B_SMALL))
    sc["flows"]["tcp"] = {"kind": "tcp", "count": 10,
                          "leaves": {"at": "15s", "every": "5s", "factor": 0.5}}
    res = tcplab.run(sc)
    expect = [60.0, 25.0, 20.0, 20.0, 20.0, 15.0, 15.0, 15.0, 15.0, 15.0]
    assert res.flows["stop_s"].tolist() == expect
    s = res.traces["sends"]
    for f, stop in enumerate(expect):
        new_data = s[(s["flow"] == f) & (s["rtx"] == 0)]
        assert new_data["t"].max() <= stop
        if stop < 60:
            assert new_data["t"].max() > stop - 0.5, f  # it was sending up to its stop
            assert s[s["flow"] == f]["t"].max() < stop + 5


def test_start_jitter_applies_after_a_join():
    sc = json.loads(json.dumps(B_SMALL))
    sc["flows"]["tcp"] = {"kind": "tcp", "count": 4, "start_jitter": "1s",
                          "joins": {"initial": 2, "at": "15s", "every": "5s", "factor": 2}}
    starts = tcplab.run(sc).flows["start_s"].to_numpy()
    assert (starts[:2] < 1).all() and ((starts[2:] >= 15) & (starts[2:] < 16)).all()


@pytest.mark.parametrize("group,message", [
    ({"joins": {"initial": 2, "at": "5s", "every": "5s", "factor": 0.5}}, "flows.tcp.joins.factor"),
    ({"joins": {"initial": 20, "at": "5s", "every": "5s", "factor": 2}}, "flows.tcp.joins.initial"),
    ({"leaves": {"at": "5s", "every": "5s", "factor": 2}}, "flows.tcp.leaves.factor"),
    ({"stop": "20s", "leaves": {"at": "5s", "every": "5s", "factor": 0.5}}, "flows.tcp.stop"),
])
def test_bad_schedules_are_user_errors(group, message):
    sc = json.loads(json.dumps(B_SMALL))
    sc["flows"]["tcp"] = {"kind": "tcp", "count": 10, **group}
    with pytest.raises(UserError, match=message.replace(".", r"\.")):
        tcplab.run(sc)


# ----------------------------------------------------------------- mixed populations

def test_groups_report_their_aggregates():
    """Paper B8's per-protocol numbers: each group's goodput is the sum of its
    flows', shares add up to one, Jain's index is taken within the group."""
    r = tcplab.run("scenarios/b-friendliness.toml", overrides=["duration=30s", "warmup=5s"])
    groups, flows = r.metrics["groups"], r.flows
    assert set(groups) == {"smooth", "standard"}
    for name, g in groups.items():
        mine = flows[flows["group"] == name]["goodput_bps"]
        assert g["flows"] == 5
        assert g["goodput_bps"] == pytest.approx(mine.sum())
        assert g["normalized_goodput"] == pytest.approx(mine.sum() / 10e6)
        assert g["jain_index"] == pytest.approx(mine.sum() ** 2 / (5 * (mine ** 2).sum()))
    assert sum(g["share"] for g in groups.values()) == pytest.approx(1.0)
    assert r.metrics["jain_index"] == pytest.approx(
        flows["goodput_bps"].sum() ** 2 / (10 * (flows["goodput_bps"] ** 2).sum()))


def test_two_identical_groups_split_the_link_evenly():
    """Two groups of five TCP(1, ½) flows: each gets half. Over seeds 1-6 (60 s
    runs) a group's share has σ ≈ 0.013, so the 6-seed mean has σ ≈ 0.0053;
    allow 4σ."""
    shares = [tcplab.run("scenarios/b-friendliness.toml",
                         overrides=[f"seed={s}", "duration=60s", "flows.smooth.alpha=1",
                                    "flows.smooth.beta=0.5"]).metrics["groups"]["smooth"]["share"]
              for s in range(1, 7)]
    assert abs(np.mean(shares) - 0.5) < 4 * 0.0053, shares


def test_a_loss_list_loses_exactly_the_listed_arrivals():
    """UDP alone: the k-th packet to arrive at the sink link is the k-th sent
    (seq k), so the lost sequence numbers are the list; errors spare acks
    and the reverse direction."""
    sc = json.loads(json.dumps(PROBE))
    drops = [0, 5, 6, 7, 100, 2_000]
    sc["topology"]["sink_access"]["errors"] = {"model": "list", "packets": drops}
    res = tcplab.run(sc)
    d = res.traces["drops"]
    assert set(d["cause"]) == {ERROR}
    assert sorted(d["seq"].tolist()) == drops
    sc["topology"]["sink_access"]["errors"]["packets"] = [3, 2]
    with pytest.raises(UserError, match=r"topology.sink_access.errors.packets\[1\]"):
        tcplab.run(sc)
