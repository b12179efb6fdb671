"""ECN (RFC 3168) and DCTCP (RFC 8257) on the packet engine, held against the DCTCP
steady-state model of Alizadeh et al. (SIGCOMM 2010, Sec. 3.3; `tcplab.models.dctcp`).

The mechanisms themselves have dialogue tests in Rust (`tcp::sender`, `tcp::cc::dctcp`).
"""

import numpy as np
import pytest

import tcplab
from tcplab.errors import UserError
from tcplab.models import dctcp as model

SCENARIO = "scenarios/dctcp.toml"
C_PKTS = 100e6 / (1500 * 8)  # packets/s
RTT = 0.010


def _run(k):
    r = tcplab.run(SCENARIO, overrides=[f"topology.bottleneck.red.min_thresh={k}",
                                        f"topology.bottleneck.red.max_thresh={k}"])
    q = r.traces["queue"]
    q = q[(q["link"] == 0) & (q["t"] > 5.0)]  # the bottleneck, after the warm-up
    queue = (q["tcp"] + q["udp"]).to_numpy()
    links = r.links
    util = float(links[(links["name"] == "bottleneck") & (links["direction"] == "forward")]["utilization"].iloc[0])
    return r, queue, util


def test_dctcp_queue_oscillates_where_its_model_says_and_the_link_stays_busy():
    """K = 20 > C·RTT/7 ≈ 12: the model's queue swings between Q_min ≈ 11.8 and
    Q_max = K + N = 22 packets and never empties. Measured (15 s after 5 s of warm-up):
    12 … 23, the link busy all the time, nothing dropped. The tolerance, 2 packets each
    side, is the model's own discreteness: it lets the window rise one packet above W*
    before the marks arrive and counts the queue at whole packets, per flow."""
    r, queue, util = _run(20)
    qmin, qmax = model.queue_min(C_PKTS, RTT, 20, 2), model.queue_max(C_PKTS, RTT, 20, 2)
    assert qmin - 2 <= queue.min() and queue.max() <= qmax + 2, (queue.min(), queue.max(), qmin, qmax)
    assert util > 0.999
    assert r.metrics["bottleneck_drops"] == 0
    # the oscillation is there, not a flat queue: its spread covers most of the model's
    assert np.percentile(queue, 95) - np.percentile(queue, 5) >= 0.6 * (qmax - qmin)


def test_dctcp_below_the_marking_guideline_empties_the_queue():
    """K = 3 < C·RTT/7: the model's Q_min is below 0, so the queue empties each
    cycle and the link idles (measured 98.4% busy, against 100% at K = 20)."""
    assert model.queue_min(C_PKTS, RTT, 3, 2) < 0 < model.queue_min(C_PKTS, RTT, 20, 2)
    _, queue, util = _run(3)
    assert queue.min() == 0
    assert util < 0.995


def test_classic_ecn_turns_red_early_drops_into_marks():
    """RFC 3168 over paper C's RED (buffer 100, where RED drops early): with ECN the
    early drops become marks, so only full-buffer drops remain (measured 1215 → 516
    drops in 200 s) and no flow times out (25 → 0), at the same goodput (0.933 vs
    0.932: within 2%, the spread of RED's random drops between such runs)."""
    base = ["duration=200s", "warmup=20s", "topology.bottleneck.buffer=100"]
    plain = tcplab.run("scenarios/c-red.toml", overrides=base)
    ecn = tcplab.run("scenarios/c-red.toml",
                     overrides=base + ["topology.bottleneck.red.ecn=true", "flows.sack.ecn=true"])
    assert ecn.metrics["bottleneck_drops"] < 0.6 * plain.metrics["bottleneck_drops"]
    assert ecn.flows["timeouts"].sum() < plain.flows["timeouts"].sum()
    assert ecn.metrics["normalized_goodput"] == pytest.approx(plain.metrics["normalized_goodput"], rel=0.02)


def test_ecn_keys_resolve_and_other_engines_refuse_what_they_cannot_honour():
    from tcplab.backends.ns2 import Ns2CannotRun, export_tcl
    from tcplab.scenario import load_scenario

    sc = load_scenario(SCENARIO)
    assert sc["flows"]["dctcp"]["ecn"] is True  # cc = "dctcp" turns ECN on
    with pytest.raises(Ns2CannotRun, match=r"flows\.dctcp\.cc"):
        export_tcl(sc)
    # classic ECN is ns-2's: the agents' ecn_, RED's setbit_ marking every early drop
    tcl = export_tcl(load_scenario("scenarios/c-red.toml", [("flows.sack.ecn", True),
                                                            ("topology.bottleneck.red.ecn", True)]))
    assert "ecn_ 1" in tcl and "setbit_ true" in tcl and "mark_p_ 2" in tcl
    with pytest.raises(UserError, match=r"flows\.background\.ecn: is a TCP option"):
        load_scenario("scenarios/a-constant-udp.toml", [("flows.background.ecn", True)])
