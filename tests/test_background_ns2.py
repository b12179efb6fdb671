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
    """Means over 3 seeds. Measured (packet vs ns-2): PER 0.01 — 0.449/0.433
    (0.31, 0.875), 0.449/0.439 (1, 0.5), 0.394/0.387 (1.25, 0.25); PER 0.05
    (1, 0.5) 0.150/0.149.

    The apparent 2 % gap at PER 0.01 is sampling noise, not a difference in
    the engines. Over 80 seeds (1-80, this setup): (1, ½) 0.4462 ± 0.0009
    packet vs 0.4451 ± 0.0009 ns-2; (0.31, 0.875) 0.4431 ± 0.0011 vs
    0.4416 ± 0.0014 — within 0.35 %, under 1σ. The seed-to-seed σ of one
    run's goodput is 0.008-0.012 in either engine (an earlier estimate of
    ≤ 0.004 made an 8-seed difference of 0.007 look like 3σ; it is ~1.7σ).
    Direct evidence: the engine replaying ns-2's own error draws gives
    ns-2's goodput (test below), and identical loss lists give identical
    runs (test_ns2_differential). With σ_run ≈ 0.01, a 3-seed difference
    has σ ≈ 1.8 % of the mean: 5 % is about 3σ."""
    o = B_SMALL + [f"flows.tcp.alpha={alpha}", f"flows.tcp.beta={beta}",
                   f"topology.sink_access.errors.per={per}"]
    seeds = range(1, 4)
    g1, g2 = _mean_goodput(B_PER, "packet", o, seeds), _mean_goodput(B_PER, "ns2", o, seeds)
    assert g1 == pytest.approx(g2, rel=0.05), (alpha, beta, per, g1, g2)


_NS2_DRAWS_TCL = """
set rng [new RNG]
$rng seed [lindex $argv 0]
set rv [new RandomVariable/Uniform]
$rv use-rng $rng
set fh [open [lindex $argv 2] w]
for {set i 0} {$i < [lindex $argv 1]} {incr i} { puts $fh [$rv value] }
close $fh
"""


def test_the_engine_replaying_ns2s_error_draws_gets_ns2s_goodput(tmp_path):
    """Bernoulli errors in ns-2 are one uniform draw per arrival from the
    error model's RNG (seeded by the export). Draw the same numbers with ns-2,
    turn them into loss lists (u < PER) and run the packet engine with those:
    it matches ns-2's Bernoulli run (8 seeds measured: within 0.14 %, while
    the engine's own draws differ from ns-2's by up to 3 % per seed). What
    is left is each ns-2 agent's random tick phase; allow 0.5 %."""
    import subprocess

    from tcplab.backends.ns2 import _errors_seed
    from tcplab.scenario import apply_overrides, read_toml

    script = tmp_path / "draws.tcl"
    script.write_text(_NS2_DRAWS_TCL)
    seed, n_flows, per = 3, 4, 0.01
    o = B_SMALL + ["flows.tcp.alpha=1.0", "flows.tcp.beta=0.5", f"seed={seed}"]
    ns2 = tcplab.run(B_PER, engine="ns2", overrides=o)
    lists = []
    for i in range(n_flows):
        out = tmp_path / f"u{i}.txt"
        # the export's seed for flow i's sink link (the engine's link 4 + 4i)
        subprocess.run(["ns", str(script), str(_errors_seed(seed, 4 + 4 * i)), "60000", str(out)],
                       check=True, capture_output=True, cwd=tmp_path)
        u = np.loadtxt(out)
        lists.append(np.nonzero(u < per)[0].tolist())
    assert abs(np.mean([len(x) for x in lists]) / 60000 - per) < 0.002
    groups = {f"f{i}": {"sink_access": {"errors": {"model": "list", "packets": lists[i]}}}
              for i in range(n_flows)}
    sc = apply_overrides(read_toml(B_PER), o)
    tcp = sc["flows"].pop("tcp")
    for i in range(n_flows):
        sink = {**sc["topology"]["sink_access"], **groups[f"f{i}"]["sink_access"]}
        sc["flows"][f"f{i}"] = {**tcp, "count": 1, "sink_access": sink}
    replay = tcplab.run(sc)
    g1, g2 = replay.metrics["normalized_goodput"], ns2.metrics["normalized_goodput"]
    assert g1 == pytest.approx(g2, rel=0.005), (g1, g2)
