"""Runs the packet engine cannot do in reasonable time or memory are refused
before they start, naming the key; --force / force=True runs them anyway."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

import tcplab
from tcplab.errors import UserError
from tcplab.scenario import _core, load_scenario

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = sorted((ROOT / "scenarios").glob("*.toml")) + sorted((ROOT / "bench" / "scenarios").glob("*.toml"))


def cli(*args):
    return subprocess.run([sys.executable, "-m", "tcplab.cli", *args], capture_output=True, text=True, cwd=ROOT)


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.stem)
def test_every_shipped_scenario_is_well_within_the_limits(path):
    b = dict(_core().estimate_budget(json.dumps(load_scenario(path, []))))
    assert b["events"] < b["max_events"] / 100
    assert b["memory_bytes"] < b["max_memory_bytes"] / 10


@pytest.mark.parametrize("override,key", [
    ("duration=1e8s", "duration"),
    ("flows.background.rate.mean=9000Gbps", "flows.background.rate"),
    ("flows.tcp.count=1000000000", "flows.tcp.count"),
])
def test_a_run_beyond_the_limits_is_refused_naming_the_key(override, key, tmp_path):
    out = tmp_path / "out"
    p = cli("run", str(ROOT / "scenarios" / "a-sine-background.toml"), "--set", override, "--out", str(out))
    assert p.returncode == 2, p.stderr
    assert f"{key}: this run would" in p.stderr and "--force" in p.stderr
    assert "Traceback" not in p.stderr and not out.exists()


def test_trace_interval_of_a_nanosecond_is_refused():
    p = cli("run", str(ROOT / "scenarios" / "a-sine-background.toml"), "--trace", "cwnd", "--trace-interval", "1ns")
    assert p.returncode == 2 and "trace.interval: this run would" in p.stderr, p.stderr


def test_force_runs_it_anyway(tmp_path):
    # The estimate is an upper bound: a TCP flow may send as fast as its
    # links, 1000 Gb/s here, for 1000 s. With a 2-packet window over a 400 ms
    # RTT it sends a few thousand packets: refused, yet quick when forced.
    over = ["topology.bottleneck.rate=1000Gbps", "topology.access.rate=1000Gbps",
            "topology.sink_access.rate=1000Gbps", "topology.bottleneck.delay=100ms",
            "flows.tcp.window=2", "duration=1000s", "warmup=0s"]
    path = ROOT / "scenarios" / "b-dumbbell.toml"
    over.append("flows.tcp.count=1")
    with pytest.raises(UserError, match="duration: this run would send"):
        tcplab.run(path, overrides=over)
    res = tcplab.run(path, overrides=over, force=True)
    assert 0 < res.metrics["events"] < 1e6
    p = cli("run", str(path), *[a for o in over for a in ("--set", o)], "--force", "--json")
    assert p.returncode == 0, p.stderr
