"""`tcplab lab` without a browser: the TOML it writes, the controls it generates from
the engine's schema, the instant answers and their "why", a run in a worker against
`tcplab.run`, the notebook it writes, and Ctrl-C stopping the server and every worker.
(The page itself: tests/test_lab_browser.py; hostile requests: tests/test_lab_hostile.py.)"""

from __future__ import annotations

import json
import time
import tomllib

import pytest

import tcplab
from tcplab.cli import main
from tcplab.lab import knobs, tomlout, worker
from tcplab.lab.local import LabProcess
from tcplab.resources import scenario_files
from tcplab.scenario import load_scenario, load_toml

C = "scenarios/c-parallel-sack.toml"
SHORT = {"duration": "60s", "warmup": "5s"}


class _Sink:
    def __init__(self):
        self.messages = []

    def send(self, msg):
        self.messages.append(msg)


def test_toml_written_reads_back_as_every_example():
    for path in scenario_files():
        doc = load_toml(path)
        assert tomllib.loads(tomlout.dumps(doc)) == doc, path.name


def test_choices_come_from_the_engine_schema():
    ch = knobs.engine_choices()
    assert ch["variant"] == ["tahoe", "reno", "newreno", "sack"]
    assert {"reno", "cubic", "bbr"} <= set(ch["cc"])
    assert {"droptail", "red", "threshold"} <= set(ch["queue"])
    assert "ns2-2.35" in ch["profile"] and "sine" in ch["shape"]


def test_controls_show_the_scenario_values_and_engine_defaults():
    ctl = {c["key"]: c for c in knobs.controls(load_scenario(C))}
    assert ctl["topology.bottleneck.buffer"]["value"] == 20
    assert ctl["topology.bottleneck.rate"]["value"] == pytest.approx(10.0)  # Mb/s
    assert ctl["topology.bottleneck.delay"]["value"] == pytest.approx(50.0)  # ms
    assert ctl["flows.sack.count"]["value"] == 10
    assert ctl["flows.sack.beta"]["value"] == 0.5  # the engine's default, not written in the file
    # each control names the scenario reference's default
    assert ctl["flows.sack.beta"]["default"] == 0.5 and ctl["topology.bottleneck.queue"]["default"] == "droptail"
    assert ctl["topology.bottleneck.rate"]["default"] == "required"
    a = {c["key"]: c for c in knobs.controls(load_scenario("scenarios/a-sine-background.toml"))}
    assert a["flows.background.rate.shape"]["value"] == "sine"
    assert a["flows.background.rate.frequency"]["value"] == pytest.approx(0.4)


def test_udp_shape_and_loss_model_rewrites():
    doc = load_toml("scenarios/a-constant-udp.toml")
    sine = knobs.set_value(doc, "flows.background.rate.shape", "sine")
    assert sine["flows"]["background"]["rate"]["shape"] == "sine"
    load_scenario(sine)  # the engine takes it
    back = knobs.set_value(sine, "flows.background.rate.shape", "constant")
    assert back["flows"]["background"]["rate"] == doc["flows"]["background"]["rate"]
    lossy = knobs.set_value(doc, "topology.bottleneck.errors.model", "bernoulli")
    lossy = knobs.set_value(lossy, "topology.bottleneck.errors.per", 0.01)
    assert load_scenario(lossy)["topology"]["bottleneck"]["errors"]["per"] == 0.01
    assert "errors" not in knobs.set_value(lossy, "topology.bottleneck.errors.model", "none")["topology"]["bottleneck"]


def test_analyze_answers_with_the_papers_numbers():
    ans = worker.analyze({"toml": open(C).read(), "set": {"topology.bottleneck.buffer": 30}})
    f = ans["quick"]["facts"]
    assert f["mu_pps"] == pytest.approx(1250.0) and f["tau_s"] == pytest.approx(0.12)
    assert f["bdp_pkts"] == pytest.approx(150.0) and f["buffer_pkts"] == 30
    rows = {r["engine"]: r for r in ans["quick"]["rows"]}
    assert rows["closed form aimd-one"]["utilization"] == pytest.approx(1 - 1 / (1 + 3 * 10))  # Theorem 1
    # ALL with a buffer: the windows' sum ramps from β(μτ+B) to μτ+B, busy while ≥ μτ:
    # k = 180/150, busy from s = 1/k on; mean = f·k(β + 1/k)/2 + (1 − f), f = (1/k − β)/(1 − β)
    k, beta = 180 / 150, 0.5
    frac = (1 / k - beta) / (1 - beta)
    expect = frac * k * (beta + 1 / k) / 2 + (1 - frac)
    assert rows["closed form aimd-all with buffer"]["utilization"] == pytest.approx(expect)
    # the hybrid model's sample path under ALL gives the same (it is that ramp, exactly)
    assert rows["fluid ALL (synchronized)"]["utilization"] == pytest.approx(expect, abs=1e-6)
    assert "buffer = 30" in ans["toml"] and "30 packets is 0.20 × the bandwidth-delay product" in ans["quick"]["why"][0]["text"]


def test_paper_d_overlay_is_w_max():
    ans = worker.analyze({"toml": open("scenarios/d-tahoe-satellite.toml").read()})
    f = ans["quick"]["facts"]
    lines = {o["label"].split(" =")[0]: o["y"] for o in ans["quick"]["overlay"]}
    assert lines["W_max"] == pytest.approx(f["buffer_pkts"] + f["bdp_pkts"] + 1)
    assert lines["W_th"] == pytest.approx(lines["W_max"] / 2)


def test_engine_error_names_the_key():
    out = worker._answer(worker.analyze, {"toml": open(C).read(), "set": {"flows.sack.beta": 2}})
    assert out["type"] == "error" and out["key"] == "flows.sack.beta" and "must be in (0, 1)" in out["message"]


def test_a_lab_run_is_tcplab_run(tmp_path):
    doc = knobs.set_value(knobs.set_value(load_toml(C), "duration", "30s"), "warmup", "5s")
    sink = _Sink()
    out = worker.run_job({"doc": doc, "engine": "packet", "folder": str(tmp_path)}, sink)
    ref = tcplab.run(doc)
    for k in ("tcp_goodput_bps", "bottleneck_utilization", "bottleneck_drops", "tcp_timeouts", "jain_index"):
        assert out["metrics"][k] == pytest.approx(ref.metrics[k]), k
    assert sink.messages[-1] == {"type": "progress", "done_s": 30.0, "total_s": 30.0}
    assert set(out["files"]) >= {"scenario.toml", "flows.parquet", "trace-tcp.parquet"}
    assert not (tmp_path / "spill").exists()  # the raw trace files are gone
    assert len(out["plots"]["cwnd"]["flows"]) == 10 and out["plots"]["queue"]["buffer"] == 20
    assert any(w["source"].startswith("packet engine: bottleneck_utilization") for w in out["why"])


def test_downsample_keeps_the_peaks():
    import numpy as np

    t = np.linspace(0, 100, 100_000)
    y = np.sin(t) * 10
    tt, yy = worker.downsample(t, y, 1000)
    assert len(tt) <= 1000 and yy.max() == pytest.approx(10, abs=1e-3) and yy.min() == pytest.approx(-10, abs=1e-3)


def test_notebook_reproduces_the_lab_numbers(tmp_path):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    from tcplab.lab.notebook import notebook_json

    ans = worker.analyze({"toml": open(C).read(), "set": SHORT})
    nb = nbformat.reads(notebook_json(ans["toml"], ans["name"]), as_version=4)
    nbclient.NotebookClient(nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    out = worker.run_job({"doc": ans["doc"], "engine": "packet", "folder": str(tmp_path)}, _Sink())
    text = "".join(o.get("data", {}).get("text/plain", "") for o in nb.cells[3].outputs)
    assert f"{out['metrics']['tcp_goodput_bps']!r}"[:10] in text


def test_unknown_example_is_a_user_error(capsys):
    assert main(["lab", "no-such-scenario", "--no-browser"]) == 2
    assert "no such file, nor one of the example scenarios" in capsys.readouterr().err


def test_the_scenario_argument_names_the_page_to_open(tmp_path):
    import base64

    from tcplab.commands.lab import _fragment

    assert _fragment("d-tahoe-satellite") == "#scenario=d-tahoe-satellite"
    assert _fragment("scenarios/d-tahoe-satellite.toml") == "#scenario=d-tahoe-satellite"
    mine = tmp_path / "mine.toml"
    mine.write_text(open(C).read().replace("count = 10", "count = 3"))
    frag = _fragment(str(mine))
    assert frag.startswith("#toml=")
    text = base64.urlsafe_b64decode(frag[6:] + "=" * (-len(frag[6:]) % 4)).decode()
    assert "count = 3" in text


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_ctrl_c_stops_the_server_and_every_worker():
    lab = LabProcess("d-tahoe-satellite").start()
    try:
        assert lab.url.endswith("#scenario=d-tahoe-satellite")
        # a long run going (the 100-flow case), so that a run worker is busy when Ctrl-C comes
        text = open(C).read()
        status, job, _ = lab.post("/api/run", {"toml": text, "set": {"duration": "3000s", "warmup": "5s",
                                                                     "flows.sack.count": 100,
                                                                     "topology.bottleneck.rate": "100Mbps"}})
        assert status == 200, job
        for ev in lab.events(job["job"]):
            if ev["event"] == "progress":
                break
        children = lab.children()
        assert len(children) >= 2  # the quick worker, the run, a spare
        folder = lab.folder
        assert folder and folder.is_dir()
    finally:
        code = lab.stop()
    assert code == 130  # Ctrl-C's conventional status (cli.main: interrupted)
    deadline = time.monotonic() + 10
    while any(_alive(p) for p in children) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not [p for p in children if _alive(p)], "workers left behind"
    assert not folder.exists(), "the lab's folder was left behind"


@pytest.mark.skipif(not __import__("shutil").which("ns"), reason="ns-2 is not installed (apt-get install ns2)")
def test_ns2_answers_in_the_lab_with_its_progress(tmp_path):
    doc = knobs.set_value(knobs.set_value(load_toml(C), "duration", "20s"), "warmup", "5s")
    sink = _Sink()
    out = worker.run_job({"doc": doc, "engine": "ns2", "folder": str(tmp_path)}, sink)
    assert out["engine"] == "ns2"
    assert [m for m in sink.messages if m["type"] == "progress"], "no progress from ns-2"
    assert 0 < out["metrics"]["tcp_goodput_bps"] <= 10e6
    assert out["plots"]["queue"]["buffer"] == 20


def test_cancelling_a_linux_run_leaves_no_namespace():
    from tcplab.backends import linux

    why_not = linux.available()
    if why_not:
        pytest.skip(f"linux engine unavailable: {why_not}")

    def namespaces():
        out = __import__("subprocess").run(["ip", "netns", "list"], capture_output=True, text=True).stdout
        return {line.split()[0] for line in out.splitlines() if line.startswith("tl-")}

    before = namespaces()
    with LabProcess() as lab:
        status, job, _ = lab.post("/api/run", {"toml": open("scenarios/linux-reno.toml").read(),
                                               "set": {"duration": "60s", "warmup": "1s"}, "engine": "linux"})
        assert status == 200, job
        for ev in lab.events(job["job"]):
            if ev["event"] == "progress" and ev["done_s"] > 0.5:
                assert namespaces() - before, "the run made no namespace"
                break
        lab.post(f"/api/jobs/{job['job']}/cancel", {})
        deadline = time.monotonic() + 20
        while namespaces() - before and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not namespaces() - before, "a cancelled linux run left its namespaces"


@pytest.mark.parametrize("name, sets", [("c-parallel-sack", SHORT), ("d-tahoe-satellite", {"duration": "300s"})])
def test_the_why_numbers_are_the_metrics_modules(tmp_path, name, sets):
    from tcplab.metrics import summarize

    doc = load_toml(f"scenarios/{name}.toml")
    for k, v in sets.items():
        doc = knobs.set_value(doc, k, v)
    out = worker.run_job({"doc": doc, "engine": "packet", "folder": str(tmp_path)}, _Sink())
    ref = summarize(tcplab.run(doc, trace=["cwnd", "queue", "seq", "drops"]))
    sync = dict(ref["synchronization"])
    sync.pop("window_drop_correlation", None)
    assert out["summary"]["synchronization"] == pytest.approx(sync)
    assert out["summary"]["slowstart_cycles"] == ref["slowstart_cycles"]


def test_a_port_in_use_is_a_user_error(capsys):
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        assert main(["lab", "--no-browser", "--port", str(port)]) == 2
    assert f"--port {port}: cannot listen on 127.0.0.1:{port}" in capsys.readouterr().err


@pytest.mark.parametrize("path", scenario_files(), ids=lambda p: p.stem)
def test_every_example_answers_in_the_lab(tmp_path, path):
    """Each example scenario, as the page opens it: instant answers, then the packet engine's
    run with its plots and why (at its own duration: a few tenths of a second each)."""
    ans = worker.analyze({"toml": path.read_text(), "example": path.stem})
    assert ans["controls"] and ans["quick"]["why"]
    out = worker._answer(lambda r: worker.run_job(r, _Sink()),
                         {"doc": ans["doc"], "engine": "packet", "folder": str(tmp_path)})
    assert out["type"] == "result", out
    assert out["metrics"]["measured_s"] > 0
    assert {"cwnd", "queue", "goodput"} <= set(out["plots"])
    # what the page gets is strict JSON (a NaN would stop the browser's JSON.parse)
    assert json.loads(json.dumps(out, allow_nan=False)) == out
