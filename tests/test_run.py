"""`tcplab run` and `tcplab.run`: the Python layer over the packet engine."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

import tcplab
from tcplab.errors import UserError
from tcplab.scenario import apply_overrides, parse_override

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = ROOT / "scenarios"


def cli(*args, check=True):
    p = subprocess.run([sys.executable, "-m", "tcplab.cli", *args], capture_output=True, text=True, cwd=ROOT)
    if check and p.returncode != 0:
        raise AssertionError(f"exit {p.returncode}: {p.stderr}")
    return p


def small(**over):
    sc = {
        "duration": "60s", "warmup": "5s",
        "topology": {
            "bottleneck": {"rate": "1Mbps", "delay": "5ms", "buffer": 40},
            "access": {"rate": "10Mbps", "delay": "5ms", "buffer": 100},
            "sink_access": {"rate": "10Mbps", "delay": "5ms", "buffer": 100},
        },
        "flows": {"tcp": {"kind": "tcp", "variant": "reno"}},
    }
    return apply_overrides(sc, list(over.items()))


def test_overrides_parse_toml_values_and_plain_strings():
    assert parse_override("flows.tcp.count=10") == (["flows", "tcp", "count"], 10)
    assert parse_override("flows.tcp.variant=newreno") == (["flows", "tcp", "variant"], "newreno")
    assert parse_override("topology.bottleneck.delay=5ms")[1] == "5ms"
    assert parse_override("flows.tcp.beta=0.875")[1] == 0.875
    with pytest.raises(UserError):
        parse_override("no-equals-sign")


def test_one_newreno_flow_fills_the_link_and_results_have_the_shape():
    # NewReno recovers from the two losses that end each sawtooth without a
    # timeout, so the 40-packet buffer (> BDP) never drains. (Reno times out
    # there — as ns-2's Reno does; see test_ns2_differential.)
    res = tcplab.run(small(**{"flows.tcp.variant": "newreno"}))
    assert res.engine == "packet"
    assert res.scenario["flows"]["tcp"]["min_rto"] == "200ms", "defaults filled in"
    assert res.metrics["bottleneck_utilization"] > 0.99
    # goodput = 960 payload bytes of every 1000 on the wire
    assert res.metrics["normalized_goodput"] == pytest.approx(0.96 * res.metrics["bottleneck_utilization"], rel=0.01)
    assert list(res.flows["id"]) == [0]
    assert {"goodput_bps", "delivered_bytes", "retransmissions", "timeouts", "fast_retransmits"} <= set(res.flows)
    assert {"drops", "utilization"} <= set(res.links)


def test_traces_come_back_as_tables():
    res = tcplab.run(small(), trace=["cwnd", "queue", "seq"])
    tcp = res.traces["tcp"]
    assert {"t", "flow", "cwnd", "ssthresh", "inflight"} <= set(tcp)
    assert tcp["cwnd"].max() > 20, "the window opens up to buffer + BDP"
    q = res.traces["queue"]
    assert q["tcp"].max() <= 40 and q["tcp"].max() >= 35, "the buffer fills to its limit before a drop"
    sends = res.traces["sends"]
    assert sends["rtx"].sum() >= res.flows["retransmissions"].sum(), "every retransmission is in the trace"


def test_run_cli_writes_summary_and_tables(tmp_path):
    out = tmp_path / "run"
    cli("run", str(SCENARIOS / "c-parallel-sack.toml"), "--set", "flows.sack.count=3", "--set", "duration=60s", "--set", "warmup=10s",
        "--trace", "cwnd", "--out", str(out))
    summary = json.loads((out / "summary.json").read_text())
    for key in ("engine", "engine_version", "scenario", "flows", "links", "metrics"):
        assert key in summary
    assert summary["scenario"]["flows"]["sack"]["count"] == 3
    assert [f["id"] for f in summary["flows"]] == [0, 1, 2]
    assert all({"id", "kind", "goodput_bps", "delivered_bytes"} <= set(f) for f in summary["flows"])
    assert (out / "flows.csv").exists() and (out / "traces" / "tcp.parquet").exists()


@pytest.mark.parametrize("override, path", [
    ("flows.tcp.varaint=reno", "flows.tcp.varaint"),
    ("topology.bottleneck.delay=5parsecs", "topology.bottleneck.delay"),
    ("topology.bottleneck.rate=-1Mbps", "topology.bottleneck.rate"),
    ("flows.tcp.variant=vegas", "flows.tcp.variant"),
    ("flows.tcp.beta=1.5", "flows.tcp.beta"),
    ("flows.tcp.count=0", "flows.tcp.count"),
])
def test_bad_input_names_the_key_exits_2_and_writes_nothing(tmp_path, override, path):
    out = tmp_path / "never"
    p = cli("run", str(SCENARIOS / "a-constant-udp.toml"), "--set", override, "--out", str(out), check=False)
    assert p.returncode == 2
    assert path in p.stderr
    assert "Traceback" not in p.stderr
    assert not out.exists()
    assert list(tmp_path.iterdir()) == [], "no partial output left behind"


def test_missing_file_and_bad_toml_are_user_errors(tmp_path):
    p = cli("run", str(tmp_path / "nope.toml"), check=False)
    assert p.returncode == 2 and "no such scenario file" in p.stderr
    bad = tmp_path / "bad.toml"
    bad.write_text("duration = \n")
    p = cli("run", str(bad), check=False)
    assert p.returncode == 2 and "not valid TOML" in p.stderr


@pytest.mark.parametrize("path", sorted(SCENARIOS.glob("*.toml")), ids=lambda p: p.stem)
def test_every_example_scenario_resolves(path):
    sc = tcplab.load_scenario(path)
    assert sc["flows"]


def test_tick_seed_places_the_clock_ticks_and_bad_values_name_the_key():
    # tick_seed fixes the tick phase (ns-2's boot_time_ after `$defaultRNG seed K`),
    # whatever the scenario seed; without it the phase follows the scenario seed.
    def rtt(seed, tick_seed=None):
        over = {"seed": seed, "duration": "20s", "trace.series": ["rtt"]}
        if tick_seed is not None:
            over["flows.tcp.tick_seed"] = tick_seed
        return tcplab.run(small(**over)).traces["rtt"][["srtt", "rttvar"]].values.tolist()

    assert rtt(1) != rtt(2)  # the phase moves the RTT samples by a tick here
    assert rtt(1, 5) == rtt(2, 5)
    for bad in (0, 2**31 - 1, -1):
        with pytest.raises(UserError, match=r"flows\.tcp\.tick_seed"):
            tcplab.run(small(**{"flows.tcp.tick_seed": bad}))
    udp = small()
    udp["flows"]["u"] = {"kind": "udp", "rate": "100kbps", "tick_seed": 3}
    with pytest.raises(UserError, match=r"flows\.u\.tick_seed"):
        tcplab.run(udp)


def test_profile_ns2_2001_starts_from_the_paper_eras_defaults_and_a_set_key_wins():
    from tcplab.scenario import resolve

    era = resolve(small(**{"flows.tcp.profile": "ns2-2001"}))["flows"]["tcp"]
    assert (era["initial_cwnd"], era["syn"], era["limited_transmit"]) == (1, False, False)
    assert (era["tick"], era["min_rto"], era["initial_rto"], era["max_rto"]) == ("100ms", "0s", "6s", "64s")
    now = resolve(small())["flows"]["tcp"]
    assert (now["initial_cwnd"], now["tick"], now["max_rto"]) == (2, "10ms", "60s")
    # resolved means every key filled, cc and profile too (issue 29: consumers kept
    # fallbacks of their own); a result's keys name its build anyway
    assert (now["profile"], now["cc"]) == ("ns2-2.35", "reno")
    # a paper's own value beats the profile's
    paper = resolve(small(**{"flows.tcp.profile": "ns2-2001", "flows.tcp.tick": "0.5s"}))["flows"]["tcp"]
    assert paper["tick"] == "500ms"
    with pytest.raises(UserError, match=r"flows\.tcp\.profile"):
        resolve(small(**{"flows.tcp.profile": "ns2-1999"}))
    udp = small()
    udp["flows"]["u"] = {"kind": "udp", "rate": "100kbps", "profile": "ns2-2001"}
    with pytest.raises(UserError, match=r"flows\.u\.profile"):
        resolve(udp)
