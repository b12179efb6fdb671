"""Which code produced a result: keys change with the build, every output says
which build, engine, command, host and units it comes from."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from tcplab import provenance
from tcplab.cli import main as cli
from tcplab.scenario import _core
from tcplab.sweep import Store, load_sweep, run_sweep
from tcplab.sweep.engines import engine_version, prepare
from tcplab.sweep.keys import point_key

ROOT = Path(__file__).resolve().parents[1]
PAPER_C = ROOT / "scenarios" / "c-parallel-sack.toml"
TINY = {"duration": "3s", "warmup": "1s",
        "topology": {"bottleneck": {"rate": "1Mbps", "delay": "10ms", "buffer": 10},
                     "access": {"rate": "10Mbps", "delay": "1ms", "buffer": 100},
                     "sink_access": {"rate": "10Mbps", "delay": "1ms", "buffer": 100}},
        "flows": {"tcp": {"kind": "tcp", "variant": "sack", "count": 2}}}


@pytest.fixture
def fresh_build():
    """Forget the cached build string before and after (a test changes BUILD_ID)."""
    provenance.build.cache_clear()
    yield
    provenance.build.cache_clear()


def test_the_engine_carries_a_build_id_baked_at_build_time():
    core = _core()
    assert core.BUILD_ID.startswith("src-") and len(core.BUILD_ID) == 20
    assert "rustc" in core.RUSTC_VERSION
    assert provenance.build().startswith(f"0.1.0+{core.BUILD_ID}.py-")


def test_a_key_changes_when_the_build_id_changes(monkeypatch, fresh_build):
    sc = prepare("packet", TINY)
    before = point_key(sc, "packet", engine_version("packet"))
    monkeypatch.setattr(_core(), "BUILD_ID", "src-0000000000000000")
    provenance.build.cache_clear()
    after = point_key(sc, "packet", engine_version("packet"))
    assert after != before
    monkeypatch.undo()
    provenance.build.cache_clear()
    assert point_key(sc, "packet", engine_version("packet")) == before


def test_a_key_changes_with_the_tcplab_version(monkeypatch, fresh_build):
    import tcplab

    sc = prepare("packet", TINY)
    before = point_key(sc, "packet", engine_version("packet"))
    monkeypatch.setattr(tcplab, "__version__", "9.9.9")
    provenance.build.cache_clear()
    assert point_key(sc, "packet", engine_version("packet")) != before


def test_the_python_hash_leaves_out_presentation_and_covers_the_rest(tmp_path):
    # a copy of the package: a changed label in the CLI keeps the hash, a changed
    # metric module moves it
    pkg = tmp_path / "tcplab"
    shutil.copytree(Path(provenance.__file__).parent, pkg, ignore=shutil.ignore_patterns("*.so", "__pycache__"))
    code = ("import importlib.util, sys; spec = importlib.util.spec_from_file_location('p', sys.argv[1]); "
            "m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m); print(m.python_hash())")

    def h():
        return subprocess.run([sys.executable, "-c", code, str(pkg / "provenance.py")], capture_output=True,
                              text=True, check=True).stdout.strip()

    base = h()
    with open(pkg / "cli.py", "a") as fh:
        fh.write("\n# a comment\n")
    assert h() == base
    with open(pkg / "metrics.py", "a") as fh:
        fh.write("\n# a comment\n")
    assert h() != base


def _sweep(tmp_path):
    p = tmp_path / "s.toml"
    p.write_text(f'scenario = "{PAPER_C}"\nengine = "packet"\n[set]\nduration = "4s"\nwarmup = "1s"\n'
                 '[axes]\n"flows.sack.count" = [1, 2]\n')
    return load_sweep(p)


def test_rows_record_their_build_and_results_filter_by_it(tmp_path, capsys, monkeypatch, fresh_build):
    out = tmp_path / "out"
    sw = _sweep(tmp_path)
    run_sweep(sw, out, jobs=1, progress=False)
    first = provenance.build()
    assert set(Store(out).frame()["build"]) == {first}
    # another build: every point is computed again, beside the old rows
    monkeypatch.setattr(_core(), "BUILD_ID", "src-00000000000000ff")
    provenance.build.cache_clear()
    second = provenance.build()
    again = run_sweep(_sweep(tmp_path), out, jobs=1, progress=False)
    assert again.stored_before == 0 and again.computed == 2
    assert sorted(Store(out).builds()) == sorted([(first, 2), (second, 2)])
    assert cli(["results", str(out), "--builds"]) == 0
    text = capsys.readouterr().out
    assert "src-00000000000000ff" in text
    csv = tmp_path / "r.csv"
    assert cli(["results", str(out), "--build", second[:22], "--csv", str(csv)]) == 0
    import pandas as pd

    df = pd.read_csv(csv)
    assert len(df) == 2 and set(df["build"]) == {second}
    assert cli(["results", str(out), "--build", "0.0.0+nothing"]) == 2
    assert "stored builds" in capsys.readouterr().err


def _check_meta(meta, engine):
    for k in ("tcplab_version", "build", "build_id", "engine", "engine_version", "command", "created", "host",
              "python", "rust", "seed"):
        assert k in meta, k
    assert meta["engine"] == engine and meta["build"] == provenance.build()
    assert meta["created"].endswith("Z") and "T" in meta["created"]
    assert meta["rust"].startswith("rustc ")


def test_sweep_metadata_and_its_parquet_files_say_which_build(tmp_path):
    out = tmp_path / "out"
    run_sweep(_sweep(tmp_path), out, jobs=1, progress=False)
    meta = json.loads((out / "sweep.json").read_text())
    _check_meta(meta, "packet")
    assert meta["axes"][0]["columns"] == ["flows.sack.count"]  # what `tcplab results` reads is still there
    part = Store(out).files()[0]
    pmeta = provenance.read_parquet_metadata(part)
    _check_meta(pmeta, "packet")
    assert pmeta["units"]["normalized_throughput"] == "ratio"
    assert pmeta["units"]["groups.sack.goodput_bps"] == "bit/s"


def test_summary_json_and_trace_parquet_say_which_build(tmp_path):
    out = tmp_path / "run"
    assert cli(["run", str(ROOT / "scenarios" / "c-parallel-sack.toml"), "--set", "duration=3s", "--set",
                "warmup=1s", "--trace", "cwnd,queue", "--out", str(out)]) == 0
    summary = json.loads((out / "summary.json").read_text())
    meta = summary["meta"]
    _check_meta(meta, "packet")
    assert meta["engine_version"] == summary["engine_version"]
    assert meta["seed"] == summary["scenario"]["seed"]
    assert "run" in meta["command"] and "--trace" in meta["command"]
    assert meta["units"]["flows.goodput_bps"] == "bit/s"
    assert meta["units"]["metrics.normalized_throughput"] == "ratio"
    assert meta["units"]["traces.tcp.cwnd"] == "packets"
    tmeta = provenance.read_parquet_metadata(out / "traces" / "tcp.parquet")
    _check_meta(tmeta, "packet")
    assert tmeta["units"] == {"t": "s", "cwnd": "packets", "ssthresh": "packets", "inflight": "packets",
                              "ack": "packet number"}
    # pandas still reads it as before
    import pandas as pd

    assert list(pd.read_parquet(out / "traces" / "tcp.parquet").columns)[:3] == ["t", "flow", "cwnd"]
    assert pq.read_schema(out / "traces" / "tcp.parquet").metadata[b"pandas"]


@pytest.mark.slow
def test_a_changed_engine_source_rebuilds_a_new_build_id_and_the_cache_misses(tmp_path):
    """The real thing: a copy of the repository (no git), built; a sweep stored;
    one engine source file changed, rebuilt; the same sweep computes every point
    again."""
    if not shutil.which("cargo"):
        pytest.skip("needs cargo")
    repo = tmp_path / "repo"
    shutil.copytree(ROOT, repo, ignore=shutil.ignore_patterns("target", ".venv", ".git", "__pycache__", "*.so",
                                                              "reports", "runs"))
    # its own target dir, seeded from ours (dependencies compiled already)
    target = tmp_path / "target"
    env = dict(os.environ, CARGO_TARGET_DIR=str(target))
    release = ROOT / "target" / "release"
    if (release / "deps").is_dir():
        (target / "release").mkdir(parents=True)
        shutil.copytree(release / "deps", target / "release" / "deps")
        shutil.copytree(release / "build", target / "release" / "build", dirs_exist_ok=True)
        shutil.copytree(release / ".fingerprint", target / "release" / ".fingerprint")
    so = repo / "python" / "tcplab" / "_core.abi3.so"

    def build():
        subprocess.run(["cargo", "build", "--release", "-q", "-p", "tcplab-py", "--features",
                        "pyo3/extension-module"], cwd=repo, env=env, check=True, timeout=1200)
        shutil.copy(target / "release" / "lib_core.so", so)

    def sweep_in_copy() -> dict:
        code = ("import json, sys; from tcplab.sweep import load_sweep, run_sweep; from tcplab import provenance; "
                "from tcplab.scenario import _core; "
                "o = run_sweep(load_sweep(sys.argv[1]), sys.argv[2], jobs=1, progress=False); "
                "print(json.dumps({'build_id': _core().BUILD_ID, 'git': _core().BUILD_GIT, "
                "'computed': o.computed, 'keys': sorted(p.key for p in o.planned)}))")
        sw = tmp_path / "s.toml"
        sw.write_text(f'scenario = "{repo / "scenarios" / "c-parallel-sack.toml"}"\nengine = "packet"\n'
                      '[set]\nduration = "4s"\nwarmup = "1s"\n[axes]\n"flows.sack.count" = [1, 2]\n')
        penv = dict(os.environ, PYTHONPATH=str(repo / "python"))
        out = subprocess.run([sys.executable, "-c", code, str(sw), str(tmp_path / "out")], cwd=tmp_path,
                             env=penv, capture_output=True, text=True, check=True)
        return json.loads(out.stdout)

    build()
    first = sweep_in_copy()
    assert first["git"] == ""  # no git in the copy: the source hash alone
    assert first["computed"] == 2
    assert sweep_in_copy()["computed"] == 0  # same build: cached
    src = repo / "crates" / "engine" / "src" / "lib.rs"
    src.write_text(src.read_text() + "\n// a changed engine source\n")
    build()
    second = sweep_in_copy()
    assert second["build_id"] != first["build_id"]
    assert set(second["keys"]).isdisjoint(first["keys"])
    assert second["computed"] == 2  # the cache missed


def test_figures_say_which_build_drew_them(tmp_path):
    import tcplab
    from PIL import Image

    res = tcplab.run(PAPER_C, overrides={"duration": "10s", "warmup": "2s"}, trace=["cwnd"])
    fig = res.plot("cwnd")
    from tcplab.plots import save

    png = save(fig, tmp_path / "c.png")
    info = Image.open(png).text
    assert info["Software"] == f"tcplab {provenance.build()}"
    assert json.loads(info["tcplab"])["build_id"] == provenance.build_id()
    svg = save(fig, tmp_path / "c.svg").read_text()
    assert provenance.build() in svg


def test_an_exported_ns2_script_says_what_wrote_it(tmp_path):
    from tcplab.backends.ns2 import export_tcl
    from tcplab.scenario import load_scenario

    sc = Path(__file__).resolve().parents[1] / "scenarios" / "d-tahoe-satellite.toml"
    out = tmp_path / "d.tcl"
    assert cli(["export-ns2", str(sc), "-o", str(out)]) == 0
    text = out.read_text()
    head, body = text.split("\n", 5)[:5], text.split("\n", 5)[5]
    assert all(line.startswith("# ") for line in head)
    assert f"build id {provenance.build_id()}" in text and "scenario d-tahoe-satellite, seed" in text
    assert "export-ns2" in head[3]
    # nothing else in the script changes: the rest is export_tcl's text
    assert body == export_tcl(load_scenario(sc))


def test_read_parquet_gives_pandas_frame_one_block_a_column_and_takes_writes(tmp_path):
    """`provenance.read_parquet`: the values and dtypes `pandas.read_parquet` gives,
    without stacking the columns of one dtype into one block (a copy of each value),
    in a frame that can be written to."""
    import numpy as np
    import pandas as pd

    from tcplab.provenance import read_parquet, write_parquet

    n = 50_000
    df = pd.DataFrame({"t": np.linspace(0, 1, n), "flow": np.arange(n) % 7, "cwnd": np.arange(n) * 0.5,
                       "seq": np.arange(n), "cause": pd.Categorical.from_codes(np.arange(n) % 3, ["a", "b", "c"])})
    write_parquet(df, tmp_path / "x.parquet", {"table": "x"})
    got = read_parquet(tmp_path / "x.parquet")
    pd.testing.assert_frame_equal(got, pd.read_parquet(tmp_path / "x.parquet"))
    pd.testing.assert_frame_equal(got, df)
    assert got._mgr.nblocks == len(got.columns)
    got.loc[got.index[:2], "cwnd"] = -1.0
    got["seq"] += 1
    assert (got["cwnd"].to_numpy()[:2] == -1.0).all() and got["seq"].iloc[-1] == n
