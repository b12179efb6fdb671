"""The linux engine: real Linux TCP between two network namespaces, the
bottleneck emulated by tcplab-emu with the engine's own link code.

The smoke test needs root, /dev/net/tun and network namespaces; where they are
missing it is skipped with the reason (run pytest with -rs to see it). The
checks of what the engine refuses run everywhere.
"""

from __future__ import annotations

import os
import subprocess

import numpy as np
import pytest

import tcplab
from tcplab.backends import linux
from tcplab.errors import UserError

WHY_NOT = linux.available()
needs_linux = pytest.mark.skipif(WHY_NOT is not None, reason=f"linux engine unavailable: {WHY_NOT}")

RATE, DELAY, BUFFER, SIZE = 1e6, 0.020, 40, 1000


def smoke(**extra) -> dict:
    sc = {
        "name": "linux-smoke",
        "duration": "30s",
        "warmup": "5s",
        "topology": {
            "bottleneck": {"rate": "1Mbps", "delay": "20ms", "buffer": BUFFER},
            "access": {"rate": "100Mbps", "delay": "0ms", "buffer": 1000},
            "sink_access": {"rate": "100Mbps", "delay": "0ms", "buffer": 1000},
        },
        "flows": {"tcp": {"kind": "tcp", "variant": "reno", "profile": "linux"}},
    }
    sc.update(extra)
    return sc


def sawtooth_peaks(tcp, warmup_s: float) -> list[float]:
    """The window at the last sample in congestion avoidance (ca_state Open)
    before each entry into recovery or loss (ca_state ≥ 3), after warm-up."""
    t, cw, st = tcp["t"].to_numpy(), tcp["cwnd"].to_numpy(), tcp["ca_state"].to_numpy()
    peaks = []
    for i in range(1, len(st)):
        if st[i] >= 3 and st[i - 1] < 3 and t[i] > warmup_s:
            peaks.append(float(cw[i - 1]))
    return peaks


@needs_linux
def test_one_reno_flow_fills_the_link_and_peaks_at_buffer_plus_bdp():
    res = tcplab.run(smoke(), engine="linux", trace=["cwnd", "drops"])
    m = res.metrics
    assert res.engine == "linux"
    # A single Reno flow with a buffer of 40 packets ≫ BDP (5 packets) never
    # lets the queue drain: the link is busy the whole measured time.
    assert m["bottleneck_utilization"] > 0.99, m
    # The receiver got what the link carried: payload of every delivered packet
    # (IP packets of SIZE bytes) — within one window of the link's departures.
    fwd = res.links[res.links["direction"] == "forward"].iloc[0]
    payload = res.flows.iloc[0]["delivered_bytes"]
    assert abs(payload / (SIZE - 52) - fwd["departures"]) < 60, (payload, fwd["departures"])
    # Sawtooth peaks: the pipe holds B waiting + 1 in transmission + the packets
    # whose acks are on their way back: 2·d + ack serialization (52-byte ack
    # with timestamps) at one packet per SIZE·8/C: W = B + 1 + μτ ≈ 46.05.
    # Linux detects the overflow about one RTT (~0.37 s, ≈ +1 window in
    # congestion avoidance) later, and a delayed ack holds up to one more
    # packet unacked, so the peak sits in [W − 1, W + 3].
    tx = SIZE * 8 / RATE
    mu_tau = (2 * DELAY + 52 * 8 / RATE) / tx
    w = BUFFER + 1 + mu_tau
    peaks = sawtooth_peaks(res.traces["tcp"], 5.0)
    assert len(peaks) >= 2, peaks
    assert all(w - 1 <= p <= w + 3 for p in peaks), (w, peaks)
    # Every loss is a buffer overflow on the forward bottleneck, and each was
    # recovered by a retransmission.
    d = res.traces["drops"]
    assert (d["cause"] == 0).all() and (d["link"] == 0).all()
    assert res.flows.iloc[0]["retransmissions"] >= m["bottleneck_drops"] >= len(peaks)
    # The emulator kept time at real-time priority.
    timing = m["linux"]["emulator"]
    assert timing["realtime"] == "SCHED_FIFO"
    assert timing["deliveries"] > 0
    # Nothing is left behind.
    ns = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    assert f"tl-snd-{os.getpid()}-" not in ns and f"tl-rcv-{os.getpid()}-" not in ns


@needs_linux
def test_stale_namespaces_of_a_killed_run_are_removed():
    name = "tl-snd-999999999-0"  # no such process
    subprocess.run(["ip", "netns", "add", name], check=True)
    try:
        assert name in linux.cleanup_stale()
        assert name not in subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    finally:
        subprocess.run(["ip", "netns", "del", name], capture_output=True)


def test_non_root_gets_a_clear_error(monkeypatch):
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    with pytest.raises(UserError, match="needs root"):
        tcplab.run(smoke(), engine="linux")


@pytest.mark.parametrize("change, path", [
    ({"flows": {"tcp": {"kind": "tcp", "variant": "tahoe"}}}, "flows.tcp.variant"),
    ({"flows": {"tcp": {"kind": "tcp", "beta": 0.7}}}, "flows.tcp.beta"),
    ({"trace": {"series": ["queue"]}}, "trace.series"),
    ({"flows": {"tcp": {"kind": "tcp"}, "bg": {"kind": "udp", "rate": "0.1Mbps"},
                "late": {"kind": "tcp", "access": {"delay": "30ms"}}}}, "flows.tcp"),
])
def test_what_linux_cannot_honour_is_refused(change, path, monkeypatch):
    from tcplab.scenario import load_scenario

    sc = load_scenario(smoke(**change))
    with pytest.raises(UserError, match=path.replace(".", r"\.")):
        linux._plan(sc)


def test_access_errors_are_refused():
    from tcplab.scenario import load_scenario

    sc = smoke()
    sc["topology"]["sink_access"]["errors"] = {"model": "bernoulli", "per": 0.01}
    with pytest.raises(UserError, match=r"topology\.sink_access\.errors"):
        linux._plan(load_scenario(sc))


def test_ns2_profile_switches_linux_extras_off():
    from tcplab.scenario import load_scenario

    ns2 = {"tcp": {"kind": "tcp", "variant": "reno"}}  # profile unset: ns-2 2.35's
    p = linux._plan(load_scenario(smoke(flows=ns2)))["opts"]
    assert p == {"cc": "reno", "sack": False, "rack": False, "tlp": False, "frto": False,
                 "timestamps": False, "initial_cwnd": 2, "min_rto_s": 0.2, "quickack": True}
    ns2["tcp"].update(cc="cubic", variant="sack")  # CUBIC runs with SACK (docs/matrix.md)
    p = linux._plan(load_scenario(smoke(flows=ns2, linux={"min_rto": "1s"})))["opts"]
    assert p["min_rto_s"] == 1.0 and p["cc"] == "cubic"
    d = linux._plan(load_scenario(smoke()))["opts"]
    assert d["sack"] and d["rack"] and d["tlp"] and d["initial_cwnd"] is None and d["min_rto_s"] is None


def test_one_kernel_profile_for_all_tcp_groups():
    from tcplab.scenario import load_scenario

    sc = smoke(flows={"a": {"kind": "tcp", "profile": "linux"}, "b": {"kind": "tcp"}})
    with pytest.raises(UserError, match=r"flows\.b\.profile"):
        linux._plan(load_scenario(sc))


def test_the_peak_finder_sees_each_recovery_once():
    import pandas as pd

    tcp = pd.DataFrame({"t": np.arange(8.0), "cwnd": [10, 11, 12, 12, 6, 7, 8, 4],
                        "ca_state": [0, 0, 0, 3, 3, 0, 0, 4]})
    assert sawtooth_peaks(tcp, 0.0) == [12.0, 8.0]


def test_congestion_control_per_group():
    from tcplab.scenario import load_scenario

    sc = smoke(flows={"a": {"kind": "tcp", "variant": "sack"}, "b": {"kind": "tcp", "count": 2, "cc": "cubic", "variant": "sack"}})
    plan = linux._plan(load_scenario(sc))
    assert [(f["group"], f["cc"]) for f in plan["tcp"]] == [("a", "reno"), ("b", "cubic"), ("b", "cubic")]


@pytest.mark.parametrize("old, path, new", [
    ({"cc": "cubic"}, "linux.cc", 'cc = "cubic"'),
    ({"group_cc": {"tcp": "cubic"}}, "linux.group_cc", 'flows.tcp.cc = "cubic"'),
    ({"profile": "linux"}, "linux.profile", 'profile = "linux"'),
    ({"profile": "ns2"}, "linux.profile", 'profile = "ns2-2.35"'),
])
def test_the_old_linux_keys_say_where_they_went(old, path, new):
    from tcplab.scenario import load_scenario

    with pytest.raises(UserError) as e:
        load_scenario(smoke(linux=old))
    assert path in str(e.value) and new in str(e.value)


def staggered(**extra) -> dict:
    """Three TCP groups: start jitter; a join schedule (1 → 2 → 4 flows) after a
    start offset; a leave schedule (4 → 2 → 1 flows)."""
    return smoke(seed=7, duration="12s", warmup="0s", flows={
        "a": {"kind": "tcp", "count": 3, "start_jitter": "2s"},
        "b": {"kind": "tcp", "count": 4, "start": "1s", "start_jitter": "0.5s",
              "joins": {"initial": 1, "at": "3s", "every": "2s", "factor": 2}},
        "c": {"kind": "tcp", "count": 4, "start_jitter": "0.3s",
              "leaves": {"at": "4s", "every": "2s", "factor": 0.5, "min": 1}},
    }, **extra)


def test_flows_start_and_stop_when_the_packet_engine_starts_and_stops_them():
    """Start jitter, joins and leaves: the linux engine opens each connection at
    the instant the packet engine sends the flow's first packet, and stops
    writing when the packet engine's flow stops sending new data (no root needed)."""
    from tcplab.scenario import load_scenario

    sc = staggered()
    plan = linux._plan(load_scenario(sc))
    res = tcplab.run(sc, engine="packet", trace=["seq"])
    sends = res.traces["sends"]
    first = sends.groupby("flow")["t"].min()
    # after its stop a flow sends no new data (it may still retransmit)
    last = sends[sends["rtx"] == 0].groupby("flow")["t"].max()
    assert [f["id"] for f in plan["tcp"]] == list(range(11))
    for f in plan["tcp"]:
        # the packet engine's first send (the SYN) is the flow's start, to the nanosecond
        assert abs(first[f["id"]] - f["start_ns"] / 1e9) < 1e-9, (f, first[f["id"]])
        assert last[f["id"]] <= f["stop_ns"] / 1e9 + 1e-9, (f, last[f["id"]])
    starts = {f["id"]: f["start_ns"] / 1e9 for f in plan["tcp"]}
    stops = {f["id"]: f["stop_ns"] / 1e9 for f in plan["tcp"]}
    # the schedules themselves: group b joins at 3 s and 5 s, group c halves at 4 s and 6 s
    assert 1.0 <= starts[3] < 1.5 and 3.0 <= starts[4] < 3.5 and 5.0 <= starts[5] < 5.5 <= starts[6] + 0.5
    assert [stops[i] for i in (7, 8, 9, 10)] == [12.0, 6.0, 4.0, 4.0]
    # jitter draws differ by flow and stay within [0, start_jitter)
    assert len({starts[i] for i in (0, 1, 2)}) == 3 and all(0 <= starts[i] < 2.0 for i in (0, 1, 2))


def test_a_flow_the_join_schedule_never_adds_opens_no_connection():
    from tcplab.scenario import load_scenario

    sc = smoke(duration="4s", warmup="0s",
               flows={"tcp": {"kind": "tcp", "count": 4,
                              "joins": {"initial": 1, "at": "3s", "every": "2s", "factor": 2}}})
    plan = linux._plan(load_scenario(sc))
    runs = [f["id"] for f in plan["tcp"] if f["start_ns"] < f["stop_ns"]]
    assert runs == [0, 1]  # 1 flow, doubled at 3 s; the next doubling (5 s) is after the end


@needs_linux
def test_a_short_linux_run_with_start_jitter():
    sc = smoke(duration="5s", warmup="1s",
               flows={"tcp": {"kind": "tcp", "variant": "reno", "count": 2, "start_jitter": "1s"}})
    from tcplab.scenario import load_scenario

    plan = linux._plan(load_scenario(sc))
    res = tcplab.run(sc, engine="linux")
    got = res.flows.set_index("id")
    for f in plan["tcp"]:
        assert got.loc[f["id"], "start_s"] == f["start_ns"] / 1e9
        assert got.loc[f["id"], "delivered_bytes"] > 0
    assert res.metrics["bottleneck_utilization"] > 0.5


def test_many_flow_errors_are_summarized_by_cause():
    # 500 flows once gave a 14 KB message listing every flow's bind error
    from tcplab.backends.linux import _summarize_flow_errors

    errors = [f"flow {i}: bind: Cannot assign requested address (os error 99)" for i in range(445, 500)]
    text = _summarize_flow_errors(errors + ["flow 3: connect: Connection refused"], {"tcp": [{}] * 500})
    assert "55 of 500 flows failed: bind: Cannot assign requested address" in text
    assert "1 of 500 flows failed: connect: Connection refused (flows 3)" in text
    assert "start_jitter" in text and len(text) < 600


def test_more_flows_than_the_kernel_takes_at_once_are_refused_before_the_run():
    from tcplab.scenario import load_scenario

    sc = smoke(flows={"tcp": {"kind": "tcp", "count": linux.MAX_TCP_FLOWS + 1}})
    with pytest.raises(UserError, match=r"flows: the linux engine runs at most 500 TCP flows"):
        linux._plan(load_scenario(sc))
    linux._plan(load_scenario(smoke(flows={"tcp": {"kind": "tcp", "count": linux.MAX_TCP_FLOWS}})))
