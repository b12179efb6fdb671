"""The results store under hostile conditions: unreadable parts, two writers at
once, seeds beyond 2^63, sweeps with nothing valid, --sql that would write."""

import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from tcplab.cli import main
from tcplab.sweep import load_sweep, run_sweep
from tcplab.sweep.store import Store

ROOT = Path(__file__).resolve().parent.parent


def write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def fluid_sweep(tmp_path, extra: str = "", events: int = 2000, betas="[0.5, 0.6, 0.7]", name="s") -> Path:
    return write(tmp_path / f"{name}.toml", f"""
name = "{name}"
engine = "fluid"
scenario = {{ n = 2, events = {events} {extra} }}
[axes]
beta = {betas}
""")


def rows(out: Path) -> int:
    return sum(pq.read_metadata(f).num_rows for f in (out / "store").glob("part-*.parquet"))


def test_an_unreadable_part_is_quarantined_and_its_points_computed_again(tmp_path, capsys):
    path = fluid_sweep(tmp_path)
    out = tmp_path / "out"
    assert run_sweep(load_sweep(path), out, progress=False).computed == 3
    (part,) = (out / "store").glob("part-*.parquet")
    data = part.read_bytes()
    part.write_bytes(data[: len(data) // 2])  # truncated, as by a full disk
    capsys.readouterr()
    # readers warn, skip it and move nothing
    assert main(["sweep", str(path), "--out", str(out), "--dry-run"]) == 0
    err = capsys.readouterr().err
    assert part.name in err and "skipped" in err and part.exists()
    assert main(["results", str(out)]) == 2  # nothing readable is left
    assert part.exists()
    # a sweep moves it aside, says so, and computes its points again
    again = run_sweep(load_sweep(path), out, progress=False)
    assert again.computed == 3 and again.failed_now == 0
    assert "moved to" in capsys.readouterr().err
    assert (out / "store" / "quarantine" / part.name).read_bytes() == data[: len(data) // 2], "kept, not deleted"
    assert Store(out).frame()["status"].tolist() == ["ok"] * 3


def test_garbage_with_a_parquet_name_is_quarantined(tmp_path):
    path = fluid_sweep(tmp_path)
    out = tmp_path / "out"
    run_sweep(load_sweep(path), out, progress=False)
    (out / "store" / "part-0-0-0.parquet").write_bytes(b"PAR1 not really" * 10)
    assert run_sweep(load_sweep(path), out, progress=False).computed == 0
    assert (out / "store" / "quarantine" / "part-0-0-0.parquet").exists()


def test_two_sweeps_on_one_store_compute_each_point_once(tmp_path):
    # 6 points of ~0.3 s each: the two processes overlap for seconds
    path = fluid_sweep(tmp_path, events=300_000, betas="[0.3, 0.4, 0.5, 0.6, 0.7, 0.8]")
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "tcplab.cli", "sweep", str(path), "--out", str(out), "--jobs", "1", "--no-plot"]
    procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path)
             for _ in range(2)]
    outs = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    assert rows(out) == 6, "every point computed once, by one of the two"
    assert not list(out.glob(".sweep.json*.tmp"))


def test_a_sweep_waits_for_the_store_lock_then_computes(tmp_path):
    """The waiting path itself, without a race (two sweeps started together overlap
    only if neither finishes before the other starts, which a loaded machine does
    not promise): the test holds the store's lock, the sweep says it is waiting and
    stays blocked, and computes once the lock is released."""
    import fcntl
    import os
    import time

    path = fluid_sweep(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    fd = os.open(out / ".lock", os.O_RDWR | os.O_CREAT, 0o644)
    fcntl.flock(fd, fcntl.LOCK_EX)
    os.pwrite(fd, b"4242\n", 0)
    cmd = [sys.executable, "-m", "tcplab.cli", "sweep", str(path), "--out", str(out), "--jobs", "1", "--no-plot"]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    try:
        said = ""  # (the console may wrap the message)
        deadline = time.monotonic() + 120
        while "waiting for it" not in said and time.monotonic() < deadline and p.poll() is None:
            said = " ".join((said + " " + p.stderr.readline()).split())
        assert "another sweep (pid 4242)" in said and "waiting for it" in said, said
        time.sleep(0.5)
        assert p.poll() is None and rows(out) == 0, "blocked while the lock is held"
    finally:
        os.close(fd)  # releases the lock
    _, err = p.communicate(timeout=300)
    assert p.returncode == 0, err
    assert rows(out) == 3


@pytest.mark.parametrize("seed", [2**63, 2**64 - 1])
def test_seeds_up_to_2_64_are_stored_and_resume(tmp_path, seed):
    path = fluid_sweep(tmp_path, extra=f", seed = {seed}")
    text = path.read_text().replace('engine = "fluid"', 'engine = "fluid"\nreplications = 2')
    path.write_text(text)
    out = tmp_path / "out"
    first = run_sweep(load_sweep(path), out, progress=False)
    assert first.computed == 6 and first.failed_now == 0
    df = Store(out).frame()
    assert seed in set(int(s) for s in df["seed"]), "replication 0 keeps the seed as given"
    assert run_sweep(load_sweep(path), out, progress=False).computed == 0, "resumes: nothing recomputed"


@pytest.mark.parametrize("seed", ["-1", str(2**64), "1.5"])
def test_seeds_outside_u64_are_refused_before_computing(tmp_path, seed, capsys):
    path = fluid_sweep(tmp_path, extra=f", seed = {seed}")
    out = tmp_path / "out"
    assert main(["sweep", str(path), "--out", str(out), "--no-plot"]) == 2
    assert "seed" in capsys.readouterr().err
    assert not out.exists(), "nothing written"


def test_a_sweep_whose_every_point_is_invalid_fails_and_writes_nothing(tmp_path, capsys):
    path = write(tmp_path / "bad.toml", f"""
scenario = "{ROOT / 'scenarios' / 'a-constant-udp.toml'}"
[axes]
"topology.bottleneck.buffer" = [-1, "lots"]
""")
    out = tmp_path / "out"
    assert main(["sweep", str(path), "--out", str(out)]) == 2
    assert "every one of the 2 points is invalid" in capsys.readouterr().err
    assert not out.exists()


def test_a_sweep_whose_every_point_fails_exits_non_zero(tmp_path):
    path = fluid_sweep(tmp_path, betas="[-1, 7]")  # refused by the model when the point runs
    assert main(["sweep", str(path), "--out", str(tmp_path / "out"), "--no-plot"]) == 1


@pytest.mark.parametrize("name", ["../../escape", "a/b", "..", ".hidden"])
def test_a_sweep_name_cannot_leave_its_folder(tmp_path, name, capsys, monkeypatch):
    path = fluid_sweep(tmp_path)
    path.write_text(path.read_text().replace('name = "s"', f'name = "{name}"'))
    monkeypatch.chdir(tmp_path)
    assert main(["sweep", str(path)]) == 2
    assert "name" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.toml"]


@pytest.mark.parametrize("sql", [
    "COPY (SELECT 1) TO '{tmp}/copied.csv'",
    "SELECT 1; COPY points TO '{tmp}/copied.csv'",
    "ATTACH '{tmp}/copied.db' AS x",
    "CREATE TABLE t AS SELECT 1",
    "INSTALL httpfs",
    "SET enable_external_access = true",
])
def test_results_sql_is_read_only(tmp_path, sql, capsys):
    out = tmp_path / "out"
    run_sweep(load_sweep(fluid_sweep(tmp_path)), out, progress=False)
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    assert main(["results", str(out), "--sql", sql.format(tmp=tmp_path)]) == 2
    assert "read-only" in capsys.readouterr().err
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*")) == before
    assert main(["results", str(out), "--sql", "WITH a AS (SELECT count(*) AS n FROM points) SELECT n FROM a"]) == 0


def test_results_refuses_bad_limits_csv_folders_and_a_corrupt_description(tmp_path, capsys):
    out = tmp_path / "out"
    run_sweep(load_sweep(fluid_sweep(tmp_path)), out, progress=False)
    assert main(["results", str(out), "--limit", "-1"]) == 2
    assert "--limit" in capsys.readouterr().err
    assert main(["results", str(out), "--csv", str(tmp_path / "nowhere" / "x.csv")]) == 2
    assert "--csv" in capsys.readouterr().err
    assert main(["results", str(out), "--limit", "2"]) == 0
    assert "3 rows (first 2)" in capsys.readouterr().out
    (out / "sweep.json").write_bytes(b"\xff\xfe{not json")
    assert main(["results", str(out)]) == 2
    assert "sweep.json" in capsys.readouterr().err
