"""`tcplab compare`: one scenario, several engines, one table and one figure."""

from __future__ import annotations

import json
import shutil

import pytest

from tcplab.cli import main

SCENARIO = """
name = "cmp"
duration = "20s"
warmup = "5s"
[topology]
bottleneck = { rate = "1Mbps", delay = "20ms", buffer = 40 }
access = { rate = "100Mbps", delay = "0ms", buffer = 1000 }
sink_access = { rate = "100Mbps", delay = "0ms", buffer = 1000 }
[flows.tcp]
kind = "tcp"
variant = "reno"
"""


def test_compare_writes_a_table_a_figure_and_each_run(tmp_path, capsys):
    sc = tmp_path / "cmp.toml"
    sc.write_text(SCENARIO)
    engines = ["packet"] + (["ns2"] if shutil.which("ns") else [])
    out = tmp_path / "out"
    assert main(["compare", str(sc), "--engines", ",".join(engines), "--out", str(out), "--json"]) == 0
    tab = json.loads(capsys.readouterr().out)
    assert set(tab["normalized_throughput"]) == set(engines)
    # One Reno flow over a 40-packet buffer keeps the link busy on every simulator.
    assert all(v > 0.99 for v in tab["bottleneck_utilization"].values())
    assert (out / "cwnd.png").stat().st_size > 0
    for e in engines:
        assert (out / e / "summary.json").is_file()
    saved = json.loads((out / "compare.json").read_text())
    assert saved["metrics"] == json.loads(json.dumps(tab))
    meta = saved["meta"]
    assert meta["build_id"] and meta["tcplab_version"] and "compare" in meta["command"]
    assert set(meta["engine_versions"]) == set(engines) and all(meta["engine_versions"].values())


def test_compare_refuses_an_unknown_engine(tmp_path, capsys):
    sc = tmp_path / "cmp.toml"
    sc.write_text(SCENARIO)
    assert main(["compare", str(sc), "--engines", "packet,htsim"]) == 2
    assert "htsim" in capsys.readouterr().err


@pytest.mark.skipif(not shutil.which("ns"), reason="ns-2 not installed")
def test_the_ns2_export_passes_over_the_linux_table(tmp_path):
    from tcplab.backends.ns2 import export_tcl
    from tcplab.scenario import load_scenario

    sc = tmp_path / "cmp.toml"
    sc.write_text(SCENARIO)
    # kernel options of the linux engine have no ns-2 meaning: accepted, not exported
    assert "Agent/TCP/Reno" in export_tcl(load_scenario(sc))


def test_compare_without_out_writes_its_figure_into_the_directory_it_prints(tmp_path, capsys, monkeypatch):
    sc = tmp_path / "cmp.toml"
    sc.write_text(SCENARIO)
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    assert main(["compare", str(sc), "--engines", "packet"]) == 0
    err = capsys.readouterr().err
    (made,) = list(work.iterdir())
    assert made.name.startswith("compare-cmp-") and made.name in err
    assert (made / "cwnd.png").stat().st_size > 0 and (made / "packet" / "summary.json").is_file()
    # a second compare never reuses (or overwrites) the first one's directory
    assert main(["compare", str(sc), "--engines", "packet"]) == 0
    assert len(list(work.iterdir())) == 2


def test_overlaid_engines_differ_in_colour_style_and_marker(tmp_path):
    from tcplab.commands.compare import cwnd_figure
    from tcplab.plots import ENGINE_STYLE

    import tcplab

    sc = tmp_path / "cmp.toml"
    sc.write_text(SCENARIO)
    r = tcplab.run(sc, trace=["cwnd"])
    fig = cwnd_figure({"packet": r, "ns2": r, "linux": r})  # identical traces: all three must show
    lines = fig.axes[0].get_lines()
    assert len(lines) == 3
    looks = {(ln.get_color(), ln.get_linestyle(), ln.get_marker(), ln.get_linewidth()) for ln in lines}
    assert len(looks) == 3
    assert {ln.get_linestyle() for ln in lines} == {"-", "--", ":"}
    assert [ln.get_color() for ln in lines] == [ENGINE_STYLE[e]["color"] for e in ("packet", "ns2", "linux")]
