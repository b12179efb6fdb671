"""`tcplab reproduce`: the claims.json interface scripts rely on (issue 8), the HTML
it writes, the cache, and user errors. Runs use the test-only `--tiny` mode
(three buffers, short runs, few fluid events), so they take seconds."""

import html
import json

import numpy as np
import pandas as pd
import pytest

from tcplab.cli import main
from tcplab.reproduce import PAPERS, VERDICTS, load_paper
from tcplab.reproduce import alpha_beta as ab

REQUIRED = {"id", "verdict", "measured", "paper", "note"}


def run(capsys, *argv):
    code = main(["reproduce", *argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def tiny_d3(tmp_path_factory):
    out = tmp_path_factory.mktemp("rep")
    assert main(["reproduce", "triple-slowstart", "--claims", "D3", "--tiny", "--out", str(out)]) == 0
    return out


def test_claims_json_has_the_interface_fields(tiny_d3):
    meta = json.loads((tiny_d3 / "triple-slowstart" / "meta.json").read_text())
    assert meta["build_id"] and meta["engine"] == "packet" and meta["paper"] == "triple-slowstart"
    assert meta["profile"] == "ns2-2.35" and meta["claims_run"] and "reproduce" in meta["command"]
    rows = json.loads((tiny_d3 / "triple-slowstart" / "claims.json").read_text())
    assert [r["id"] for r in rows] == ["D3"]
    for r in rows:
        assert REQUIRED <= set(r)
        assert r["verdict"] in VERDICTS
        assert isinstance(r["measured"], str) and r["measured"]


def test_d3_counts_slow_starts_for_the_papers_three_buffers(tiny_d3):
    (row,) = json.loads((tiny_d3 / "triple-slowstart" / "claims.json").read_text())
    found = row["values"]["found"]
    assert set(found) == {"19", "20", "22"}
    # Tahoe on this path: a congestion cycle has at least two slow starts (paper D, Sec. 3)
    assert all(v >= 2 for v in found.values())


def test_report_html_figures_and_index_are_written(tiny_d3):
    paper = tiny_d3 / "triple-slowstart"
    html = (paper / "index.html").read_text()
    assert "D3" in html and "Setup" in html and "Summary" in html
    assert (paper / "d3-cwnd-19-20-22.png").stat().st_size > 0
    assert (paper / "d3-cwnd-19-20-22.svg").stat().st_size > 0
    assert list((paper / "data").glob("D3-*.parquet"))
    index = (tiny_d3 / "index.html").read_text()
    assert "triple-slowstart/index.html" in index and "not run" in index


def test_second_run_is_served_from_the_cache(tiny_d3):
    from tcplab.cache import cache_dir

    runs = list((cache_dir() / "reproduce" / "runs").iterdir())
    assert runs
    stamps = {p: (p / "run.json").stat().st_mtime_ns for p in runs}
    assert main(["reproduce", "triple-slowstart", "--claims", "D3", "--tiny", "--out", str(tiny_d3)]) == 0
    assert {p: (p / "run.json").stat().st_mtime_ns for p in runs} == stamps
    assert set((cache_dir() / "reproduce" / "runs").iterdir()) == set(runs)


def test_the_cache_is_outside_the_report_and_shared_by_report_directories(tiny_d3, tmp_path):
    from tcplab.cache import cache_dir

    assert not (tiny_d3 / "triple-slowstart" / "cache").exists()
    assert not any(p.name == "cache" for p in tiny_d3.rglob("*"))
    runs = set((cache_dir() / "reproduce" / "runs").iterdir())
    other = tmp_path / "elsewhere"
    assert main(["reproduce", "triple-slowstart", "--claims", "D3", "--tiny", "--out", str(other)]) == 0
    assert set((cache_dir() / "reproduce" / "runs").iterdir()) == runs  # nothing computed again
    assert (other / "triple-slowstart" / "d3-cwnd-19-20-22.png").is_file()


def test_cache_dir_option_env_and_xdg(monkeypatch, tmp_path):
    from tcplab.cache import ENV, cache_dir

    monkeypatch.delenv(ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_dir() == tmp_path / "xdg" / "tcplab"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache_dir() == tmp_path / "home" / ".cache" / "tcplab"
    monkeypatch.setenv(ENV, str(tmp_path / "env"))
    assert cache_dir() == tmp_path / "env"
    assert cache_dir(tmp_path / "opt") == tmp_path / "opt"


def test_cache_option_of_the_cli_is_used(tmp_path):
    cache = tmp_path / "c"
    assert main(["reproduce", "triple-slowstart", "--claims", "D3", "--tiny", "--out", str(tmp_path / "r"),
                 "--cache", str(cache)]) == 0
    assert list((cache / "reproduce" / "runs").iterdir())


def test_model_claims_of_paper_c(tmp_path, capsys):
    code, out, _ = run(capsys, "parallel-aimd", "--claims", "C1,C4,C7", "--tiny", "--out", str(tmp_path))
    assert code == 0
    rows = {r["id"]: r for r in json.loads((tmp_path / "parallel-aimd" / "claims.json").read_text())}
    assert set(rows) == {"C1", "C4", "C7"}
    assert rows["C1"]["verdict"] == "reproduced"  # Theorem 1 is exact in the hybrid model
    # Theorem 2: beatdown's exact second moment is 28/111, not the paper's 1/3
    assert rows["C4"]["verdict"] == "partly"
    assert rows["C4"]["values"]["moments"]["beatdown"] == pytest.approx(28 / 111, abs=2e-3)
    # RED runs now (issue 5): a measured error against Theorem 1, not "not run"
    assert rows["C7"]["measured"] != "not run"
    assert 0 <= rows["C7"]["values"]["median_abs_rel_error"] < 0.5


def test_threshold_dropper_claim_runs_packet_simulations(tmp_path, capsys):
    code, _, _ = run(capsys, "parallel-aimd", "--claims", "C8", "--tiny", "--out", str(tmp_path))
    assert code == 0
    (row,) = json.loads((tmp_path / "parallel-aimd" / "claims.json").read_text())
    assert row["measured"] != "not run"
    v = row["values"]
    # the dropper makes (almost) every drop and keeps windows unsynchronized
    assert v["share_of_drops_by_dropper"] > 0.9
    assert v["window_drop_correlation"] < 0.2


def test_a_claim_ns2_cannot_run_is_not_run_on_that_engine_and_the_rest_goes_on(tmp_path, capsys):
    # ns-2 has no threshold dropper: C8 is refused before any run (the export
    # checks each point first), with the reason; C1 (a model claim) still runs.
    code, _, err = run(capsys, "parallel-aimd", "--claims", "C1,C8", "--engine", "ns2", "--tiny",
                       "--out", str(tmp_path))
    assert code == 0, err
    rows = {r["id"]: r for r in json.loads((tmp_path / "parallel-aimd" / "claims.json").read_text())}
    assert rows["C8"]["verdict"] == "not-run"
    assert rows["C8"]["measured"] == "not run on this engine"
    assert "threshold dropper" in rows["C8"]["note"] and "ns2" in rows["C8"]["note"]
    assert rows["C1"]["verdict"] in ("reproduced", "partly", "not-reproduced")
    page = (tmp_path / "parallel-aimd" / "index.html").read_text()
    assert "not run on this engine" in page


def test_profile_ns2_2001_writes_its_verdicts_beside_the_default_ones(tiny_d3, tmp_path, capsys):
    # the era run goes to <paper>/ns2-2001/ and its page puts the 2.35 verdicts beside its own
    import shutil

    out = tmp_path / "rep"
    shutil.copytree(tiny_d3, out)
    before = (out / "triple-slowstart" / "claims.json").read_text()
    code, _, err = run(capsys, "triple-slowstart", "--claims", "D3", "--tiny", "--profile", "ns2-2001",
                       "--out", str(out))
    assert code == 0, err
    assert (out / "triple-slowstart" / "claims.json").read_text() == before
    (era,) = json.loads((out / "triple-slowstart" / "ns2-2001" / "claims.json").read_text())
    assert era["id"] == "D3" and era["verdict"] in VERDICTS
    page = (out / "triple-slowstart" / "ns2-2001" / "index.html").read_text()
    assert "ns2-2.35 verdict" in page and "TCP profile <b>ns2-2001</b>" in page
    with pytest.raises(SystemExit) as exc:  # argparse refuses an unknown profile
        run(capsys, "triple-slowstart", "--profile", "ns2-1999", "--out", str(out))
    assert exc.value.code == 2


def test_unknown_claim_id_exits_2(tmp_path, capsys):
    code, _, err = run(capsys, "all", "--claims", "C99", "--out", str(tmp_path))
    assert code == 2
    assert "C99" in err
    assert not (tmp_path / "index.html").exists()


def test_unknown_paper_exits_2(tmp_path, capsys):
    code, _, err = run(capsys, "paper-z", "--out", str(tmp_path))
    assert code == 2 and "paper-z" in err


def test_a_paper_can_be_named_by_its_letter(tmp_path, capsys):
    from tcplab.reproduce import paper_slug

    assert [paper_slug(x) for x in ("A", "b", "C", "d")] == ["adaptivity", "alpha-beta", "parallel-aimd",
                                                             "triple-slowstart"]
    code, _, err = run(capsys, "E", "--out", str(tmp_path))
    assert code == 2 and "triple-slowstart (D)" in err


def test_every_claim_of_a_c_and_d_is_declared():
    ids = {c.id for slug in ("adaptivity", "parallel-aimd", "triple-slowstart") for c in load_paper(slug).claims}
    assert {f"A{i}" for i in range(1, 9)} <= ids
    assert {f"C{i}" for i in range(1, 11)} <= ids
    assert {f"D{i}" for i in range(1, 5)} <= ids
    assert {c.id for c in load_paper("alpha-beta").claims} == {f"B{i}" for i in range(1, 9)}
    assert set(PAPERS) == {"adaptivity", "alpha-beta", "parallel-aimd", "triple-slowstart"}


# --- paper B (alpha-beta) -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def tiny_b(tmp_path_factory):
    out = tmp_path_factory.mktemp("repb")
    assert main(["reproduce", "alpha-beta", "--tiny", "--out", str(out)]) == 0
    return out


def test_paper_b_claims_json_has_b1_to_b8_with_valid_verdicts(tiny_b):
    rows = json.loads((tiny_b / "alpha-beta" / "claims.json").read_text())
    assert [r["id"] for r in rows] == [f"B{i}" for i in range(1, 9)]
    for r in rows:
        assert REQUIRED <= set(r)
        assert r["verdict"] in VERDICTS
        assert r["measured"] and r["paper"]
        assert r["measured"] != "not run" and r["figures"], r["id"]
        for stem in r["figures"]:
            assert (tiny_b / "alpha-beta" / f"{stem}.png").stat().st_size > 0


def test_paper_b_b1_holds_eq3_against_the_papers_alphas(tiny_b):
    rows = {r["id"]: r for r in json.loads((tiny_b / "alpha-beta" / "claims.json").read_text())}
    alphas = rows["B1"]["values"]["eq3_alpha"]
    # the paper's four protocols: TCP(0.31, 0.875), TCP(0.583, 0.75), TCP(1, 0.5), TCP(1.25, 0.25)
    assert alphas["TCP(0.31, 0.875)"] == pytest.approx(0.3125)
    assert alphas["TCP(0.583, 0.75)"] == pytest.approx(7 / 12)
    assert alphas["TCP(1.25, 0.25)"] == pytest.approx(1.25)
    # eq. 1 without timeouts: 2(1+β)/3 of TCP's rate, not 1 (the known caveat of eq. 3)
    assert rows["B1"]["values"]["eq1_ratio_no_timeouts"]["TCP(0.31, 0.875)"] == pytest.approx(1.25, abs=0.01)
    assert list((tiny_b / "alpha-beta" / "data").glob("B2-*.parquet"))
    html = (tiny_b / "alpha-beta" / "index.html").read_text()
    assert "B8" in html and "Summary" in html


def _trace(rows):
    return pd.DataFrame(rows, columns=["t", "flow", "cwnd", "ssthresh", "ack"])


def test_epochs_between_fast_retransmits_skip_the_first_reduction_and_timeouts():
    big = 1e5
    tr = _trace([
        (0.0, 0, 1, big, -1), (0.9, 0, 20, big, 50),
        (1.0, 0, 10, 10, 51),     # first reduction (ns-2 halves): not an epoch start
        (2.9, 0, 16, 10, 90),
        (3.0, 0, 8, 8, 91),       # fast retransmit: epoch 1 starts (βW = 8)
        (5.4, 0, 14, 8, 150),
        (5.5, 0, 7, 7, 151),      # fast retransmit: epoch 1 ends (W = 14), epoch 2 starts
        (7.0, 0, 1, 3, 160),      # timeout: epoch 2 discarded
        (8.9, 0, 6, 3, 200),
        (9.0, 0, 3, 3.5, 201),    # after a timeout: no clean epoch into it
        (9.9, 0, 6, 3.5, 230),
        (10.0, 0, 3, 3, 231),     # epoch 3: 9.0 → 10.0, W = 6
        (11.0, 0, 5, 3, 260),
        (12.0, 0, 4, 2, 261),     # fast retransmit
        (12.5, 0, 1, 2, 262),     # a timeout that leaves ssthresh at 2: no ssthresh change
        (13.5, 0, 4, 2, 280),
        (14.0, 0, 2, 2.5, 281),   # the epoch 12.0 → 14.0 spans that timeout: discarded
        (20.0, 0, 10, 2.5, 400),
        (20.05, 0, 7, 4, 400),    # fast retransmit: ssthresh int(½·10) = 5 … here 4, cwnd inflated to 4 + 3
        (20.06, 0, 8, 4, 400),    # inflation by a dupack
        (20.1, 0, 4, 4, 410),     # deflation: the same loss event
        (22.0, 0, 9, 4, 500),
        (22.05, 0, 7, 4, 500),    # next fast retransmit: ssthresh int(½·9) = 4 unchanged, still a cut
        (22.1, 0, 4, 4, 510),
        (23.0, 0, 6, 4, 550),
        (23.5, 0, 3, 3, 551),
    ])
    ep = ab.epochs(tr, [0], alpha=1.0, beta=0.5)
    assert ep[["t0", "t1"]].values.tolist() == [[3.0, 5.5], [9.0, 10.0], [10.0, 12.0], [14.0, 20.05],
                                                [20.05, 22.05], [22.05, 23.5]]
    assert ep["w_start"].tolist() == [8, 3, 3, 2, 4, 4]
    assert ep["w_end"].tolist() == [14, 6, 5, 10, 9, 6]
    # eq. 4 by hand: (1 − ½)·14/1 + 1 = 8, (1 − ½)·6 + 1 = 4, (1 − ½)·5 + 1 = 3.5, …
    assert ep["eq4_rtts"].tolist() == pytest.approx([8.0, 4.0, 3.5, 6.0, 5.5, 4.0])
    assert ab.epochs(tr, [0], 1.0, 0.5, start=6.0)["t0"].tolist()[:2] == [9.0, 10.0]


def test_handoffs_resume_at_the_first_ack_advance_after_the_last_lost_packet():
    drops = pd.DataFrame({"t": [5.0, 5.01, 5.2, 5.6, 7.0, 10.0, 10.3], "link": 3, "flow": [0, 0, 0, 0, 0, 0, 0],
                          "cause": ["outage", "outage", "outage", "outage", "overflow", "outage", "outage"]})
    tcp = _trace([(4.9, 0, 10, 5, 100), (5.05, 0, 10, 5, 101), (5.8, 0, 1, 5, 101), (6.0, 0, 2, 5, 102),
                  (9.9, 0, 20, 5, 300), (10.8, 0, 1, 2, 300), (11.0, 0, 2, 2, 301)])
    h = ab.handoffs(tcp, drops, 0)
    assert h["t_first"].tolist() == [5.0, 10.0]
    assert h["t_last"].tolist() == [5.6, 10.3]
    assert h["t_resume"].tolist() == [6.0, 11.0]
    # another flow's outage drops are not this flow's handoffs
    assert ab.handoffs(tcp, drops.assign(flow=1), 0).empty


def test_recovery_curve_is_the_goodput_after_resume_cut_at_the_next_handoff():
    t = np.arange(0, 20, 0.05)
    tcp = pd.DataFrame({"t": t, "flow": 0, "cwnd": 10.0, "ssthresh": 5.0, "ack": np.floor(t * 40).astype(int)})
    cur = ab.recovery_curve(tcp, 0, resumes=[2.0, 8.0], next_starts=[3.0, 20.0], payload=1000, bin_s=0.5,
                            horizon_s=2.0)
    # 40 packets/s of 1000 bytes = 320 kb/s in every bin
    assert cur["goodput_bps"].tolist() == pytest.approx([320_000] * 4)
    assert cur["tau"].tolist() == [0.0, 0.5, 1.0, 1.5]


def test_join_and_leave_groups_double_and_halve_n_on_schedule():
    def n_at(groups, t):
        def start(g):
            return float(g["start"].rstrip("s"))

        def stop(g):
            return float(g.get("stop", "1e9s").rstrip("s"))

        return sum(g["count"] for g in groups.values() if start(g) <= t < stop(g))

    j = ab.join_groups(ab.SMOOTH, 10, [15, 20, 25])
    assert [n_at(j, t) for t in (10, 16, 21, 26)] == [10, 20, 40, 80]
    le = ab.leave_groups(ab.SMOOTH, 80, [15, 20, 25])
    assert [n_at(le, t) for t in (10, 16, 21, 26)] == [80, 40, 20, 10]
    assert all(g["alpha"] == 0.31 and g["beta"] == 0.875 for g in {**j, **le}.values())


def test_refill_and_convergence_scale_as_observations_1_and_3_say():
    bps = 100e6
    # refilling half the pipe: ∝ 1/(n·α)
    assert ab.refill_seconds(ab.SMOOTH, bps, 10) / ab.refill_seconds(ab.RESPONSIVE, bps, 10) == pytest.approx(1.25 / 0.31)
    assert ab.refill_seconds(ab.STANDARD, bps, 5) == pytest.approx(2 * ab.refill_seconds(ab.STANDARD, bps, 10))
    # Chiu–Jain: ln 0.1 / ln β decreases, about 17.2 for β = 7/8 and 1.66 for β = ¼
    rtt = (ab.rtt_min(bps) + ab.rtt_full(bps)) / 2
    w = bps / 8000 * rtt / 80
    one = ab.chiu_jain_seconds(ab.SMOOTH, bps, 80) / ((0.125 * w / 0.31 + 1) * rtt)
    assert one == pytest.approx(np.log(0.1) / np.log(0.875)) and 17 < one < 17.5


def test_first_at_or_above_counts_whole_intervals_after_t0():
    s = pd.Series([1.0, 2.0, 5.0, 9.0, 9.5], index=[10.0, 11.0, 12.0, 13.0, 14.0])
    assert ab.first_at_or_above(s, 11.0, 9.0, 20.0) == 3.0  # interval (13, 14] ends 3 s after 11
    assert np.isnan(ab.first_at_or_above(s, 11.0, 10.0, 20.0))
    assert np.isnan(ab.first_at_or_above(s, 11.0, 9.0, 13.0))

# --- paper A (adaptivity) ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def tiny_a(tmp_path_factory):
    out = tmp_path_factory.mktemp("repa")
    # one worker: the tiny sweeps are a few runs each, a process pool would cost more than they do
    assert main(["reproduce", "adaptivity", "--tiny", "--jobs", "1", "--out", str(out)]) == 0
    return out


def test_paper_a_has_a_verdict_and_a_figure_for_every_claim(tiny_a):
    paper = tiny_a / "adaptivity"
    rows = json.loads((paper / "claims.json").read_text())
    assert [r["id"] for r in rows] == [f"A{i}" for i in range(1, 9)]
    for r in rows:
        assert REQUIRED <= set(r)
        assert r["verdict"] in VERDICTS
        assert r["measured"] and r["note"]
        assert r["figures"], r["id"]
        for stem in r["figures"]:
            assert (paper / f"{stem}.png").stat().st_size > 0
            assert (paper / f"{stem}.svg").stat().st_size > 0
    assert "adaptivity/index.html" in (tiny_a / "index.html").read_text()


def test_a1_characteristic_has_both_variants_and_every_frequency(tiny_a):
    import pandas as pd

    df = pd.read_parquet(tiny_a / "adaptivity" / "data" / "A1-characteristic.parquet")
    assert set(df["variant"]) == {"reno", "newreno"}
    assert sorted(set(df["f"])) == [0.1, 0.5, 5.0]
    assert ((df["mean"] > 0.3) & (df["mean"] < 1.2)).all()  # goodput / free capacity, not bits per second


def test_a3_mechanism_separates_critical_from_high_frequency(tiny_a):
    (row,) = [r for r in json.loads((tiny_a / "adaptivity" / "claims.json").read_text()) if r["id"] == "A3"]
    cases = row["values"]["cases"]
    # paper A, Figs. 6-10: around 0.4 Hz a background wave costs TCP many packets in a row and the
    # buffer is full of UDP; at 5 Hz UDP never fills the 40-packet buffer
    assert cases["critical"]["drops_per_episode"] > 2 * cases["high"]["drops_per_episode"]
    assert cases["critical"]["udp_queue_max"] >= 36
    assert cases["high"]["udp_queue_max"] < 40
    assert cases["critical"]["window_peak_median"] < cases["low"]["window_peak_median"]


def test_dip_edges_of_a_characteristic():
    import pandas as pd

    from tcplab.reproduce.adaptivity import dip

    curve = pd.DataFrame({"f": [0.05, 0.1, 0.4, 0.6, 2.0, 10.0], "mean": [0.95, 0.9, 0.6, 0.8, 0.92, 1.02]})
    d = dip(curve)
    assert (d["min"], d["f_min"], d["f_lo"], d["f_hi"]) == (0.6, 0.4, 0.4, 0.6)
    assert d["low_mean"] == pytest.approx(0.925)
    assert d["high_mean"] == pytest.approx(0.97)
    assert dip(curve.assign(mean=0.95))["f_lo"] is None


def test_index_has_a_thumbnail_per_claim_the_build_and_full_citations(tiny_d3):
    from tcplab.citations import CITATIONS

    REFS = {c.letter: c for c in CITATIONS.values()}

    index = (tiny_d3 / "index.html").read_text()
    assert 'src="triple-slowstart/thumbs/d3-cwnd-19-20-22.png"' in index
    assert (tiny_d3 / "triple-slowstart" / "thumbs" / "d3-cwnd-19-20-22.png").stat().st_size > 0
    assert "tcplab " in index and "engine " in index  # version and engine version in the footer
    for ref in REFS.values():  # every paper cited in full, run or not
        assert html.escape(ref.title) in index and ref.authors[0] in index
    assert "10.1109/ISCC.2002.1021692" in index
    page = (tiny_d3 / "triple-slowstart" / "index.html").read_text()
    assert html.escape(REFS["D"].title) in page and "Barakat" in page
    assert "shared" not in index + page  # no path outside the report


def test_a_cache_that_is_not_a_directory_exits_2_writing_nothing(tmp_path, capsys):
    afile = tmp_path / "afile"
    afile.write_text("mine")
    code, _, err = run(capsys, "D", "--claims", "D3", "--tiny", "--out", str(tmp_path / "r"), "--cache", str(afile))
    assert code == 2 and "--cache" in err and "not a directory" in err
    assert not (tmp_path / "r").exists() and afile.read_text() == "mine"


# --- the paper packages: notes.md, the setup read from the Plan, the cache's Result -----------------


def _note_keys(path) -> set[str]:
    """Every section name a module looks up as NOTES[...] or load_notes(...)[...]
    (both branches of a conditional key)."""
    import ast

    keys = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if not isinstance(node, ast.Subscript):
            continue
        v = node.value
        named = (isinstance(v, ast.Name) and v.id == "NOTES") or (
            isinstance(v, ast.Call) and isinstance(v.func, ast.Name) and v.func.id == "load_notes")
        if named:
            keys |= _keys_of(node.slice)
    return keys


def _keys_of(expr) -> set[str]:
    import ast

    if isinstance(expr, ast.Constant) and isinstance(expr.value, str):
        return {expr.value}
    if isinstance(expr, ast.IfExp):
        return _keys_of(expr.body) | _keys_of(expr.orelse)
    raise AssertionError(f"a note looked up by a computed name: {ast.unparse(expr)}")


@pytest.mark.parametrize("slug", list(PAPERS))
def test_every_note_a_paper_uses_is_in_its_notes_md_and_every_section_is_used(slug):
    import importlib
    from pathlib import Path

    from tcplab.reproduce import load_notes

    package = PAPERS[slug]
    folder = Path(importlib.import_module(package).__file__).parent
    used = set().union(*(_note_keys(p) for p in folder.glob("*.py")))
    sections = load_notes(package)
    assert used, f"{slug}: no notes looked up"
    assert used == set(sections), (sorted(used - set(sections)), sorted(set(sections) - used))
    assert all(text and "\n" not in text for text in sections.values())


def test_load_notes_joins_a_sections_lines_and_leaves_out_the_preface(tmp_path, monkeypatch):
    from tcplab.reproduce import load_notes

    pkg = tmp_path / "notes_pkg_for_test"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "notes.md").write_text("# Title\n\nPreface text.\n\n## one\n\nFirst line\nsecond line {x:.2f}.\n\n"
                                  "## two words\nA paragraph.\n\n\nAnother one.\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    notes = load_notes("notes_pkg_for_test")
    assert notes == {"one": "First line second line {x:.2f}.", "two words": "A paragraph.\n\nAnother one."}
    assert notes["one"].format(x=1 / 3) == "First line second line 0.33."


def test_load_notes_refuses_a_section_named_twice(tmp_path, monkeypatch):
    from tcplab.reproduce import load_notes

    pkg = tmp_path / "notes_twice_for_test"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "notes.md").write_text("## a\nx\n## a\ny\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ValueError, match="section 'a' twice"):
        load_notes("notes_twice_for_test")


def test_paper_setups_are_the_scenarios_numbers():
    from tcplab.reproduce.adaptivity.runs import setup as a_setup
    from tcplab.reproduce.parallel_aimd.runs import path as c_path
    from tcplab.reproduce.triple_slowstart.runs import path as d_path

    # b-dumbbell.toml: 5 + 25 + 5 ms each way, ns-2's queue-limit 50 (49 waiting slots), 1000-byte
    # packets with a 40-byte header
    s = ab.setup()
    assert (s.packet, s.payload, s.buffer) == (1000, 960, 49)
    assert s.prop_rtt == pytest.approx(0.070) and s.min_rto == pytest.approx(0.2)
    assert (a_setup().buffer, a_setup().tcp_packet, a_setup().udp_packet) == (40, 1000, 1000)
    assert c_path().rtt_s == pytest.approx(0.120) and c_path().dropper_tau == "120ms"
    mu, tau, rtt = d_path()  # 1.5 Mb/s over 512-byte packets, τ = 560 ms
    assert mu == pytest.approx(1.5e6 / (512 * 8)) and tau == pytest.approx(0.56) and rtt == pytest.approx(tau + 1 / mu)


def test_a_cached_run_is_a_result_and_a_reduction_is_named_in_its_entry(tmp_path):
    import json as _json

    from tcplab.reproduce import Context
    from tcplab.result import Result

    paper = load_paper("D")
    overrides = ["duration=5s", "warmup=1s"]

    def keep(r):
        return {"sends": r.traces["tcp"][["t", "flow"]].head(10)}

    ctx = Context(paper, tmp_path / "out", "tiny", "packet", cache=tmp_path / "cache")
    fresh = ctx.run("scenarios/d-tahoe-satellite.toml", overrides, keep=keep)
    again = Context(paper, tmp_path / "out", "tiny", "packet", cache=tmp_path / "cache").run(
        "scenarios/d-tahoe-satellite.toml", overrides, keep=keep)
    whole = ctx.run("scenarios/d-tahoe-satellite.toml", overrides)
    for r in (fresh, again, whole):
        assert isinstance(r, Result) and r.engine == "packet" and r.engine_version
    assert again.engine_version == fresh.engine_version and again.metrics == fresh.metrics
    assert list(again.traces) == ["sends"] and len(again.traces["sends"]) == 10
    assert {"tcp", "drops"} <= set(whole.traces)
    entries = {p.name: _json.loads((p / "run.json").read_text()) for p in (tmp_path / "cache" / "reproduce" / "runs").iterdir()}
    assert sorted(e["reduction"] is None for e in entries.values()) == [False, True]
    assert any(str(e["reduction"]).endswith("keep") for e in entries.values())


def test_runs_of_a_claim_go_side_by_side_on_the_shared_workers_and_equal_its_runs_one_by_one(tmp_path, monkeypatch):
    """`Context.runs` (a claim's loop of traced runs, paper D's buffers) submits every run
    before it waits for the first: with claims at once, more than one is in flight;
    the Results, in order, are those `run` gives one after another (and a second
    `runs` reads them from the cache)."""
    import threading
    import time

    import tcplab.reproduce as rep
    from tcplab.reproduce import Context

    paper = load_paper("D")
    calls = [dict(scenario="scenarios/d-tahoe-satellite.toml",
                  overrides=[f"topology.bottleneck.buffer={b}", "duration=20s", "warmup=1s"]) for b in (5, 10, 20)]
    one_by_one = Context(paper, tmp_path / "o1", "tiny", "packet", cache=tmp_path / "c1")
    want = [one_by_one.run(**c) for c in calls]

    running, peak, guard, real = [0], [0], threading.Lock(), rep._traced_run

    def counted(*args):
        with guard:
            running[0] += 1
            peak[0] = max(peak[0], running[0])
        try:
            time.sleep(0.05)
            return real(*args)
        finally:
            with guard:
                running[0] -= 1

    monkeypatch.setattr(rep, "_traced_run", counted)
    shared = rep._Claims(2)
    ctx = Context(paper, tmp_path / "o2", "tiny", "packet", jobs=2, cache=tmp_path / "c2")
    ctx.claims = shared
    shared.lock.acquire()  # as a claim's thread holds it
    try:
        got = ctx.runs(calls)
        again = ctx.runs(calls)
    finally:
        shared.lock.release()
        shared.pool.stop()
    assert peak[0] == 2, f"{peak[0]} runs at once"
    for w, g, a in zip(want, got, again):
        assert g.metrics == w.metrics == a.metrics
        assert g.scenario == w.scenario
        for name in w.traces:
            pd.testing.assert_frame_equal(g.traces[name], w.traces[name])
            pd.testing.assert_frame_equal(a.traces[name], w.traces[name])


def test_fluid_runs_of_a_claim_go_to_the_shared_workers_and_equal_those_run_in_place(tmp_path, monkeypatch):
    """With claims at once, `Context.fluid(s)` run on the shared workers (not in the claim's
    thread, which holds the claims' lock): the same FluidResults, in order."""
    import threading

    import tcplab.fluid
    import tcplab.reproduce as rep
    from tcplab.reproduce import Context

    paper = load_paper("C")
    calls = [dict(n=n, beta=0.5, policy="largest-rate", events=200, seed=n) for n in (1, 2, 3)]
    want = [Context(paper, tmp_path / "o1", "tiny", "packet", cache=tmp_path / "c").fluid(**c) for c in calls]
    threads, real = [], tcplab.fluid.fluid

    def recorded(**kw):
        threads.append(threading.current_thread().name)
        return real(**kw)

    monkeypatch.setattr(tcplab.fluid, "fluid", recorded)
    shared = rep._Claims(2)
    ctx = Context(paper, tmp_path / "o2", "tiny", "packet", jobs=2, cache=tmp_path / "c")
    ctx.claims = shared
    shared.lock.acquire()
    try:
        got = ctx.fluids(calls) + [ctx.fluid(**calls[0])]
    finally:
        shared.lock.release()
        shared.pool.stop()
    assert len(threads) == 4 and all(t.startswith("tcplab-worker") for t in threads), threads
    for w, g in zip(want + want[:1], got):
        assert g.metrics == w.metrics
        pd.testing.assert_frame_equal(g.flows, w.flows)


# --- claims run concurrently ---------------------------------------------------------------------


def _comparable_report(out):
    """Each paper's claims.json without wall times, and its data tables."""
    got = {}
    for path in sorted(out.glob("*/claims.json")):
        got[path.parent.name] = [{k: v for k, v in r.items() if k != "wall_s"} for r in json.loads(path.read_text())]
    for path in sorted(out.glob("*/data/*.parquet")):
        got[str(path.relative_to(out))] = pd.read_parquet(path)
    return got


def test_concurrent_claims_give_the_serial_results_on_at_most_jobs_workers(tmp_path, monkeypatch):
    """Claims of several papers at once (the default) report what `--jobs 1`, one claim
    after another, reports; never more than --jobs runs (sweep points and traced runs)
    go on at once, and more than one does."""
    import threading

    import tcplab.reproduce as rep
    from tcplab.sweep import executors

    running, peak, guard = [0], [0], threading.Lock()

    def counted(real):
        def run(*args, **kwargs):
            with guard:
                running[0] += 1
                peak[0] = max(peak[0], running[0])
            try:
                return real(*args, **kwargs)
            finally:
                with guard:
                    running[0] -= 1
        return run

    claims = "B1,B2,B3,D3"  # sweeps, traced runs, a table two B claims share, two papers
    serial, concurrent = tmp_path / "serial", tmp_path / "concurrent"
    assert main(["reproduce", "all", "--claims", claims, "--tiny", "--jobs", "1", "--out", str(serial),
                 "--cache", str(tmp_path / "c1")]) == 0
    monkeypatch.setattr(executors, "run_task", counted(executors.run_task))
    monkeypatch.setattr(rep, "_traced_run", counted(rep._traced_run))
    assert main(["reproduce", "all", "--claims", claims, "--tiny", "--jobs", "2", "--out", str(concurrent),
                 "--cache", str(tmp_path / "c2")]) == 0
    assert peak[0] == 2, f"{peak[0]} runs at once with --jobs 2"
    want, got = _comparable_report(serial), _comparable_report(concurrent)
    assert list(got) == list(want) and len(want) > 2
    for name in want:
        if isinstance(want[name], pd.DataFrame):
            pd.testing.assert_frame_equal(got[name], want[name], obj=name)
        else:
            assert got[name] == want[name], name
    for paper in ("alpha-beta", "triple-slowstart"):
        assert (concurrent / paper / "index.html").is_file()
        figures = {p.name for p in (serial / paper).glob("*.png")}
        assert figures and {p.name for p in (concurrent / paper).glob("*.png")} == figures
    assert (concurrent / "index.html").is_file()


def test_a_failing_claim_lets_the_other_papers_finish_then_raises(tmp_path, monkeypatch):
    import tcplab.reproduce as rep

    paper = load_paper("parallel-aimd")
    claim = next(c for c in paper.claims if c.id == "C1")

    def broken(ctx):
        raise RuntimeError("broken check")

    monkeypatch.setattr(claim, "check", broken)
    with pytest.raises(RuntimeError, match="broken check"):
        rep.reproduce_all(["parallel-aimd", "triple-slowstart"], ["C1", "D3"], "tiny", out=tmp_path, jobs=2)
    assert (tmp_path / "triple-slowstart" / "claims.json").is_file()
    assert not (tmp_path / "parallel-aimd" / "claims.json").exists()


def test_ctrl_c_stops_the_claims_under_way_and_drops_those_not_started(tmp_path, monkeypatch):
    """More claims than claim threads: on Ctrl-C those under way stop at their next wait
    for a run, those not started never start, and no paper is written."""
    import os
    import signal
    import threading
    import time

    import tcplab.reproduce as rep

    paper = load_paper("parallel-aimd")
    started = []

    def waits_for_runs(ctx):
        started.append(ctx)
        for i in range(200):  # 10 s of waiting for runs, unless stopped
            if i == 4 and ctx is started[0]:
                os.kill(os.getpid(), signal.SIGINT)
            ctx.claims.pool.check()
            time.sleep(0.05)
        raise AssertionError("not stopped")

    for c in paper.claims:
        monkeypatch.setattr(c, "check", waits_for_runs)
    t0 = time.perf_counter()
    with pytest.raises(KeyboardInterrupt):
        rep.reproduce_all(["parallel-aimd"], None, "tiny", out=tmp_path, jobs=2)
    assert time.perf_counter() - t0 < 3
    assert 1 <= len(started) <= 3 < len(paper.claims), "the claims not started were dropped"
    assert not (tmp_path / "parallel-aimd" / "claims.json").exists()
    deadline = time.monotonic() + 2  # the idle workers end as soon as they see the pool shut
    while [t for t in threading.enumerate() if t.name.startswith("tcplab-")] and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not [t for t in threading.enumerate() if t.name.startswith("tcplab-")], "no thread left running"
