"""`_core.plan`: the scenario resolved once, in Rust, into what a run does."""

from __future__ import annotations

import json

import pytest

from tcplab.scenario import _core

SCENARIO = {
    "duration": "20s",
    "warmup": "2s",
    "seed": 7,
    "topology": {
        "bottleneck": {
            "rate": "10Mbps",
            "delay": "20ms",
            "buffer": 50,
            "queue": "red",
            "red": {"preset": "paper-c"},
        },
        "access": {
            "rate": "100Mbps",
            "delay": "1ms",
            "buffer": 100,
            "outages": {"every": "4s", "duration": "1s"},
        },
        "sink_access": {"rate": "100Mbps", "delay": "1ms", "buffer": 100},
    },
    "flows": {
        "joiners": {
            "kind": "tcp",
            "count": 6,
            "start": "0.5s",
            "start_jitter": "1s",
            "joins": {"initial": 2, "at": "5s", "every": "5s", "factor": 2},
        },
        "leavers": {
            "kind": "tcp",
            "count": 4,
            "packet_size": 1500,
            "leaves": {"at": "10s", "every": "5s", "factor": 0.5},
        },
        "udp": {"kind": "udp", "rate": "1Mbps"},
    },
}


@pytest.fixture(scope="module")
def plan() -> dict:
    return json.loads(_core().plan(json.dumps(SCENARIO)))


def test_start_and_stop_instants_follow_jitter_and_schedules(plan):
    joiners = [f for f in plan["flows"] if f["group"] == "joiners"]
    # two start at 0.5 s + up to 1 s of jitter, each at its own instant
    first = [f["start_ns"] for f in joiners[:2]]
    assert all(500_000_000 <= t <= 1_500_000_000 for t in first)
    assert first[0] != first[1]
    # 2 -> 4 at 5 s, 4 -> 6 at 10 s (count caps 8), each plus its jitter
    for f, step in zip(joiners[2:], [5, 5, 10, 10]):
        assert step * 10**9 <= f["start_ns"] <= (step + 1) * 10**9
    # 4 -> 2 leave at 10 s, then 2 -> 1 at 15 s; the last one never leaves
    leavers = [f["stop_ns"] for f in plan["flows"] if f["group"] == "leavers"]
    assert leavers == [20 * 10**9, 15 * 10**9, 10 * 10**9, 10 * 10**9]


def test_red_thresholds_are_resolved_once_and_agree_with_the_resolved_scenario(plan):
    bottleneck = [link for link in plan["links"] if link["name"] == "bottleneck"]
    assert [link["direction"] for link in bottleneck] == ["forward", "reverse"]
    q = bottleneck[0]["queue"]
    # paper C, Sec. V.A: thresholds 0.6 and 0.8 of the buffer, max_p 0.1, w 0.001
    assert q["kind"] == "red"
    assert (q["min_thresh"], q["max_thresh"]) == (30.0, 40.0)
    assert (q["max_p"], q["weight"]) == (0.1, 0.001)
    resolved = json.loads(_core().resolve_scenario(json.dumps(SCENARIO)))
    red = resolved["topology"]["bottleneck"]["red"]
    assert (red["min_thresh"], red["max_thresh"]) == (q["min_thresh"], q["max_thresh"])
    assert bottleneck[0]["rate_bps"] == 10e6
    assert bottleneck[0]["delay_ns"] == 20_000_000
    assert bottleneck[0]["buffer_pkts"] == 50


def test_outage_intervals_are_the_engines_and_shared_by_both_directions(plan):
    access = [link for link in plan["links"] if link["name"] == "access[0]"]
    assert len(access) == 2
    fwd, rev = access
    assert fwd["outages"] == rev["outages"]
    s = 10**9
    # every 4 s for 1 s; the first outage after the end is kept too (a
    # packet still on the link when it begins is lost before the end)
    assert fwd["outages"] == [[4 * s, 5 * s], [8 * s, 9 * s], [12 * s, 13 * s],
                              [16 * s, 17 * s], [20 * s, 21 * s]]
    assert _core().link_outages(json.dumps(SCENARIO), fwd["id"]) == [
        tuple(o) for o in fwd["outages"][:-1]
    ]
    assert plan["links"][0]["outages"] == []  # the bottleneck has none


def test_routes_sizes_window_and_reference(plan):
    names = {link["id"]: link["name"] for link in plan["links"]}
    for f in plan["flows"]:
        fwd, rev = f["route"]["forward"], f["route"]["reverse"]
        assert [names[i] for i in fwd] == [
            f"access[{f['id']}]", "bottleneck", f"sink_access[{f['id']}]"
        ]
        assert [names[i] for i in rev] == list(reversed([names[i] for i in fwd]))
        assert set(fwd).isdisjoint(rev)
    leaver = next(f for f in plan["flows"] if f["group"] == "leavers")
    assert leaver["packet_size"] == 1500
    assert leaver["tcp"]["payload_bytes"] == 1500 - leaver["tcp"]["header_size"]
    udp = plan["flows"][-1]
    assert udp["kind"] == "udp" and udp["tcp"] is None
    assert udp["udp"]["mean_bps"] == 1e6
    assert plan["reference_bps"] == 10e6
    assert (plan["warmup_ns"], plan["end_ns"]) == (2 * 10**9, 20 * 10**9)


def test_bad_scenario_names_the_key_path():
    bad = json.loads(json.dumps(SCENARIO))
    bad["flows"]["joiners"]["joins"]["factor"] = 0.5
    with pytest.raises(ValueError, match=r"flows\.joiners\.joins\.factor"):
        _core().plan(json.dumps(bad))


def _toml(tmp_path) -> str:
    """SCENARIO as a TOML file (a small writer for its plain tables)."""
    def val(v):
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, str):
            return json.dumps(v)
        if isinstance(v, dict):
            return "{ " + ", ".join(f"{k} = {val(x)}" for k, x in v.items()) + " }"
        return repr(v)

    lines = [f"{k} = {val(v)}" for k, v in SCENARIO.items() if not isinstance(v, dict)]
    for section in ("topology", "flows"):
        for name, table in SCENARIO[section].items():
            lines.append(f"[{section}.{name}]")
            lines += [f"{k} = {val(v)}" for k, v in table.items()]
    path = tmp_path / "s.toml"
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def test_plan_command_prints_the_engines_plan(tmp_path, capsys):
    from tcplab.cli import main

    path = _toml(tmp_path)
    assert main(["plan", path, "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed == json.loads(_core().plan(json.dumps(SCENARIO)))
    assert main(["plan", path, "--flows", "3"]) == 0
    text = capsys.readouterr().out
    # the summary states the instants the engines run, and RED's derived thresholds
    for f in printed["flows"][:3]:
        assert f"{f['start_ns'] / 1e9:.9g} s → {f['stop_ns'] / 1e9:.9g} s" in text
    assert "… 8 more" in text
    red = printed["links"][0]["queue"]
    assert f"RED min {red['min_thresh']:g} max {red['max_thresh']:g}" in text
    assert "access[0…10] ×11" in text and "4 outages" in text


def test_plan_command_refuses_bad_input_by_key(tmp_path, capsys):
    from tcplab.cli import main

    path = _toml(tmp_path)
    assert main(["plan", path, "--set", "topology.bottleneck.rate=0Mbps"]) == 2
    assert "topology.bottleneck.rate" in capsys.readouterr().err
    assert main(["plan", path, "--flows", "-1"]) == 2
    assert "--flows" in capsys.readouterr().err
