"""The speed suite's plumbing (bench/): scenarios resolve or are skipped with a
visible reason, the ns-3 twin's plan carries the ns-2 export's start times and
tcplab's own UDP departures, the child runner reports what the suite prints.
Wall times are never asserted (the machine is shared)."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"
sys.path.insert(0, str(BENCH))

import ns3  # noqa: E402
import run as suite  # noqa: E402
from tcplab.units import parse_duration  # noqa: E402


def dur(sc: dict) -> float:
    return parse_duration(sc["duration"])


def test_every_scenario_resolves_or_is_skipped_with_a_reason():
    for name in suite.SCENARIOS:
        sc, skipped = suite.prepare(name, quick=True)
        if sc is None:
            # only the threshold-dropper scenario may be skipped, and only by an
            # engine that does not know that queue
            assert name == "f_threshold10"
            assert skipped.startswith("needs threshold dropper") and "threshold" in skipped
        else:
            full, _ = suite.prepare(name, quick=False)
            assert dur(sc) == pytest.approx(dur(full) / 10)


def test_ns3_plan_matches_the_ns2_export_and_the_engine_departures(tmp_path):
    from tcplab.backends.ns2 import _plan
    from tcplab.scenario import _core

    sc, _ = suite.prepare("d_sine_background", quick=True)
    path = ns3.write_plan(sc, tmp_path)
    lines = path.read_text().splitlines()
    flows = [ln.split() for ln in lines if ln.startswith("flow ")]
    plan = _plan(sc)
    assert len(flows) == len(plan.flows) == 2
    for f, words in zip(plan.flows, flows):
        assert words[1] == f.kind
        assert float(words[3]) == f.start_s and float(words[4]) == f.stop_s
        assert int(words[6 + 2]) == f.access.buffer_pkts
    udp = next(f for f in plan.flows if f.kind == "udp")
    times_file = next(w[-1] for w in flows if w[1] == "udp")
    got = np.loadtxt(times_file)
    want = np.frombuffer(_core().udp_departures(json.dumps(plan.scenario), int(udp.id)), dtype="<i8") / 1e9
    assert len(got) == len(want) > 1000
    assert np.allclose(got, want, rtol=0, atol=1e-12)
    assert f"bottleneck {1e6!r} {0.005!r} 40" in lines


def test_ns3_twin_refuses_what_it_does_not_model(tmp_path):
    sc, _ = suite.prepare("e_per100_100mbps", quick=True)
    sc = json.loads(json.dumps(sc))
    sc["topology"]["access"]["errors"] = {"model": "bernoulli", "per": 0.01}
    with pytest.raises(ns3.Unavailable, match="access links"):
        ns3.write_plan(sc, tmp_path)


def test_scale_scenarios_aim_at_the_packet_count():
    assert [suite.scale_packets(r, 1e5) for r in (1, 10, 100)] == pytest.approx([1e5, 5e5, 2.5e6])
    sc = suite.scale_scenario(1000, 1, 5e5)
    assert sc["flows"]["reno"]["count"] == 1000
    assert dur(sc) == pytest.approx(4000)
    sc = suite.scale_scenario(10, 100, 5e5)
    assert dur(sc) == pytest.approx(40)


def test_fit_recovers_a_line():
    pts = [(p, 0.05 + 3e-7 * p) for p in (1e4, 1e5, 1e6)]
    f = suite.fit(pts)
    assert f["s_per_packet"] == pytest.approx(3e-7)
    assert f["intercept_s"] == pytest.approx(0.05)


def _child(sim: str, tmp_path) -> dict:
    """One 5-s run of benchmark (a) through the suite's child runner."""
    sc, _ = suite.prepare("a_reno_1mbps", quick=True)
    p = tmp_path / "sc.json"
    p.write_text(json.dumps(dict(sc, duration="5s", warmup="1s")))
    out = subprocess.run([sys.executable, str(BENCH / "child.py"), sim, str(p)],
                         capture_output=True, text=True, check=True)
    r = json.loads(out.stdout.splitlines()[-1])
    # 1 Mb/s for 5 s is at most 625 packets of 1000 bytes
    assert 100 < r["delivered"] <= 625
    return r


def test_child_reports_a_tcplab_run(tmp_path):
    r = _child("tcplab", tmp_path)
    assert r["events"] >= r["delivered"]  # at least one event per delivery
    assert r["peak_rss_mb"] > 10


@pytest.mark.ns2
def test_child_ns2_peak_memory_is_ns_itself(tmp_path):
    """ns-2's peak RSS is the `ns` process's, not the Python launcher's (~100 MB)."""
    r = _child("ns2", tmp_path)
    if Path("/usr/bin/time").exists():
        assert 1 < r["peak_rss_mb"] < 60


def test_cost_guard_fails_over_budget_and_passes_within(tmp_path, monkeypatch, capsys):
    import json as _json

    import cost_guard

    budget = tmp_path / "budget.json"
    budget.write_text(_json.dumps({"tolerance": 0.02, "cases": {"a_reno_1mbps": {"per_packet": 1000.0}}}))
    monkeypatch.setattr(cost_guard, "BUDGET", budget)
    monkeypatch.setattr(cost_guard, "build", lambda: "exe")
    cost = {"per": 1019.0}
    monkeypatch.setattr(cost_guard, "count", lambda exe, sc: {"per_packet": cost["per"]})
    assert cost_guard.main(["--only", "a_reno_1mbps"]) == 0       # +1.9 %: within 2 %
    cost["per"] = 1021.0
    assert cost_guard.main(["--only", "a_reno_1mbps"]) == 1       # +2.1 %: over
    assert "OVER BUDGET" in capsys.readouterr().out
    assert cost_guard.main(["--only", "a_reno_1mbps", "--update", "meant: a test"]) == 0
    case = _json.loads(budget.read_text())["cases"]["a_reno_1mbps"]
    assert case["per_packet"] == 1021.0 and case["history"][-1]["why"] == "meant: a test"
    assert cost_guard.main(["--only", "a_reno_1mbps"]) == 0


def test_htsim_twin_gets_the_dumbbell_it_twins(monkeypatch):
    """bench/htsim.py: the twin's command line carries the scenario's numbers, and a
    missing twin is a named reason, not a crash."""
    import htsim

    sc, _ = suite.prepare("b_sack10_10mbps", quick=False)
    args = htsim.args_of(sc, lean=True)
    pairs = dict(zip(args[0:-1:2], args[1::2]))
    assert pairs == {"-n": "10", "-rate": "10", "-delay": "40", "-buffer": "20",
                     "-access-rate": "100", "-access-delay": "10", "-time": "600"}
    assert args[-1] == "-lean" and "-lean" not in htsim.args_of(sc, lean=False)
    monkeypatch.delenv(htsim.ENV, raising=False)
    with pytest.raises(htsim.Unavailable, match="TCPLAB_HTSIM"):
        htsim.binary()
    with pytest.raises(htsim.Unavailable, match="not an executable"):
        htsim.binary("/nonexistent/htsim-twin")


def test_flows_series_scenario_counts_every_packet():
    """The N series counts packets from time zero (the twin counts every packet too)."""
    sc = suite.scale_scenario(100, suite.FLOWS_RATE_MBPS, 0, duration=2, warmup=0)
    assert dur(sc) == 2 and parse_duration(sc["warmup"]) == 0
    assert sc["flows"]["reno"]["count"] == 100
