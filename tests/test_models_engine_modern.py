"""The CUBIC, BBR and buffer-sizing closed forms (tcplab.models.cubic, .bbr, .buffers)
held against the packet engine, in each model's domain. DCTCP has no engine
counterpart (the engine has no ECN), so tests/test_models_modern.py checks its formulas only.

Each run is a few hundred thousand packets (well under a second of engine time); the
numbers measured when these tests were written are in docs/engines.md ("Held against
the packet engine")."""

import statistics

import pytest

import tcplab
from tcplab.models import bbr, buffers, cubic
from tcplab.plan import plan


def _link(result, link_id=0):
    links = result.links
    return links[links["id"] == link_id].iloc[0]


def _packets_per_s(result, packet_size=1000):
    return result.metrics["tcp_throughput_bps"] / (8 * packet_size)


# --- CUBIC: one flow, random packet errors on a 100 Mb/s bottleneck -------------------------


def _cubic_scenario(per, rtt, seed, duration=600):
    # one-way delay rtt/2: 1 ms access + (rtt/2 − 2 ms) bottleneck + 1 ms sink access;
    # 100 Mb/s is 12 500 packets/s, ten times what the flow reaches: the loss rate, not
    # the link, limits it, and the queue stays empty (RTT = propagation)
    return {
        "seed": seed, "duration": f"{duration}s", "warmup": "20s",
        "topology": {
            "bottleneck": {"rate": "100Mbps", "delay": f"{(rtt / 2 - 0.002) * 1e3:g}ms", "buffer": 2000,
                           "errors": {"model": "bernoulli", "per": per}},
            "access": {"rate": "1Gbps", "delay": "1ms", "buffer": 2000},
            "sink_access": {"rate": "1Gbps", "delay": "1ms", "buffer": 2000},
        },
        "flows": {"tcp": {"kind": "tcp", "cc": "cubic", "profile": "linux", "packet_size": 1000}},
    }


def _cubic_ratios(per, rtt, seeds=range(1, 6)):
    """Measured throughput over the response function at each run's measured loss rate
    (errors over arrivals at the bottleneck), and the runs' throughputs."""
    ratios, rates = [], []
    for seed in seeds:
        scn = _cubic_scenario(per, rtt, seed)
        p = plan(scn)
        assert p.base_rtt_s("tcp") == pytest.approx(rtt, rel=1e-9)
        res = tcplab.run(scn)
        link = _link(res)
        p_hat = link["errors"] / link["arrivals"]
        rates.append(_packets_per_s(res))
        ratios.append(rates[-1] / cubic.cubic_throughput(p_hat, rtt))
    return ratios, rates


# Tolerance: ±10 % of the response function. The function is a fluid model with
# deterministic losses; the engine adds Bernoulli gaps between losses, loss recovery
# (about one RTT in a 26-RTT epoch here, sending less), delayed acks and whole-segment
# windows. The runs are long enough that sampling is not the issue: 600 s is about
# 1 100 loss events per seed at p = 1e-3, RTT 20 ms, and the model is evaluated at
# each run's own measured loss rate; over 5 seeds the ratios spread by ±1 %.
CUBIC_TOLERANCE = 0.10


def test_cubic_response_function_in_the_reno_friendly_region():
    # p = 1e-3, RTT 20 ms: AVG_W_cubic = 9.97 < sqrt(3/(2p)) = 38.73 packets
    assert cubic.explain_cubic(1e-3, 0.02)["region"] == "reno-friendly"
    ratios, _ = _cubic_ratios(1e-3, 0.02)
    assert statistics.mean(ratios) == pytest.approx(1.0, abs=CUBIC_TOLERANCE), ratios


def test_cubic_region_follows_the_cubic_curve_not_the_reno_estimate():
    # p = 1e-3, RTT 200 ms: AVG_W_cubic = 56.05 > 38.73, the cubic region. Whatever the
    # exact level, the engine must be well above what the Reno-friendly estimate alone
    # gives (38.73/0.2 = 194 packets/s); CUBIC's region is real in the engine.
    assert cubic.explain_cubic(1e-3, 0.2)["region"] == "cubic"
    _, rates = _cubic_ratios(1e-3, 0.2, seeds=range(1, 4))
    assert min(rates) > 1.3 * cubic.reno_friendly_window(1e-3) / 0.2, rates


@pytest.mark.xfail(strict=True, raises=AssertionError, reason=(
    "the engine's CUBIC (Linux's tcp_cubic.c) runs 13-24 % above RFC 9438's response function in "
    "the cubic region (5 seeds, mean +17 %; +19 % with the RFC's own deterministic losses): its "
    "integer target reaches W_max once C·(K − t)³ < 1 packet, about 1.36 s before the continuous "
    "curve, and it aims one RTT ahead; the RFC's average assumes the continuous concave curve"))
def test_cubic_response_function_in_the_cubic_region():
    ratios, _ = _cubic_ratios(1e-3, 0.2)
    assert statistics.mean(ratios) == pytest.approx(1.0, abs=CUBIC_TOLERANCE), ratios


# --- BBR against CUBIC: Ware et al., IMC 2019 -----------------------------------------------


def _bbr_scenario(buffer_bdp, seed, n_cubic=1, duration=300):
    # 10 Mb/s of 1000-byte packets (1250 /s), RTT 40 ms: a BDP of 50 packets
    return {
        "seed": seed, "duration": f"{duration}s", "warmup": "60s",
        "topology": {
            "bottleneck": {"rate": "10Mbps", "delay": "18ms", "buffer": int(round(buffer_bdp * 50))},
            "access": {"rate": "1Gbps", "delay": "1ms", "buffer": 5000},
            "sink_access": {"rate": "1Gbps", "delay": "1ms", "buffer": 5000},
        },
        "flows": {
            "bbr": {"kind": "tcp", "cc": "bbr", "profile": "linux", "packet_size": 1000, "start_jitter": "1s"},
            "loss": {"kind": "tcp", "cc": "cubic", "profile": "linux", "packet_size": 1000,
                     "count": n_cubic, "start_jitter": "1s"},
        },
    }


def _bbr_share(buffer_bdp, n_cubic=1, seeds=(1, 2, 3)):
    shares = []
    for seed in seeds:
        scn = _bbr_scenario(buffer_bdp, seed, n_cubic)
        p = plan(scn)
        rate = p.bottleneck()["rate_bps"] / (8 * 1000)
        assert rate * p.base_rtt_s("bbr") == pytest.approx(50, rel=1e-9)
        g = tcplab.run(scn).metrics["groups"]
        shares.append(g["bbr"]["goodput_bps"] / (g["bbr"]["goodput_bps"] + g["loss"]["goodput_bps"]))
    return statistics.mean(shares)


def test_bbr_share_does_not_depend_on_the_number_of_loss_based_flows():
    # The model's central claim (Ware et al.): against 1 or 3 CUBIC flows one BBR
    # flow keeps about the same share, while its fair share would fall from 1/2 to 1/4.
    one, three = _bbr_share(4, n_cubic=1), _bbr_share(4, n_cubic=3)
    assert abs(one - three) < 0.1, (one, three)
    assert three > 0.25 + 0.1, three


@pytest.mark.xfail(strict=True, raises=AssertionError, reason=(
    "the engine's BBR takes less than the model says: 1 BBR + 1 CUBIC, 10 Mb/s, 40 ms, 3 seeds "
    "of 300 s: 0.567 at 2 BDP (model 0.765) and 0.454 at 4 BDP (model 0.619); the queue is not "
    "kept full (mean 164 of 200 packets at 4 BDP) while BBR's RTT estimate (~104 ms) is close "
    "to the model's (98 ms)"))
@pytest.mark.parametrize("buffer_bdp", [2, 4])
def test_bbr_share_against_one_cubic_flow(buffer_bdp):
    # Tolerance ±0.1 of the link: the paper's own median error against CUBIC is 5 %, and
    # three seeds of 300 s (30 probe-rtt periods each) spread by about ±0.02.
    expected = bbr.bbr_share(buffer_bdp, 1250, 0.04)
    assert _bbr_share(buffer_bdp) == pytest.approx(expected, abs=0.1)


# --- Buffer sizing: Appenzeller, Keslassy, McKeown, SIGCOMM 2004 ---------------------------


def _reno_scenario(buffer, seed, groups=4, per_group=4):
    # 10 Mb/s of 1000-byte packets; groups with access delays 2, 8, 14, 20 ms (RTTs 88 to
    # 124 ms) and 5 s of start jitter, so losses are not synchronized
    flows = {
        f"g{i}": {"kind": "tcp", "variant": "sack", "count": per_group, "start_jitter": "5s",
                  "window": 10000, "access": {"delay": f"{2 + 6 * i}ms"}}
        for i in range(groups)
    }
    return {
        "seed": seed, "duration": "300s", "warmup": "50s",
        "topology": {
            "bottleneck": {"rate": "10Mbps", "delay": "40ms", "buffer": buffer},
            "access": {"rate": "100Mbps", "delay": "2ms", "buffer": 5000},
            "sink_access": {"rate": "100Mbps", "delay": "2ms", "buffer": 5000},
        },
        "flows": flows,
    }


def _mean_rtt_and_rate(scn):
    p = plan(scn)
    rtts = [p.base_rtt_s(name) for name in scn["flows"]]
    return sum(rtts) / len(rtts), p.bottleneck()["rate_bps"] / (8 * 1000)


def _utilization(buffer, **kw):
    return statistics.mean(tcplab.run(_reno_scenario(buffer, seed, **kw)).metrics["bottleneck_utilization"]
                           for seed in (1, 2, 3))


def test_sqrt_n_buffer_keeps_sixteen_desynchronized_flows_near_full():
    rtt, rate = _mean_rtt_and_rate(_reno_scenario(1, 1))
    rule = buffers.sqrt_n_buffer(rate, rtt, 16)  # 1250 · 0.106 / 4 = 33 packets
    assert rule == pytest.approx(33.1, abs=0.1)
    # near-full: at least 98 % (three seeds spread by 0.1 %)
    assert _utilization(round(rule)) >= 0.98
    # a quarter of it (8 packets) is not enough
    assert _utilization(round(rule / 4)) < 0.9


def test_bdp_buffer_keeps_one_flow_full_and_a_tenth_of_it_does_not():
    scn = _reno_scenario(1, 1, groups=1, per_group=1)
    rtt, rate = _mean_rtt_and_rate(scn)
    rule = buffers.bdp_buffer(rate, rtt)  # 1250 · 0.088 = 110 packets
    assert rule == pytest.approx(110, abs=0.5)
    assert _utilization(round(rule), groups=1, per_group=1) >= 0.99
    assert _utilization(round(rule / 10), groups=1, per_group=1) < 0.9
