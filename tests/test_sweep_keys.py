"""The store's key: the same scenario written differently is the same point;
any change that can change the result is a new point."""

import tomllib

from tcplab.sweep import parse_sweep, plan
from tcplab.sweep.engines import engine_version, prepare
from tcplab.sweep.keys import point_key

A = """
name = "a"
seed = 1
duration = "20s"
warmup = "5s"
[topology]
bottleneck  = { rate = "10Mbps", delay = "50ms", buffer = 20 }
access      = { rate = "100Mbps", delay = "5ms", buffer = 1000 }
sink_access = { rate = "100Mbps", delay = "5ms", buffer = 1000 }
[flows.sack]
kind = "tcp"
variant = "sack"
count = 3
"""

# the same scenario: other name, other order, sections for inline tables,
# other units, plain SI numbers, defaults written out, integers for floats
B = """
warmup = 5
duration = "20000ms"
name = "b"
description = "a label"
seed = 1
[flows.sack]
count = 3
beta = 0.5
alpha = 1
variant = "sack"
kind = "tcp"
window = 100000
min_rto = "0.2s"
[topology.sink_access]
buffer = 1000
delay = 0.005
rate = "100000kbps"
[topology.access]
delay = "5ms"
rate = "0.1Gbps"
buffer = 1000
[topology.bottleneck]
buffer = 20
rate = 10e6
delay = "0.05s"
"""


def key(text_or_dict, engine="packet"):
    sc = tomllib.loads(text_or_dict) if isinstance(text_or_dict, str) else text_or_dict
    return point_key(prepare(engine, sc), engine, engine_version(engine))


def test_same_scenario_written_differently_has_the_same_key():
    assert key(A) == key(B)


def test_changed_parameter_seed_or_engine_gives_a_new_key():
    base = key(A)
    assert key(A.replace("count = 3", "count = 4")) != base
    assert key(A.replace("seed = 1", "seed = 2")) != base
    assert key(A.replace('delay = "50ms"', 'delay = "51ms"')) != base
    sc = prepare("packet", tomllib.loads(A))
    assert point_key(sc, "ns2", engine_version("packet")) != base
    assert point_key(sc, "packet", "0.0.0-other") != base


def test_keys_do_not_depend_on_the_process():
    # a fixed scenario and version always hash alike (no dict order, no id()) — the
    # same computation in a fresh interpreter gives the same key
    import subprocess
    import sys

    code = ("import tomllib, sys; from tcplab.sweep.keys import point_key; from tcplab.sweep.engines import "
            "prepare, engine_version; print(point_key(prepare('packet', tomllib.loads(sys.stdin.read())), "
            "'packet', engine_version('packet')))")
    out = subprocess.run([sys.executable, "-c", code], input=B, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == key(A)


def test_sweep_points_written_differently_share_keys():
    # a base from a file with an axis value vs the same values inline, with the
    # varied parameter written as a unit string in one and SI in the other
    s1 = parse_sweep({"scenario": tomllib.loads(A), "axes": {"topology.bottleneck.delay": ["50ms", "0.1s"]}})
    s2 = parse_sweep({"scenario": tomllib.loads(B), "axes": {"topology": {"bottleneck": {"delay": [0.05, "100ms"]}}}})
    assert [p.key for p in plan(s1)] == [p.key for p in plan(s2)]


def test_fluid_defaults_written_out_do_not_change_the_key():
    short = {"n": 3, "beta": 0.5, "events": 1000}
    full = {"n": 3, "beta": 0.5, "events": 1000, "eta": 1, "policy": "rate-proportional", "seed": 1,
            "warmup": 100, "batches": 32, "capacity": 1}
    assert key(short, "fluid") == key(full, "fluid")
    assert key({**short, "events": 2000}, "fluid") != key(short, "fluid")
