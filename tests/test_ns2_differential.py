"""Differential tests: the packet engine against ns-2 2.35 on matched scenarios.

Both engines get the same resolved scenario; start times (with jitter) are
drawn from the same stream, so the remaining differences are ns-2's random
clock phase per agent (`boot_time_`, which moves RTO expiries by < 1 tick;
`tick_seed` matches it) and, where a timer is involved, the order of
simultaneous events. Tolerances:

* a single flow: nothing random but the tick phase, the mechanisms are the
  same; measured agreement is within 0.05% — we allow 1%;
* N SACK flows: the seed-to-seed spread of the packet engine's own aggregate
  goodput on these runs is up to 0.9% (N = 3, 300 s); we allow 3%, about
  three times that spread;
* Tahoe on the satellite path: one flow, allow 1%.
"""

import numpy as np
import pytest

import tcplab

pytestmark = pytest.mark.ns2

SINGLE = {
    "duration": "300s", "warmup": "30s",
    "topology": {
        "bottleneck": {"rate": "1Mbps", "delay": "5ms", "buffer": 40},
        "access": {"rate": "10Mbps", "delay": "5ms", "buffer": 100},
        "sink_access": {"rate": "10Mbps", "delay": "5ms", "buffer": 100},
    },
    "flows": {"tcp": {"kind": "tcp"}},
}


def both(scenario, overrides=()):
    return [tcplab.run(scenario, engine=e, overrides=list(overrides)) for e in ("packet", "ns2")]


#: TCP default profiles (issue 19): ns-2 2.35's and the paper era's (before May 2001);
#: the ns-2 export writes the resolved values, so ns-2 2.35 runs the era's defaults too
PROFILES = ["ns2-2.35", "ns2-2001"]


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("variant", ["tahoe", "reno", "newreno", "sack"])
def test_single_flow_per_variant_agrees(variant, profile):
    pkt, ns2 = both(SINGLE, [f"flows.tcp.variant={variant}", f"flows.tcp.profile={profile}"])
    g1, g2 = pkt.metrics["normalized_goodput"], ns2.metrics["normalized_goodput"]
    assert g1 == pytest.approx(g2, rel=0.01), (variant, g1, g2)
    # the loss process agrees too: same number of drops within a handful
    assert abs(pkt.metrics["bottleneck_drops"] - ns2.metrics["bottleneck_drops"]) <= 3


@pytest.mark.parametrize("n", [1, 2, 3, 5, 10])
def test_n_sack_flows_over_droptail_agree(n):
    pkt, ns2 = both("scenarios/c-parallel-sack.toml", [f"flows.sack.count={n}", "duration=300s", "warmup=30s"])
    g1, g2 = pkt.metrics["normalized_goodput"], ns2.metrics["normalized_goodput"]
    assert g1 == pytest.approx(g2, rel=0.03), (n, g1, g2)


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("buffer", [19, 20, 22])
def test_tahoe_on_the_satellite_path_agrees(buffer, profile):
    pkt, ns2 = both("scenarios/d-tahoe-satellite.toml", [f"topology.bottleneck.buffer={buffer}", "duration=300s",
                                                         f"flows.tahoe.profile={profile}"])
    g1, g2 = pkt.metrics["normalized_goodput"], ns2.metrics["normalized_goodput"]
    assert g1 == pytest.approx(g2, rel=0.01), (buffer, g1, g2)
    assert pkt.flows["retransmissions"].sum() == pytest.approx(ns2.flows["retransmissions"].sum(), rel=0.05)


def test_rtt_estimator_trace_agrees_with_ns2():
    # A single NewReno flow loses the same packets in both engines, so its RTT
    # estimator sees the same samples — up to one tick: ns-2 measures RTTs in
    # 10 ms ticks from a random clock phase per agent (boot_time_), so a sample
    # can land one tick apart. On a common time grid the smoothed RTTs must
    # stay within two ticks and agree on average; the timeouts (backoff
    # doublings) are the same.
    import numpy as np

    from tcplab.traces import canonical

    pkt, ns2 = (canonical(r.traces)["rtt"] for r in both(SINGLE, ["flows.tcp.variant=newreno", "duration=100s",
                                                                  "trace.series=[\"rtt\"]"]))
    grid = np.arange(1.0, 100.0, 0.05)

    def at(d, col):
        return d[col].to_numpy()[np.searchsorted(d["t"].to_numpy(), grid, side="right") - 1]

    diff = np.abs(at(pkt, "srtt") - at(ns2, "srtt"))
    assert diff.max() <= 0.02 + 1e-9 and diff.mean() < 0.005, (diff.max(), diff.mean())

    def timeouts(d):
        b = d["backoff"].to_numpy()
        return int((b[1:] > b[:-1]).sum())

    assert timeouts(pkt) == timeouts(ns2) > 0
    # the engine also reports the RTO it arms: never below min_rto (0.2 s) times the backoff
    assert (pkt["rto"] >= 0.2 * pkt["backoff"] - 1e-9).all()


def _loss_list_scenario(variant, per, extra=()):
    """One flow over 10 Mb/s links; the sink link loses a fixed list of
    arrivals (a Bernoulli(per) sample drawn once, here, from a fixed seed)."""
    import numpy as np

    drops = np.nonzero(np.random.default_rng(7).random(100_000) < per)[0].tolist()
    link = {"rate": "10Mbps", "delay": "5ms", "buffer": 100}
    return {"duration": "100s", "warmup": "10s",
            "topology": {"bottleneck": {"rate": "10Mbps", "delay": "25ms", "buffer": 100},
                         "access": link,
                         "sink_access": {**link, "errors": {"model": "list", "packets": drops}}},
            "flows": {"tcp": {"kind": "tcp", "variant": variant, **dict(extra)}}}


@pytest.mark.parametrize("variant,extra", [("tahoe", ()), ("reno", ()), ("newreno", ()), ("sack", ()),
                                           ("reno", (("alpha", 0.31), ("beta", 0.875)))])
@pytest.mark.parametrize("per", [0.01, 0.03])
def test_identical_loss_lists_give_identical_runs(variant, extra, per):
    """The same lost packets (errors model "list", ns-2 ErrorModel/List) in
    both engines: every recovery path random losses reach (retransmissions
    lost again, losses in recovery, timeouts) runs packet for packet alike,
    so delivered packets and retransmissions are EQUAL. (This found the SACK
    ack size: ns-2 adds 8 bytes per SACK block.)"""
    pkt, ns2 = both(_loss_list_scenario(variant, per, extra))
    cols = ["delivered_packets", "retransmissions"]
    assert pkt.flows[cols].values.tolist() == ns2.flows[cols].values.tolist(), (variant, extra, per)


def _rto_cap_scenario(max_rto):
    """One Reno flow losing a fifth of its packets (a fixed list, as above):
    retransmissions are lost again, so timeouts back off repeatedly and the
    cap on the backed-off RTO decides when the next one fires. `tick_seed`
    places the clock ticks as ns-2 does, so RTT samples round alike."""
    sc = _loss_list_scenario("reno", 0.2)
    sc["flows"]["tcp"].update({"max_rto": max_rto, "tick_seed": 1})
    sc["trace"] = {"series": ["cwnd"]}
    return sc


def _cwnd_changes(res):
    import numpy as np

    c = res.traces["tcp"] if "tcp" in res.traces else res.traces["cwnd"]
    keep = (c["cwnd"].diff() != 0) | (c["ssthresh"].diff() != 0)
    return c.loc[keep, "t"].to_numpy(float), np.round(c.loc[keep, "cwnd"].to_numpy(float), 3)


def test_max_rto_bounds_the_backed_off_timeout_as_ns2_does():
    """Issue 19 (5c): ns-2's rtt_timeout() clamps RTO·backoff to maxrto_ after the
    min-RTO floor, and rtt_backoff() keeps doubling while the clamped value is below
    maxrto_ (or the backoff below 64). With the same losses and the same tick phase
    the two engines run event for event alike — every cwnd change at the same
    instant (to 20 µs, ns-2's printed precision) — with and without a cap, and the
    cap does move the run (so this compares the bound, not a run it never reaches)."""
    import numpy as np

    cols = ["delivered_packets", "retransmissions", "timeouts"]
    outcomes = {}
    for cap in ["60s", "1s", "0.5s"]:
        pkt, ns2 = both(_rto_cap_scenario(cap))
        assert pkt.flows[cols].values.tolist() == ns2.flows[cols].values.tolist(), cap
        (t1, w1), (t2, w2) = _cwnd_changes(pkt), _cwnd_changes(ns2)
        assert len(t1) == len(t2), (cap, len(t1), len(t2))
        assert np.abs(t1 - t2).max() < 2e-5 and np.abs(w1 - w2).max() < 2e-3, cap
        outcomes[cap] = pkt.flows[cols].values.tolist()
    assert outcomes["60s"] != outcomes["1s"] != outcomes["0.5s"]


def _paper_a(access_rate, frequency="5Hz", profile="ns2-2.35"):
    """Paper A (one Reno flow against a sine UDP background, every link 1 Mb/s)
    for 60 s, with the TCP clock phase fixed (tick_seed) so nothing random remains."""
    from tcplab.scenario import apply_overrides, read_toml

    sc = apply_overrides(read_toml("scenarios/a-sine-background.toml"),
                         [("duration", "60s"), ("warmup", "1s"), ("flows.background.rate.frequency", frequency),
                          ("flows.tcp.tick_seed", 1), ("topology.access.rate", access_rate),
                          ("flows.tcp.profile", profile), ("trace.series", ["cwnd"])])
    return both(sc)


def _event_exact(pkt, ns2):
    import numpy as np

    (t1, w1), (t2, w2) = _cwnd_changes(pkt), _cwnd_changes(ns2)
    return len(t1) == len(t2) and np.abs(t1 - t2).max() < 2e-5 and np.abs(w1 - w2).max() < 2e-3


@pytest.mark.parametrize("profile,frequency", [("ns2-2.35", "0.4Hz"), ("ns2-2.35", "5Hz"),
                                               ("ns2-2001", "0.1Hz"), ("ns2-2001", "0.4Hz"),
                                               ("ns2-2001", "5Hz")])
def test_paper_a_runs_event_for_event_as_ns2_when_no_two_events_tie(profile, frequency):
    """Issue 19 (item 3): with the tick phase matched, paper A's run is ns-2's event
    for event — every cwnd change at the same instant, the same drops, timeouts and
    retransmissions — as long as no arrival at the bottleneck falls on the instant a
    departure ends. Access links 0.1% faster than the 1 Mb/s bottleneck keep them apart
    (the next test shows the tie). Under the era profile this found two export and
    engine mismatches without a SYN: ns-2 keeps delay_growth_ on (now written with
    syn_) and sends packet 0 without its header bytes (now so in both). At 0.1 Hz
    under 2.35's defaults the run still parts from ns-2's (not yet explained)."""
    cols = ["delivered_packets", "retransmissions", "timeouts"]
    pkt, ns2 = _paper_a("1.001Mbps", frequency, profile)
    tcp = lambda r: r.flows.loc[r.flows["kind"] == "tcp", cols].values.tolist()  # noqa: E731
    assert tcp(pkt) == tcp(ns2)
    assert pkt.metrics["bottleneck_drops"] == ns2.metrics["bottleneck_drops"] > 0
    assert _event_exact(pkt, ns2)


@pytest.mark.parametrize("profile,frequency", [
    ("ns2-2.35", "0.1Hz"), ("ns2-2.35", "0.4Hz"), ("ns2-2.35", "5Hz"),
    ("ns2-2001", "0.1Hz"), ("ns2-2001", "0.4Hz"), ("ns2-2001", "5Hz")])
def test_paper_a_runs_event_for_event_as_ns2_with_its_equal_link_rates(profile, frequency):
    """Issue 19 (items 3 and 5): with every link at 1 Mb/s, as the paper has it,
    packets arrive at the bottleneck exactly as others leave it. ns-2 runs events of
    equal time in the order they were scheduled; a link schedules a packet's arrival
    at the next node when it starts sending it (LinkDelay::recv), so the arrival
    comes before the departure ending at the same instant, which the queue scheduled
    later. tcplab's links let the departure go first until this was found (ns-2 dropped
    the arriving TCP packet from a full queue at 0.828 s, tcplab admitted it and
    dropped a UDP packet 9 ms later); now ties are ordered as ns-2 orders them (its
    double clock, then the order of scheduling: `sched::Order`), and the runs are
    ns-2's event for event."""
    cols = ["delivered_packets", "retransmissions", "timeouts"]
    pkt, ns2 = _paper_a("1Mbps", frequency, profile)
    tcp = lambda r: r.flows.loc[r.flows["kind"] == "tcp", cols].values.tolist()  # noqa: E731
    assert tcp(pkt) == tcp(ns2)
    udp = lambda r: r.flows.loc[r.flows["kind"] == "udp", "delivered_packets"].tolist()  # noqa: E731
    assert udp(pkt) == udp(ns2)
    assert pkt.metrics["bottleneck_drops"] == ns2.metrics["bottleneck_drops"] > 0
    assert _event_exact(pkt, ns2)


def test_paper_a_at_equal_link_rates_is_ns2s_over_1000_s():
    """Issue 27: bench/scenarios/d_sine_background.toml (every link 1 Mb/s, 0.4 Hz)
    over its full 1,000 s. It once parted from ns-2 at 2.86 s and never realigned:
    the export replays a shaped UDP source from a Tracefile, whose gaps are whole
    microseconds, and tcplab sent up to 0.5 us off that grid, so a UDP packet and a
    TCP packet that tie at the bottleneck in ns-2 did not tie in tcplab. A shaped
    source now sends on the same microsecond grid. With the TCP clock phase matched
    (tick_seed) the runs are the same event for event. (Without it the two engines
    draw different phases, and this run's throughput depends on the phase: 0.75-0.91
    over eight phases on the packet engine, ns-2's default phase giving 0.914.)"""
    from tcplab.scenario import apply_overrides, read_toml

    sc = apply_overrides(read_toml("bench/scenarios/d_sine_background.toml"),
                         [("flows.tcp.tick_seed", 1), ("trace.series", ["cwnd"])])
    pkt, ns2 = both(sc)
    cols = ["delivered_packets", "retransmissions", "timeouts"]
    tcp = lambda r: r.flows.loc[r.flows["kind"] == "tcp", cols].values.tolist()  # noqa: E731
    assert tcp(pkt) == tcp(ns2) == [[49095, 5902, 319]]
    udp = lambda r: r.flows.loc[r.flows["kind"] == "udp", "delivered_packets"].tolist()  # noqa: E731
    assert udp(pkt) == udp(ns2)
    assert _event_exact(pkt, ns2)


def test_constant_udp_background_gets_ns2s_share():
    """Paper A's setup with a constant 0.5 Mb/s UDP background over 1 Mb/s links: packets
    tie at the bottleneck every packet time, and which goes first decides who is dropped.
    Ordered as ns-2 orders them (see the dumbbell test below) the counts are ns-2's exactly;
    before, tcplab starved the UDP flow (18 packets delivered in 100 s, ns-2 2236)."""
    from tcplab.scenario import apply_overrides, read_toml

    sc = apply_overrides(read_toml("scenarios/a-constant-udp.toml"),
                         [("duration", "100s"), ("warmup", "10s"), ("flows.tcp.tick_seed", 1)])
    pkt, ns2 = both(sc)
    assert pkt.flows["delivered_packets"].tolist() == ns2.flows["delivered_packets"].tolist()
    assert pkt.flows["delivered_packets"].min() > 1000
    tcp = lambda r: r.flows.loc[r.flows["kind"] == "tcp", ["retransmissions", "timeouts"]].values.tolist()  # noqa: E731
    assert tcp(pkt) == tcp(ns2)
    assert pkt.metrics["bottleneck_drops"] == ns2.metrics["bottleneck_drops"]


@pytest.mark.parametrize("alpha,beta", [(0.31, 0.875), (0.583, 0.75), (1.0, 0.5), (1.25, 0.25)])
def test_paper_b_dumbbell_runs_event_for_event_as_ns2(alpha, beta):
    """Issue 19 (item 3): paper B's dumbbell (10 TCP(α,β) flows, every link at 10 Mb/s,
    starts jittered over 1 s, the paper's 100 s) with the tick phases matched runs as
    ns-2 2.35 event for event, for each of the paper's four protocols: every flow's
    delivered packets, retransmissions and timeouts, the drop count (994–1018 after the
    warm-up, 51–239 timeouts), and every cwnd change of every flow at ns-2's instant (to
    20 µs; about 110 000 changes a run). With every link at one rate, packets of several flows reach the
    bottleneck in the same nanosecond (and as a departure ends) all the time, and ns-2
    orders such events by its double clock (`clock_ + txt + delay_`; equal doubles in
    the order they were scheduled). Before tcplab ordered them the same way
    (`sched::Order`), the smooth protocol's run parted at 1.114 s (flow 2's packet
    waited behind flow 6's in tcplab; in ns-2 the double of flow 2's start was a bit
    smaller); before a retransmission timer carried ns-2's clock (the arming event's
    plus the timeout), it parted at 16.62 s, after flow 8's timeout at 16.52 s."""
    from tcplab.scenario import apply_overrides, read_toml

    sc = apply_overrides(read_toml("scenarios/b-dumbbell.toml"),
                         [("duration", "100s"), ("warmup", "10s"), ("flows.tcp.alpha", alpha),
                          ("flows.tcp.beta", beta), ("flows.tcp.tick_seed", 1), ("trace.series", ["cwnd"])])
    pkt, ns2 = both(sc)
    _assert_event_exact(pkt, ns2)
    assert pkt.metrics["bottleneck_drops"] > 900 and pkt.flows["timeouts"].sum() > 30, (
        pkt.metrics["bottleneck_drops"], pkt.flows["timeouts"].sum())
    assert min(len(_flow_cwnd_changes(pkt, f)) for f in range(10)) > 5000


@pytest.mark.parametrize("n", [10, 15])
def test_small_droptail_buffers_lose_as_many_packets_as_in_ns2(n):
    """Issue 19 (item 5): with a 3-packet buffer and 10 or 15 SACK flows, tcplab lost
    13% fewer packets than ns-2 (2322 vs 2670 at N = 10, 4298 vs 4939 at N = 15) and its
    aggregate was 1–2% higher: an arrival at the instant a departure ended found one
    packet fewer waiting than in ns-2 (see the equal-link-rates test above). Now the
    drops agree within 3% (ns-2's own seed-to-seed spread on these runs: up to 1.6%) and
    the aggregate within 1% (before: 1.8% off at N = 10). The tick phase is matched."""
    ov = [f"flows.sack.count={n}", "topology.bottleneck.buffer=3", "duration=300s", "warmup=30s",
          "flows.sack.tick_seed=1"]
    pkt, ns2 = both("scenarios/c-parallel-sack.toml", ov)
    d1, d2 = pkt.metrics["bottleneck_drops"], ns2.metrics["bottleneck_drops"]
    assert d1 == pytest.approx(d2, rel=0.03), (d1, d2)
    g1, g2 = pkt.metrics["normalized_goodput"], ns2.metrics["normalized_goodput"]
    assert g1 == pytest.approx(g2, rel=0.01), (g1, g2)


#: Three staggered Reno-family flows with ECN over a RED step marker (paper-free:
#: K = 6 packets, a 9-packet buffer at 2 Mb/s, so marks and overflows both happen)
ECN_STEP = {
    "duration": "30s", "warmup": "1s", "seed": 1,
    "topology": {
        "bottleneck": {"rate": "2Mbps", "delay": "20ms", "buffer": 9, "queue": "red",
                       "red": {"min_thresh": 6, "max_thresh": 6, "weight": 1.0, "gentle": False,
                               "ecn": True}},
        "access": {"rate": "100Mbps", "delay": "2ms", "buffer": 1000},
        "sink_access": {"rate": "100Mbps", "delay": "2ms", "buffer": 1000},
    },
    "flows": {"tcp": {"kind": "tcp", "count": 3, "start_jitter": "2s", "ecn": True, "tick_seed": 1}},
    "trace": {"series": ["cwnd"]},
}


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("variant", ["tahoe", "reno", "newreno", "sack"])
def test_classic_ecn_runs_event_for_event_as_ns2(variant, profile):
    """Issue 18 (ECN as ns-2's `setbit_`/`ecn_`): with a deterministic marker (RED with
    equal thresholds and weight 1 marks every arrival to a queue of 6 or more) the runs
    are ns-2's event for event: every cwnd change of every flow at the same instant, the
    same drops, retransmissions and timeouts. Before the receiver kept echoing a mark
    until the sender's CWR (RFC 3168 §6.1.3, ns-2's `ecn_unacked`), the first reduction
    already parted the runs (ns-2's window stayed put one RTT longer); before a loss in
    a window a mark had reduced was repaired without a second cut (each ns-2 variant's
    `dupack_action()`), and before an echoed mark could take cwnd below one packet, the
    Tahoe and NewReno runs parted later. The flows start apart: with simultaneous starts
    their packets tie at the bottleneck and the runs part with or without ECN."""
    import copy

    sc = copy.deepcopy(ECN_STEP)
    sc["flows"]["tcp"].update(variant=variant, profile=profile)
    pkt, ns2 = both(sc)
    _assert_event_exact(pkt, ns2)
    assert pkt.metrics["bottleneck_drops"] > 0 and pkt.flows["retransmissions"].sum() > 0


def _assert_event_exact(pkt, ns2):
    """Every flow's delivered packets, retransmissions and timeouts, the drop count, and
    every cwnd change of every flow at ns-2's instant (to 20 µs, its printed precision)."""
    cols = ["delivered_packets", "retransmissions", "timeouts"]
    assert pkt.flows[cols].values.tolist() == ns2.flows[cols].values.tolist()
    assert pkt.metrics["bottleneck_drops"] == ns2.metrics["bottleneck_drops"]
    for f in pkt.flows["id"]:
        a, b = _flow_cwnd_changes(pkt, f), _flow_cwnd_changes(ns2, f)
        assert len(a) == len(b), (f, len(a), len(b))
        # (the first row is each trace's opening value: ns-2's at 0, tcplab's at the start)
        assert np.abs(a[1:, 0] - b[1:, 0]).max() < 2e-5 and np.abs(a[1:, 1] - b[1:, 1]).max() < 2e-3, f


def _flow_cwnd_changes(res, flow):
    """Flow `flow`'s (t, cwnd) at each change, cwnd at ns-2's printed precision and
    several changes at one instant taken as the last (ns-2's table keeps only that)."""
    c = res.traces["tcp"] if "tcp" in res.traces else res.traces["cwnd"]
    c = c[c["flow"] == flow]
    c = c[c["t"].round(5).diff(-1) != 0]
    w = c["cwnd"].round(3)
    keep = (w.diff() != 0) | (c["ssthresh"].diff() != 0)
    return np.column_stack([c.loc[keep, "t"].to_numpy(float), w[keep].to_numpy(float)])


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("variant", ["tahoe", "reno", "newreno", "sack"])
def test_a_delayed_ack_flow_runs_event_for_event_as_ns2(variant, profile):
    """ns-2's DelAck sinks ack packet 0 at once since 2010/02 (`SYN_immediate_ack_`,
    which test-suite-tcp.tcl turns off with "The default was changed to true
    2010/02"); before, its ack waited for the delayed-ack timer like any other.
    tcplab delayed it under both profiles, so under 2.35's every delayed-ack run began
    100 ms late (first window growth at 0.148 s against ns-2's 0.048 s). And ns-2
    delays the ack of any packet that leaves it with `seqno == Seqno()` — also a
    duplicate of the highest in-order packet, which go-back-N resends — where tcplab
    acked every duplicate at once; one such ack came a packet time later than ns-2's
    after a timeout. Now a single flow with delayed acks runs as ns-2's, event for
    event, with losses, under both profiles. (With several flows a delayed-ack timer
    often falls on the instant another flow's packet arrives; ns-2's double-precision
    times most likely put the two a few ulps apart, where tcplab's integer nanoseconds
    tie them: see docs/ns2.md.)"""
    sc = {**SINGLE, "duration": "60s", "warmup": "1s",
          "flows": {"tcp": {"kind": "tcp", "variant": variant, "delayed_ack": True,
                            "profile": profile, "tick_seed": 1}},
          "trace": {"series": ["cwnd"]}}
    pkt, ns2 = both(sc)
    cols = ["delivered_packets", "retransmissions", "timeouts"]
    assert pkt.flows[cols].values.tolist() == ns2.flows[cols].values.tolist()
    assert pkt.metrics["bottleneck_drops"] == ns2.metrics["bottleneck_drops"] > 0
    a, b = _flow_cwnd_changes(pkt, 0), _flow_cwnd_changes(ns2, 0)
    assert len(a) == len(b)
    assert np.abs(a[1:, 0] - b[1:, 0]).max() < 2e-5 and np.abs(a[1:, 1] - b[1:, 1]).max() < 2e-3


def _reset_clusters(res, gap_s=20.0):
    """ns-2's event-trace count of paper D's slow starts, written independently of
    `metrics.tahoe_cycles`: every fall of cwnd to 1 is a slow start, and falls less
    than `gap_s` apart (a slow-start phase lasts ≈ 5 s here, congestion avoidance
    ≈ 110 s) belong to one cycle. The first cluster (the start-up) and the last
    (maybe cut by the run's end) are left out."""
    from tcplab.traces import canonical

    tcp = canonical(res.traces, res.links)["tcp"]
    t, cwnd = tcp["t"].to_numpy(), tcp["cwnd"].to_numpy()
    falls = t[1:][(cwnd[1:] <= 1) & (cwnd[:-1] > 1)]
    sizes = []
    for i, x in enumerate(falls):
        if i and x - falls[i - 1] < gap_s:
            sizes[-1] += 1
        else:
            sizes.append(1)
    return sizes[1:-1]


@pytest.mark.parametrize("profile,buffers", [("ns2-2.35", (16, 20, 21, 22)), ("ns2-2001", (8, 19, 20, 21))])
def test_paper_d_slow_starts_per_cycle_agree_with_ns2_and_its_event_count(profile, buffers):
    """Issue 19: the report's slow starts per cycle (`metrics.tahoe_cycles`, paper D's
    definition) and the count from the cwnd resets agree, on both engines, at buffers
    where the cycle type changes (2.35: triples at 16 and 21; era: at 8 and 20)."""
    from tcplab.metrics import summarize

    for b in buffers:
        counts = []
        for engine in ("packet", "ns2"):
            res = tcplab.run("scenarios/d-tahoe-satellite.toml", engine=engine, trace=["cwnd"],
                             overrides=[f"topology.bottleneck.buffer={b}", "duration=900s",
                                        f"flows.tahoe.profile={profile}"])
            per_cycle = summarize(res)["slowstart_cycles"]
            events = _reset_clusters(res)
            assert len(set(events)) == 1, (b, events)    # one cycle type at each of these B
            k = events[0]
            assert per_cycle.get({1: "single", 2: "double", 3: "triple"}[k], 0) >= len(events), (b, per_cycle, events)
            assert sum(per_cycle.values()) == per_cycle[{1: "single", 2: "double", 3: "triple"}[k]], (b, per_cycle)
            counts.append(k)
        assert counts[0] == counts[1], (b, counts)


#: Paper D's path with every rate and delay a binary fraction of a second, so that
#: ns-2's floating-point sums of times are exact (bottleneck 2^20 b/s: a 512-byte
#: packet takes 1/256 s; access links 2^24 b/s; delays 141/512 s and 1/512 s).
_BINARY_PATH = ["topology.bottleneck.rate=1048576", "topology.bottleneck.delay=0.275390625",
                "topology.access.rate=16777216", "topology.access.delay=0.001953125",
                "topology.sink_access.rate=16777216", "topology.sink_access.delay=0.001953125"]


@pytest.mark.parametrize("profile", PROFILES)
def test_paper_d_one_slot_buffer_agrees_when_ns2s_clock_is_exact(profile):
    """Issue 19 (D2 under the era profile): with B = 1 every ack-clocked arrival reaches
    the buffer at the instant the next waiting packet starts. tcplab decides that tie by
    scheduling order, as ns-2's scheduler does for equal times; with the paper's decimal
    rates and delays ns-2's two times are different floating-point sums and their
    rounding decides instead (ns-2's B = 1 is 6% slower there). With exact binary times
    (and the clock ticks placed alike, `tick_seed`) the two engines run the same: same
    drops, retransmissions, timeouts, throughput. Without `_BINARY_PATH` this fails."""
    runs = [tcplab.run("scenarios/d-tahoe-satellite.toml", engine=e,
                       overrides=["topology.bottleneck.buffer=1", "duration=600s", f"flows.tahoe.profile={profile}",
                                  "flows.tahoe.tick_seed=1",
                                  *_BINARY_PATH]) for e in ("packet", "ns2")]
    pkt, ns2 = runs
    assert pkt.metrics["bottleneck_drops"] == ns2.metrics["bottleneck_drops"]
    for col in ("retransmissions", "timeouts"):
        assert pkt.flows[col].sum() == ns2.flows[col].sum(), col
    assert pkt.metrics["normalized_throughput"] == pytest.approx(ns2.metrics["normalized_throughput"], rel=1e-9)


@pytest.mark.parametrize("n", [3, 10])
def test_red_with_ns2s_generator_runs_event_for_event_as_ns2(n):
    """Issue 19 (C7's difference under the era profile came from RED's own random
    draws). With `red.seed` the packet engine's RED draws ns-2's default generator
    (MRG32k3a after `$defaultRNG seed K`; the export reseeds ns-2's at time 0), and
    averages over an idle period factor by factor as ns-2 does: paper C's RED with 3
    and 10 SACK flows then runs as ns-2's for 60 s, every early drop of every flow on
    the same packet. (With 2 or 5 flows the runs part: after an idle period of exactly
    114 packet times, ns-2's clock, a double, makes it 113.99…, so its average decays
    one step less — found with 2 flows at 2.79 s; the drops part at 41 s.)"""
    ov = [f"flows.sack.count={n}", "duration=60s", "warmup=5s", "topology.bottleneck.red.seed=1",
          "flows.sack.tick_seed=1", 'trace.series=["cwnd"]']
    pkt, ns2 = both("scenarios/c-red.toml", ov)
    cols = ["delivered_packets", "retransmissions", "timeouts"]
    assert pkt.flows[cols].values.tolist() == ns2.flows[cols].values.tolist()
    assert pkt.metrics["bottleneck_drops"] == ns2.metrics["bottleneck_drops"] > 3 * n
    for f in range(n):
        a, b = _flow_cwnd_changes(pkt, f), _flow_cwnd_changes(ns2, f)
        assert len(a) == len(b), (f, len(a), len(b))
        assert np.abs(a[1:, 0] - b[1:, 0]).max() < 2e-5 and np.abs(a[1:, 1] - b[1:, 1]).max() < 2e-3, f
