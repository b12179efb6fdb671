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
        "flows": {"tcp": {"kind": "tcp", "variant": "reno"}},
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

    p = linux._plan(load_scenario(smoke(linux={"profile": "ns2"})))["opts"]
    assert p == {"cc": "reno", "sack": False, "rack": False, "tlp": False, "frto": False,
                 "timestamps": False, "initial_cwnd": 2, "min_rto_s": 0.2, "quickack": True}
    p = linux._plan(load_scenario(smoke(linux={"profile": "ns2", "min_rto": "1s", "cc": "cubic"})))["opts"]
    assert p["min_rto_s"] == 1.0 and p["cc"] == "cubic"
    d = linux._plan(load_scenario(smoke()))["opts"]
    assert d["sack"] and d["rack"] and d["tlp"] and d["initial_cwnd"] is None and d["min_rto_s"] is None


def test_the_peak_finder_sees_each_recovery_once():
    import pandas as pd

    tcp = pd.DataFrame({"t": np.arange(8.0), "cwnd": [10, 11, 12, 12, 6, 7, 8, 4],
                        "ca_state": [0, 0, 0, 3, 3, 0, 0, 4]})
    assert sawtooth_peaks(tcp, 0.0) == [12.0, 8.0]


def test_congestion_control_per_group():
    from tcplab.scenario import load_scenario

    sc = smoke(flows={"a": {"kind": "tcp"}, "b": {"kind": "tcp", "count": 2}},
               linux={"cc": "reno", "group_cc": {"b": "cubic"}})
    plan = linux._plan(load_scenario(sc))
    assert [(f["group"], f["cc"]) for f in plan["tcp"]] == [("a", "reno"), ("b", "cubic"), ("b", "cubic")]
    sc["linux"]["group_cc"] = {"c": "bbr"}
    with pytest.raises(UserError, match=r"linux\.group_cc\.c"):
        linux._plan(load_scenario(sc))
