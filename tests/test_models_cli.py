"""`tcplab predict`: the interface scripts rely on (issue 3), and user errors."""

import json
from pathlib import Path

import pytest

from tcplab.cli import main

ROOT = Path(__file__).resolve().parents[1]


def run(capsys, *argv):
    code = main(["predict", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_json_scalar_has_inputs_and_a_number(capsys):
    code, out, _ = run(capsys, "aimd-one", "--n", "3", "--beta", "0.5", "--json")
    doc = json.loads(out)
    assert code == 0
    assert doc["inputs"] == {"n": 3, "beta": 0.5}
    assert doc["value"] == pytest.approx(0.9)


def test_json_range_gives_a_list_aligned_with_the_inputs(capsys):
    code, out, _ = run(capsys, "aimd-one", "--n", "1..15", "--json")
    doc = json.loads(out)
    assert doc["inputs"]["n"] == list(range(1, 16))
    assert len(doc["value"]) == 15
    assert doc["value"][0] == pytest.approx(0.75)


def test_table_for_a_range(capsys):
    code, out, _ = run(capsys, "aimd-one", "--n", "1..3")
    assert code == 0 and "0.75" in out and "0.9" in out and "Theorem 1" in out


@pytest.mark.parametrize(
    "argv,value",
    [
        (["aimd-all", "--beta", "0.5"], 0.75),
        (["multtcp", "--n", "2"], 1 - 1 / 8),
        (["gaimd-alpha", "--beta", "0.25"], 1.25),
        (["slowstart-cycle", "--buffer", "20", "--mu", "366", "--tau", "0.56"], 3),
        (["slowstart-cycle", "--buffer", "19"], 2),
        (["aimd-second-moment", "--policy", "largest-rate"], 4 / 21),
        (["mathis", "--p", "0.01", "--rtt", "0.1"], 10 * (150**0.5)),
    ],
)
def test_named_models_answer(capsys, argv, value):
    code, out, _ = run(capsys, *argv, "--json")
    assert code == 0
    assert json.loads(out)["value"] == pytest.approx(value)


def test_gaimd_and_pftk_agree_for_standard_tcp(capsys):
    args = ["--p", "0.02", "--rtt", "0.2", "--t0", "1", "--b", "1"]
    _, out, _ = run(capsys, "gaimd", *args, "--alpha", "1", "--beta", "0.5", "--json")
    g = json.loads(out)["value"]
    _, out, _ = run(capsys, "pftk", *args, "--form", "approx", "--json")
    assert json.loads(out)["value"] == pytest.approx(g, rel=1e-12)


def test_grid_of_two_ranges(capsys):
    _, out, _ = run(capsys, "mathis", "--p", "0.01,0.04", "--rtt", "0.1,0.2", "--json")
    doc = json.loads(out)
    assert doc["inputs"]["p"] == [0.01, 0.01, 0.04, 0.04]
    assert doc["inputs"]["rtt"] == [0.1, 0.2, 0.1, 0.2]
    assert doc["value"][0] == pytest.approx(2 * doc["value"][1])
    assert doc["value"][0] == pytest.approx(2 * doc["value"][2])


def test_list_names_every_model(capsys):
    code, out, _ = run(capsys, "--list", "--json")
    names = {m["model"] for m in json.loads(out)}
    assert {"aimd-one", "aimd-all", "multtcp", "gaimd-alpha", "gaimd", "pftk", "mathis", "slowstart-cycle"} <= names


@pytest.mark.parametrize(
    "argv,message",
    [
        (["aimd-one", "--n", "0"], "n"),
        (["aimd-one", "--n", "2", "--beta", "1"], "beta"),
        (["gaimd", "--p", "-0.1", "--rtt", "0.1"], "p"),
        (["aimd-one"], "--n is required"),
        (["aimd-one", "--n", "1..x"], "range"),
        (["aimd-one", "--n", "2.5"], "whole number"),
        (["aimd-largest-rate", "--n", "1..3"], "single values"),
        (["pftk", "--p", "0.01", "--rtt", "0.1", "--beta", "0.7"], "gaimd"),
    ],
)
def test_user_errors_exit_2_with_a_message(capsys, argv, message):
    code, out, err = run(capsys, *argv)
    assert code == 2
    assert message in err and "Traceback" not in err


SCENARIO_D = """
name = "paper D, B = 20"
duration = "600s"
[topology.bottleneck]
rate = "1.5Mbps"
delay = "270ms"
buffer = 20
[topology.access]
rate = "10Mbps"
delay = "5ms"
buffer = 1000
[topology.sink_access]
rate = "10Mbps"
delay = "5ms"
buffer = 1000
[flows.tcp]
kind = "tcp"
variant = "tahoe"
packet_size = 512
"""


def test_scenario_applies_paper_d_and_says_why_others_do_not(tmp_path, capsys):
    path = tmp_path / "d.toml"
    path.write_text(SCENARIO_D)
    code, out, _ = run(capsys, "scenario", str(path), "--json")
    rows = {r["model"]: r for r in json.loads(out)["predictions"]}
    assert code == 0
    # mu = 1.5e6 / (8 * 512) = 366.2 pkt/s, tau = 2 (5 + 270 + 5) ms = 0.56 s
    assert rows["slowstart-cycle"]["applies"] and rows["slowstart-cycle"]["value"] == 3
    assert rows["slowstart-cycle"]["inputs"]["tau"] == pytest.approx(0.56)
    # Tahoe is not AIMD: paper C's model is ruled out with a reason
    assert not rows["aimd-one"]["applies"] and "Tahoe" in rows["aimd-one"]["reason"]
    assert not rows["gaimd"]["applies"] and "loss event rate" in rows["gaimd"]["reason"]
    code, out, _ = run(capsys, "scenario", str(path))
    assert code == 0 and "do not apply" in out


def test_scenario_with_reno_flows_applies_paper_c(tmp_path, capsys):
    path = tmp_path / "c.toml"
    path.write_text(SCENARIO_D.replace('variant = "tahoe"', 'variant = "reno"\ncount = 3'))
    _, out, _ = run(capsys, "scenario", str(path), "--json")
    rows = {r["model"]: r for r in json.loads(out)["predictions"]}
    assert rows["aimd-one"]["applies"] and rows["aimd-one"]["value"] == pytest.approx(0.9)
    assert rows["aimd-all"]["value"] == pytest.approx(0.75)
    assert not rows["slowstart-cycle"]["applies"] and "3 TCP flows" in rows["slowstart-cycle"]["reason"]


def test_scenario_with_udp_and_reno_rules_out_paper_c_and_d(tmp_path, capsys):
    text = SCENARIO_D.replace('variant = "tahoe"', 'variant = "reno"\ncount = 3') + (
        '[flows.udp]\nkind = "udp"\nrate = "0.5Mbps"\n'
    )
    path = tmp_path / "a.toml"
    path.write_text(text)
    _, out, _ = run(capsys, "scenario", str(path), "--json")
    rows = {r["model"]: r for r in json.loads(out)["predictions"]}
    assert not rows["aimd-one"]["applies"] and "UDP" in rows["aimd-one"]["reason"]
    assert not rows["slowstart-cycle"]["applies"]


@pytest.mark.parametrize(
    "text,message",
    [
        ("not = [toml", "not valid TOML"),
        (SCENARIO_D.replace('rate = "1.5Mbps"', 'rate = "fast"'), "topology.bottleneck.rate"),
        (SCENARIO_D.replace('kind = "tcp"', 'kind = "sctp"'), "flows.tcp.kind"),
    ],
)
def test_bad_scenarios_are_user_errors(tmp_path, capsys, text, message):
    path = tmp_path / "bad.toml"
    path.write_text(text)
    code, _, err = run(capsys, "scenario", str(path))
    assert code == 2 and message in err


def test_missing_scenario_file(capsys):
    code, _, err = run(capsys, "scenario", "/nonexistent/x.toml")
    assert code == 2 and "no such scenario file" in err


@pytest.mark.parametrize("change, path", [
    (('variant = "tahoe"', 'variant = "tahoe"\nbogus_key = 1'), "bogus_key"),
    (("buffer = 20", "buffer = 20\nqueue_size = 5"), "queue_size"),
])
def test_unknown_keys_are_refused_exactly_as_run_refuses_them(tmp_path, capsys, change, path):
    p = tmp_path / "typo.toml"
    p.write_text(SCENARIO_D.replace(*change, 1))
    code, _, err = run(capsys, "scenario", str(p))
    run_code = main(["run", str(p)])
    _, run_err = capsys.readouterr()
    assert code == run_code == 2
    assert path in err and err == run_err


def test_defaults_come_from_the_engine_profile(tmp_path, capsys):
    # no alpha/beta/packet_size given: the values the engine resolves (ns-2 2.35's
    # TCP(1, 1/2), 1000-byte packets), not defaults restated in Python
    path = tmp_path / "c.toml"
    path.write_text(SCENARIO_D.replace('variant = "tahoe"', 'variant = "reno"\ncount = 2')
                    .replace("packet_size = 512\n", ""))
    _, out, _ = run(capsys, "scenario", str(path), "--json")
    rows = {(r["model"], r["group"]): r for r in json.loads(out)["predictions"]}
    from tcplab.scenario import load_scenario

    g = load_scenario(path)["flows"]["tcp"]
    assert rows[("aimd-one", None)]["inputs"]["beta"] == g["beta"]
    assert rows[("gaimd-epoch", "tcp")]["inputs"]["alpha"] == g["alpha"]
    assert rows[("gaimd-window", "tcp")]["inputs"]["rate"] == pytest.approx(1.5e6 / (8 * g["packet_size"]))


def test_the_window_is_the_plans_capped_by_a_blocking_send_buffer():
    # paper D needs a flow that is not receiver-limited: a blocking send buffer of 8
    # packets keeps the window at 8 (the Plan's, as the engines run it), far below
    # W_max ≈ 226, whatever the advertised window (10000); a dropping buffer caps nothing
    from tcplab.models.scenario import predict_scenario, read_path
    from tcplab.scenario import load_scenario

    sc = ROOT / "scenarios" / "d-tahoe-satellite.toml"
    app = {"kind": "cbr", "rate": "1Mbps", "read": "125KB", "interval": "1s", "send_buffer": 8}
    blocked = load_scenario(sc, [(["flows", "tahoe", "app"], app)])
    assert read_path(blocked).tcp[0].window == 8
    got = {p.model: p for p in predict_scenario(blocked)}
    assert not got["slowstart-cycle"].applies and "window 8 < W_max" in got["slowstart-cycle"].reason
    dropping = load_scenario(sc, [(["flows", "tahoe", "app"], {**app, "when_full": "drop"})])
    assert read_path(dropping).tcp[0].window == 10000


def _predicted(capsys, path):
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    assert main(["predict", "scenario", str(root / "scenarios" / path), "--json"]) == 0
    return {p["model"]: p for p in json.loads(capsys.readouterr().out)["predictions"]}


def test_paper_d_on_a_two_link_path_predicts_as_on_the_dumbbell(capsys):
    # the same path, laid out as two links instead of the dumbbell's three: the
    # bottleneck is the slowest link and tau the routes' delays (it crashed before)
    two = _predicted(capsys, "d-tahoe-two-link-path.toml")
    three = _predicted(capsys, "d-tahoe-satellite.toml")
    for m in ("slowstart-cycle", "slowstart-throughput", "slowstart-ratio"):
        assert two[m]["applies"] and two[m]["inputs"]["tau"] == pytest.approx(0.56)
        assert two[m]["value"] == pytest.approx(three[m]["value"], rel=1e-12)


def test_models_of_one_shared_link_refuse_a_parking_lot_and_two_way_traffic(capsys):
    for path, group in (("parking-lot.toml", "cross1"), ("two-way.toml", "rev")):
        got = _predicted(capsys, path)
        assert not got["aimd-one"]["applies"]
        assert group in got["aimd-one"]["reason"] and "does not cross the bottleneck" in got["aimd-one"]["reason"]
        assert not any(p["applies"] for p in got.values())


# --- the models of issue 18 (CUBIC, BBR, DCTCP, buffer sizing) ------------------------------


@pytest.mark.parametrize(
    "argv,value",
    [
        # RFC 9438, Table 1: C = 0.4, RTT 0.1 s, p = 1e-5 → 1054 packets
        (["cubic-window", "--p", "1e-5", "--rtt", "0.1"], 1054),
        (["cubic", "--p", "1e-5", "--rtt", "0.1"], 10540),
        # Ware et al.: X = 4, c = 1250/s, l = 40 ms → (1 − 0.355)·(1 − 0.04)
        (["bbr-share", "--buffer_bdp", "4", "--rate", "1250", "--rtt", "0.04"], 0.645 * 0.96),
        (["dctcp-k", "--rate", "700", "--rtt", "0.1"], 10),
        (["dctcp-alpha", "--rate", "1000", "--rtt", "0.1", "--k", "100", "--n", "4"], 0.2),
        (["dctcp", "--rate", "1000", "--rtt", "0.1", "--k", "100", "--n", "4"], 104 - 4 * 5),
        (["buffer-bdp", "--rate", "1250", "--rtt", "0.1"], 125),
        (["buffer-sqrt-n", "--rate", "1250", "--rtt", "0.1", "--n", "25"], 25),
    ],
)
def test_issue18_models_answer(capsys, argv, value):
    code, out, _ = run(capsys, *argv, "--json")
    assert code == 0
    assert json.loads(out)["value"] == pytest.approx(value, rel=5e-4)


def test_cubic_explains_its_region(capsys):
    code, out, _ = run(capsys, "cubic-window", "--p", "1e-3,1e-5", "--rtt", "0.1")
    assert code == 0 and "reno-friendly region" in out and "cubic region" in out


@pytest.mark.parametrize(
    "argv,message",
    [
        (["cubic", "--p", "1.5", "--rtt", "0.1"], "p (loss rate per packet) must be in the open interval (0, 1)"),
        (["cubic", "--p", "0.01"], "--rtt is required"),
        (["cubic-window", "--p", "0.01", "--rtt", "0.1", "--beta", "1"], "beta"),
        (["bbr-share", "--buffer_bdp", "0", "--rate", "1250", "--rtt", "0.04"], "buffer_bdp"),
        (["bbr-share", "--buffer_bdp", "4", "--rate", "1250", "--rtt", "0.04", "--n_bbr", "2.5"],
         "--n_bbr: expected a whole number"),
        (["bbr-share", "--buffer_bdp", "200", "--rate", "1250", "--rtt", "0.05"], "probe-rtt would take"),
        (["dctcp", "--rate", "1000", "--rtt", "0.1", "--k", "-1"], "k (marking threshold"),
        (["dctcp", "--rate", "10", "--rtt", "0.1", "--k", "0"], "W* = (C·RTT + K)/N (rate, rtt, k, n)"),
        (["buffer-sqrt-n", "--rate", "1250", "--rtt", "0.1", "--n", "0"], "n (number of long-lived flows"),
    ],
)
def test_issue18_models_refuse_bad_input(capsys, argv, message):
    code, _, err = run(capsys, *argv)
    assert code == 2
    assert message in err and "Traceback" not in err


SCENARIO_BBR_CUBIC = """
duration = "60s"
[topology]
bottleneck  = { rate = "10Mbps", delay = "18ms", buffer = 200 }
access      = { rate = "1Gbps", delay = "1ms", buffer = 5000 }
sink_access = { rate = "1Gbps", delay = "1ms", buffer = 5000 }
[flows.bbr]
kind = "tcp"
cc = "bbr"
profile = "linux"
[flows.cubic]
kind = "tcp"
cc = "cubic"
profile = "linux"
count = 2
"""


def test_scenario_with_bbr_and_cubic_applies_the_bbr_model_and_buffer_rules(tmp_path, capsys):
    path = tmp_path / "bbr.toml"
    path.write_text(SCENARIO_BBR_CUBIC)
    code, out, _ = run(capsys, "scenario", str(path), "--json")
    assert code == 0
    rows = {}
    for r in json.loads(out)["predictions"]:
        rows.setdefault(r["model"], []).append(r)
    # c = 10e6/(8·1000) = 1250/s, RTT 2·(1 + 18 + 1) ms = 40 ms: BDP 50, buffer 200 = 4 BDP
    (share,) = rows["bbr-share"]
    assert share["applies"] and share["inputs"]["buffer_bdp"] == pytest.approx(4)
    assert share["value"] == pytest.approx((1 - (0.5 - 1 / 8 - 4 / 200)) * (1 - 0.4 / 10))
    assert rows["buffer-bdp"][0]["value"] == pytest.approx(50)
    assert rows["buffer-sqrt-n"][0]["value"] == pytest.approx(50 / 3**0.5)
    # neither BBR nor CUBIC is AIMD: paper C's and paper B's models are ruled out
    assert not rows["aimd-one"][0]["applies"] and "other than reno" in rows["aimd-one"][0]["reason"]
    assert all(not r["applies"] for r in rows["gaimd-alpha"])
    assert not rows["dctcp"][0]["applies"] and "no DCTCP flows" in rows["dctcp"][0]["reason"]


def test_scenario_with_dctcp_over_an_ecn_step_applies_the_dctcp_models(capsys):
    # scenarios/dctcp.toml: 2 DCTCP flows, 100 Mb/s of 1500-byte packets (C = 8333.3/s),
    # RTT 2·(0.5 + 4 + 0.5) ms = 10 ms, RED marking (ecn) at a step K = 20
    code, out, _ = run(capsys, "scenario", str(ROOT / "scenarios" / "dctcp.toml"), "--json")
    assert code == 0
    rows = {r["model"]: r for r in json.loads(out)["predictions"]}
    c, rtt, k, n = 1e8 / 12000, 0.01, 20, 2
    for m in ("dctcp", "dctcp-alpha", "dctcp-k"):
        assert rows[m]["applies"], rows[m]
    assert rows["dctcp"]["inputs"] == pytest.approx({"rate": c, "rtt": rtt, "k": k, "n": n})
    w = (c * rtt + k) / n
    assert rows["dctcp-alpha"]["value"] == pytest.approx((2 / w) ** 0.5)
    assert rows["dctcp"]["value"] == pytest.approx(k + n - n * (w / 2) ** 0.5)
    assert rows["dctcp-k"]["value"] == pytest.approx(c * rtt / 7)


def test_scenario_with_dctcp_but_a_red_ramp_says_the_model_needs_a_step(tmp_path, capsys):
    text = (ROOT / "scenarios" / "dctcp.toml").read_text().replace("max_thresh = 20", "max_thresh = 60")
    path = tmp_path / "ramp.toml"
    path.write_text(text)
    _, out, _ = run(capsys, "scenario", str(path), "--json")
    rows = {r["model"]: r for r in json.loads(out)["predictions"]}
    assert not rows["dctcp"]["applies"] and "step at K" in rows["dctcp"]["reason"]
    path.write_text(text.replace("ecn = true", "ecn = false"))
    _, out, _ = run(capsys, "scenario", str(path), "--json")
    rows = {r["model"]: r for r in json.loads(out)["predictions"]}
    assert not rows["dctcp-k"]["applies"] and "does not ECN-mark" in rows["dctcp-k"]["reason"]


def test_scenario_bbr_model_needs_loss_based_competitors(tmp_path, capsys):
    path = tmp_path / "bbr-alone.toml"
    path.write_text(SCENARIO_BBR_CUBIC.replace('cc = "cubic"', 'cc = "bbr"'))
    _, out, _ = run(capsys, "scenario", str(path), "--json")
    rows = {r["model"]: r for r in json.loads(out)["predictions"]}
    assert not rows["bbr-share"]["applies"] and "no loss-based flows" in rows["bbr-share"]["reason"]
