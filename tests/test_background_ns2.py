"""Background traffic, queues and impairments: the packet engine against ns-2.

ns-2 has no sine source, so the export plays the packet engine's own
departure times through Application/Traffic/Trace (gaps in whole
microseconds). That the two engines then send the same packets is checked
exactly: a shaped UDP flow alone over a bottleneck that drops gives identical
delivered counts.

With TCP in the mix, paper A's setup is deterministic but for each TCP
agent's clock phase (the seed), and phase-locked DropTail makes single runs
jump between modes (at f = 0.4 Hz, 600 s runs of either engine range over
0.75-0.91 with the seed). So the tests compare means over 5 seeds at
frequencies where the seed-to-seed spread is ~0.01 (σ of a 5-seed mean
≈ 0.005 per engine, ≈ 0.007 for the difference): we allow 2.5 %, about
three and a half times that.
"""

import numpy as np
import pytest

import tcplab

pytestmark = pytest.mark.ns2

A_SINE = "scenarios/a-sine-background.toml"
A_TWO = "scenarios/a-two-sines.toml"


def _mean_goodput(scenario, engine, overrides, seeds=range(1, 6)):
    return float(np.mean([
        tcplab.run(scenario, engine=engine, overrides=[f"seed={s}", *overrides]).metrics["normalized_goodput"]
        for s in seeds]))


@pytest.mark.parametrize("frequency", ["0.05Hz", "0.4Hz", "10Hz"])
def test_shaped_udp_is_the_same_packets_in_both_engines(frequency):
    sc = {"duration": "100s", "seed": 3,
          "topology": {"bottleneck": {"rate": "0.6Mbps", "delay": "5ms", "buffer": 1},
                       "access": {"rate": "1Mbps", "delay": "5ms", "buffer": 40},
                       "sink_access": {"rate": "1Mbps", "delay": "5ms", "buffer": 40}},
          "flows": {"bg": {"kind": "udp", "start": "1.234567s", "start_jitter": "1s", "stop": "90s",
                           "rate": {"shape": "sine", "mean": "0.5Mbps", "amplitude": "0.5Mbps",
                                    "frequency": frequency}}}}
    pkt, ns2 = tcplab.run(sc), tcplab.run(sc, engine="ns2")
    assert pkt.flows["delivered_packets"].tolist() == ns2.flows["delivered_packets"].tolist()
    assert pkt.metrics["bottleneck_drops"] == ns2.metrics["bottleneck_drops"] > 0


@pytest.mark.parametrize("frequency", ["0.1Hz", "2Hz", "10Hz"])
def test_paper_a_sine_background_agrees(frequency):
    o = ["duration=600s", "warmup=60s", f"flows.background.rate.frequency={frequency}"]
    g1, g2 = _mean_goodput(A_SINE, "packet", o), _mean_goodput(A_SINE, "ns2", o)
    assert g1 == pytest.approx(g2, rel=0.025), (frequency, g1, g2)


def test_paper_a_two_sine_background_agrees():
    o = ["duration=600s", "warmup=60s"]
    g1, g2 = _mean_goodput(A_TWO, "packet", o), _mean_goodput(A_TWO, "ns2", o)
    assert g1 == pytest.approx(g2, rel=0.025), (g1, g2)


# --------------------------------------------------------------- Bernoulli errors

B_PER = "scenarios/b-wireless-per.toml"
#: Paper B's Fig. 4 setup cut to 10 Mb/s, 4 flows, 100-packet buffers, 200 s.
B_SMALL = ["topology.bottleneck.rate=10Mbps", "topology.access.rate=10Mbps",
           "topology.sink_access.rate=10Mbps", "topology.bottleneck.buffer=100",
           "topology.access.buffer=100", "topology.sink_access.buffer=100",
           "flows.tcp.count=4", "duration=200s", "warmup=20s"]


def test_bernoulli_errors_lose_the_per_in_both_engines():
    """UDP alone, PER 0.01 on the sink link, 125 000 packets: the binomial
    standard error is 0.00028; both engines within 4 of it."""
    sc = {"duration": "200s", "seed": 3,
          "topology": {"bottleneck": {"rate": "10Mbps", "delay": "5ms", "buffer": 40},
                       "access": {"rate": "10Mbps", "delay": "5ms", "buffer": 40},
                       "sink_access": {"rate": "10Mbps", "delay": "5ms", "buffer": 40,
                                       "errors": {"model": "bernoulli", "per": 0.01}}},
          "flows": {"bg": {"kind": "udp", "rate": "5Mbps"}}}
    for engine in ("packet", "ns2"):
        loss = 1 - tcplab.run(sc, engine=engine).flows["delivered_packets"].iloc[0] / 125_000
        assert abs(loss - 0.01) < 4 * 0.00028, (engine, loss)


@pytest.mark.parametrize("alpha,beta,per", [(0.31, 0.875, 0.01), (1.0, 0.5, 0.01),
                                            (1.25, 0.25, 0.01), (1.0, 0.5, 0.05)])
def test_tcp_alpha_beta_under_bernoulli_errors_agrees(alpha, beta, per):
    """Means over 3 seeds (seed-to-seed σ ≤ 0.004 in either engine). Measured
    (packet vs ns-2): PER 0.01 — 0.449/0.433 (0.31, 0.875), 0.449/0.439
    (1, 0.5), 0.394/0.387 (1.25, 0.25); PER 0.05 (1, 0.5) 0.150/0.149. The
    packet engine is 2-4 % above ns-2 at PER 0.01, more than the seeds
    explain (the loss processes agree, see above: the gap is in how the TCP
    senders recover from random losses, to be found). We allow 5 %.

    Narrowed down (8 seeds each, this setup): (1, ½) 0.4495 vs 0.4427,
    (0.31, 0.875) 0.4455 vs 0.4371 — about 2 %, 3σ; one flow alone over
    1000 s agrees within 0.3 % (Reno 0.1115 vs 0.1112). Not the error
    model's place or unit (both before the queue, per packet, own RNG, acks
    spared), not limited transmit (gap unchanged with it off), not the cost
    of a timeout (gap unchanged at min_rto = 1 s, which makes timeouts five
    times dearer), not the loss rate (4 UDP flows, 1.2 M packets per seed:
    0.01004 packet vs 0.00997 ns-2 over seeds 1-3). A single flow under the
    same deterministic losses in both engines (2 000 short outages at fixed
    times) runs bit-identically, so the recovery code matches on identical
    loss patterns. Under Bernoulli errors ns-2 retransmits ~3 % more per
    delivered packet and times out 2-7 % more often, at the same loss rate.
    Next step: play the engine's own loss list in ns-2 (ErrorModel/List) and
    diff per packet."""
    o = B_SMALL + [f"flows.tcp.alpha={alpha}", f"flows.tcp.beta={beta}",
                   f"topology.sink_access.errors.per={per}"]
    seeds = range(1, 4)
    g1, g2 = _mean_goodput(B_PER, "packet", o, seeds), _mean_goodput(B_PER, "ns2", o, seeds)
    assert g1 == pytest.approx(g2, rel=0.05), (alpha, beta, per, g1, g2)
