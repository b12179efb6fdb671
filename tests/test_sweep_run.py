"""Running sweeps: one row per point, failures recorded, interrupted sweeps resume
without losing or repeating a point, every executor gives the same rows."""

import io
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from tcplab.cli import main as cli
from tcplab.sweep import Store, load_sweep, run_sweep

ROOT = Path(__file__).resolve().parents[1]
PAPER_C = ROOT / "scenarios" / "c-parallel-sack.toml"


def write_sweep(tmp_path, body: str, name="s") -> Path:
    p = tmp_path / f"{name}.toml"
    p.write_text(f'scenario = "{PAPER_C}"\n' + body)
    return p


# 20 s of simulated time per point: short runs, same mechanics as the paper's 600 s
SMALL = """
engine = "packet"
replications = 2
[set]
duration = "20s"
warmup = "5s"
[axes]
"flows.sack.count" = [1, 2, 4]
"topology.bottleneck.buffer" = [5, 20]
"""


def comparable(df: pd.DataFrame) -> pd.DataFrame:
    """Rows without what differs between runs of the same points (wall time)."""
    df = df.drop(columns=["wall_s"]).sort_values("key").reset_index(drop=True)
    return df[sorted(df.columns)]


def raw_counts(out) -> tuple[int, int]:
    con = Store(out).connect()
    return con.execute("SELECT count(*), count(DISTINCT key) FROM raw").fetchone()


def test_sweep_stores_one_row_per_point_and_a_rerun_computes_nothing(tmp_path):
    sw = load_sweep(write_sweep(tmp_path, SMALL))
    first = run_sweep(sw, tmp_path / "out", jobs=2, progress=False)
    assert first.computed == 12 and first.failed_now == 0
    df = Store(tmp_path / "out").frame()
    assert len(df) == 12 and set(df["status"]) == {"ok"}
    assert set(df.groupby(["flows.sack.count", "topology.bottleneck.buffer"]).size()) == {2}
    assert df["normalized_throughput"].between(0.3, 1.0).all()  # a SACK flow on an empty link fills most of it
    assert set(df["engine"]) == {"packet"} and df["engine_version"].notna().all()
    again = run_sweep(sw, tmp_path / "out", jobs=2, progress=False)
    assert again.computed == 0 and again.stored_before == 12
    assert raw_counts(tmp_path / "out") == (12, 12)


def test_failed_points_are_recorded_with_their_error_and_do_not_stop_the_sweep(tmp_path):
    body = """
[set]
duration = "20s"
warmup = "5s"
[axes]
"flows.sack.variant" = ["sack", "cubic"]
"flows.sack.count" = [1, 2]
"""
    sw = load_sweep(write_sweep(tmp_path, body))
    out = run_sweep(sw, tmp_path / "out", jobs=2, progress=False)
    df = Store(tmp_path / "out").frame()
    assert len(df) == 4
    bad = df[df["status"] == "failed"]
    assert list(bad["flows.sack.variant"].unique()) == ["cubic"] and len(bad) == 2
    assert bad["error"].str.contains("variant").all()
    assert (df[df["status"] == "ok"]["normalized_throughput"] > 0).all()
    assert out.failed_now == 2 and sum(out.failures.values()) == 2
    # a failure is not recomputed on a re-run, unless asked
    assert run_sweep(sw, tmp_path / "out", progress=False).computed == 0
    assert run_sweep(sw, tmp_path / "out", progress=False, retry_failed=True).computed == 2


def test_an_engine_error_in_a_worker_is_a_failed_row(tmp_path):
    # beta = 1.5 passes the sweep's checks but the fluid model rejects it when run
    p = tmp_path / "f.toml"
    p.write_text('engine = "fluid"\nscenario = { n = 2, events = 2000 }\n[axes]\nbeta = [0.5, 1.5]\n')
    run_sweep(load_sweep(p), tmp_path / "out", jobs=2, progress=False)
    df = Store(tmp_path / "out").frame().set_index("beta")
    assert df.loc[0.5, "status"] == "ok" and df.loc[0.5, "mean_aggregate"] == pytest.approx(1 - 1 / 7, abs=0.02)
    assert df.loc[1.5, "status"] == "failed" and "beta" in df.loc[1.5, "error"]


def test_thread_process_and_serial_runs_store_the_same_rows(tmp_path):
    sw = load_sweep(write_sweep(tmp_path, SMALL))
    frames = []
    for i, (pool, jobs) in enumerate((("thread", 1), ("thread", 2), ("process", 2))):
        run_sweep(sw, tmp_path / f"o{i}", jobs=jobs, pool=pool, progress=False, batch=5)
        frames.append(comparable(Store(tmp_path / f"o{i}").frame()))
    pd.testing.assert_frame_equal(frames[0], frames[1])
    pd.testing.assert_frame_equal(frames[0], frames[2])


def test_resume_after_kill_9_loses_nothing_and_repeats_nothing(tmp_path):
    body = SMALL.replace('duration = "20s"', 'duration = "40s"').replace("[1, 2, 4]", "[1, 2, 3, 4, 6, 8, 10]")
    path = write_sweep(tmp_path, body)
    total = 7 * 2 * 2
    killed = tmp_path / "killed"
    cmd = [sys.executable, "-m", "tcplab.cli", "sweep", str(path), "--out", str(killed),
           "--jobs", "1", "--batch", "2", "--no-plot"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=tmp_path)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and len(list((killed / "store").glob("part-*.parquet"))) < 2:
        time.sleep(0.005)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    stored = len(Store(killed).frame())
    assert 0 < stored < total, "the kill should land mid-sweep"
    # resume, then compare with an uninterrupted run
    resumed = run_sweep(load_sweep(path), killed, jobs=2, progress=False)
    assert resumed.stored_before == stored and resumed.computed == total - stored
    whole = tmp_path / "whole"
    run_sweep(load_sweep(path), whole, jobs=2, progress=False)
    pd.testing.assert_frame_equal(comparable(Store(killed).frame()), comparable(Store(whole).frame()))
    assert raw_counts(killed) == (total, total)  # no point twice


def test_cli_sweep_dry_run_results_sql_and_csv(tmp_path, capsys):
    path = write_sweep(tmp_path, SMALL)
    out = tmp_path / "out"
    assert cli(["sweep", str(path), "--out", str(out), "--dry-run"]) == 0
    assert "12 points, 12 distinct, 0 invalid, 12 to run" in capsys.readouterr().out
    assert not (out / "store").exists()
    assert cli(["sweep", str(path), "--out", str(out), "--jobs", "2"]) == 0
    text = capsys.readouterr().out
    assert "12 ok, 0 failed" in text and (out / "plot.png").stat().st_size > 1000
    csv = tmp_path / "r.csv"
    q = ('SELECT "flows.sack.count" AS n, count(*) AS runs, avg(normalized_throughput) AS x '
         'FROM points GROUP BY 1 ORDER BY 1')
    assert cli(["results", str(out), "--sql", q, "--csv", str(csv)]) == 0
    df = pd.read_csv(csv)
    assert list(df["n"]) == [1, 2, 4] and list(df["runs"]) == [4, 4, 4]
    assert cli(["results", str(out)]) == 0
    assert "12 rows" in capsys.readouterr().out


def test_cli_user_errors_exit_2(tmp_path, capsys):
    assert cli(["sweep", str(tmp_path / "missing.toml")]) == 2
    assert cli(["results", str(tmp_path)]) == 2
    path = write_sweep(tmp_path, SMALL)
    assert cli(["sweep", str(path), "--out", str(tmp_path / "o"), "--jobs", "1"]) == 0
    assert cli(["results", str(tmp_path / "o"), "--sql", "SELECT nope FROM points"]) == 2
    assert "--sql" in capsys.readouterr().err


def test_fluid_and_predict_engines_run_the_same_axes(tmp_path):
    sw = load_sweep(ROOT / "sweeps" / "c-n-buffer.toml", engine="predict")
    run_sweep(sw, tmp_path / "p", progress=False)
    df = Store(tmp_path / "p").frame()
    one = df.groupby("flows.sack.count")["aimd-one"].first()
    assert one[1] == pytest.approx(0.75) and one[10] == pytest.approx(1 - 1 / 31)  # Theorem 1


@pytest.mark.ray
def test_local_and_ray_executors_store_identical_rows(tmp_path):
    pytest.importorskip("ray", reason="Ray is not installed (pip install 'tcplab[ray]')")
    sw = load_sweep(write_sweep(tmp_path, SMALL))
    run_sweep(sw, tmp_path / "local", jobs=2, progress=False)
    ray_out = run_sweep(sw, tmp_path / "ray", executor="ray", jobs=2, progress=False)
    assert ray_out.computed == 12 and ray_out.failed_now == 0
    pd.testing.assert_frame_equal(comparable(Store(tmp_path / "local").frame()),
                                  comparable(Store(tmp_path / "ray").frame()))


def test_two_sweeps_on_one_shared_pool_store_the_rows_of_their_own_pools(tmp_path, monkeypatch):
    """`reproduce` runs several sweeps at once on one pool of --jobs workers: never
    more than jobs points run at a time, and each sweep stores what a pool of its
    own stores."""
    import threading

    from tcplab.sweep import executors

    sw = load_sweep(write_sweep(tmp_path, SMALL))
    run_sweep(sw, tmp_path / "alone", jobs=2, progress=False)
    running, peak, guard = [0], [0], threading.Lock()
    real = executors.run_task

    def counted(task):
        with guard:
            running[0] += 1
            peak[0] = max(peak[0], running[0])
        try:
            time.sleep(0.02)  # long enough for the other sweep's points to be submitted
            return real(task)
        finally:
            with guard:
                running[0] -= 1

    monkeypatch.setattr(executors, "run_task", counted)
    shared = executors.SharedPool(2)
    try:
        threads = [threading.Thread(target=run_sweep, args=(sw, tmp_path / f"s{i}"),
                                    kwargs={"shared": shared, "progress": False}) for i in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        shared.stop()
    assert peak[0] == 2, f"{peak[0]} points at once on a pool of 2"
    want = comparable(Store(tmp_path / "alone").frame())
    for i in range(2):
        pd.testing.assert_frame_equal(comparable(Store(tmp_path / f"s{i}").frame()), want)


def test_a_point_two_sweeps_share_on_a_shared_pool_runs_once_and_both_store_it(tmp_path, monkeypatch):
    """Two sweeps on one shared pool (reproduce's claims at once) that hold the same
    points — the same scenario under another file name and description, or another
    sweep's axis values — run each such point once; each stores every point of its
    own, with the rows it stores when run alone (wall time apart)."""
    import threading
    from collections import Counter

    from tcplab.sweep import executors
    from tcplab.sweep.runner import plan

    first = load_sweep(write_sweep(tmp_path, SMALL, "first"))
    # 2 of 3 counts and 1 of 2 buffers in common: 2 × 1 × 2 replications = 4 shared points
    other = SMALL.replace("[1, 2, 4]", "[1, 2]").replace("[5, 20]", "[20, 40]")
    second = load_sweep(write_sweep(tmp_path, 'description = "another label"\n' + other, "second"))
    run_sweep(first, tmp_path / "alone1", jobs=1, progress=False)
    run_sweep(second, tmp_path / "alone2", jobs=1, progress=False)
    shared_keys = {p.key for p in plan(first)} & {p.key for p in plan(second)}
    assert len(shared_keys) == 4

    runs, guard, real = Counter(), threading.Lock(), executors.run_task

    def counted(task):
        with guard:
            runs[task["key"]] += 1
        time.sleep(0.01)  # so that the sweeps overlap: some shared points are under way when asked for
        return real(task)

    monkeypatch.setattr(executors, "run_task", counted)
    shared = executors.SharedPool(2)
    try:
        threads = [threading.Thread(target=run_sweep, args=(sw, tmp_path / f"s{i}"),
                                    kwargs={"shared": shared, "progress": False})
                   for i, sw in enumerate((first, second))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        # a sweep that comes later still finds them, done
        run_sweep(second, tmp_path / "later", shared=shared, progress=False)
    finally:
        shared.stop()
    assert set(runs.values()) == {1}, "a point was run twice"
    assert len(runs) == 12 + 8 - 4
    assert shared.reused == 4 + 8
    for i in (1, 2):
        want = comparable(Store(tmp_path / f"alone{i}").frame())
        for got in ([f"s{i - 1}", "later"] if i == 2 else ["s0"]):
            pd.testing.assert_frame_equal(comparable(Store(tmp_path / got).frame()), want, obj=got)


def test_a_sweep_on_a_shared_progress_shows_its_failed_points_and_rate(tmp_path):
    """On reproduce's Progress (no columns of the sweep's own) a sweep's bar says how
    many points failed and how fast they go in that Progress's text field, as its
    own bar's columns do."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    from tcplab.sweep import executors

    shown = []

    class Recording(Progress):
        def update(self, task_id, **kw):
            if "claim" in kw:
                shown.append(kw["claim"])
            super().update(task_id, **kw)

    bar = Recording(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                    TextColumn("{task.fields[claim]}"), console=Console(file=io.StringIO()))
    sw = load_sweep(write_sweep(tmp_path, SMALL))
    shared = executors.SharedPool(2)
    try:
        with bar:
            out = run_sweep(sw, tmp_path / "o", shared=shared, bar=bar)
    finally:
        shared.stop()
    assert out.computed == len(shown) > 0
    assert all(t.startswith(f"{out.failed_now} failed · ") and t.endswith(" pt/s") for t in shown), shown
    assert any(t[-6].isdigit() for t in shown), shown  # a rate once points have finished


def test_a_stopped_shared_pool_interrupts_its_sweeps_which_keep_what_they_finished(tmp_path, monkeypatch):
    import threading

    from tcplab.sweep import executors
    from tcplab.sweep.runner import SweepInterrupted

    sw = load_sweep(write_sweep(tmp_path, SMALL))
    real = executors.run_task
    started = threading.Event()

    def slow(task):
        started.set()
        time.sleep(0.3)
        return real(task)

    monkeypatch.setattr(executors, "run_task", slow)
    shared = executors.SharedPool(2)
    caught = []

    def sweep():
        try:
            run_sweep(sw, tmp_path / "o", shared=shared, progress=False, batch=1)
        except BaseException as exc:  # noqa: BLE001 - the test looks at it
            caught.append(exc)

    t = threading.Thread(target=sweep)
    t.start()
    assert started.wait(10)
    time.sleep(0.5)  # a few points done
    t0 = time.perf_counter()
    shared.stop()
    t.join(10)
    assert not t.is_alive() and time.perf_counter() - t0 < 1.0
    assert len(caught) == 1 and isinstance(caught[0], SweepInterrupted), caught
    done = caught[0].outcome.computed
    assert 0 < done < 12
    assert raw_counts(tmp_path / "o") == (done, done), "every point finished is stored, once"
    with pytest.raises(executors.Stopped):
        shared.submit(print)


def test_a_points_resolved_scenario_resolves_to_itself_so_workers_run_it_as_planned(tmp_path):
    """`run_task` hands a point's scenario (resolved by `plan`) to the engine without
    resolving it again: that is only the same run if resolution gives a resolved
    scenario back unchanged, key order included (the engine numbers flows in it)."""
    import json

    from tcplab.scenario import resolve
    from tcplab.sweep.runner import plan

    for p in plan(load_sweep(write_sweep(tmp_path, SMALL))):
        assert json.dumps(resolve(p.scenario)) == json.dumps(p.scenario)
