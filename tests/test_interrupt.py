"""Ctrl-C stops a packet-engine run at once: the engine runs with the GIL
released and polls for Python's pending signals every few ms of work."""

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import tcplab

ROOT = Path(__file__).resolve().parent.parent

# 100 flows at 100 Mb/s for 2000 s: minutes of work, far longer than the tests wait
LONG = ["--set", "duration=2000s", "--set", "flows.tcp.count=100",
        "--set", "topology.bottleneck.rate=100Mbps", "--set", "topology.access.rate=1Gbps",
        "--set", "topology.sink_access.rate=1Gbps"]


def _signal(p, sig, timeout):
    """Send `sig` to the child `p` and wait for it to exit: (exit code, seconds it took)."""
    t0 = time.perf_counter()
    p.send_signal(sig)
    rc = p.wait(timeout=timeout)
    return rc, time.perf_counter() - t0


@contextlib.contextmanager
def _reaped(p):
    """Whatever the test asserts, the child does not outlive it."""
    try:
        yield p
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()


def _until_a_sweep_part_is_stored(p, cache):
    deadline = time.monotonic() + 120
    while not list(cache.glob("reproduce/sweeps/*/*/store/part-*.parquet")):
        assert p.poll() is None, f"ended before its sweep stored a part: {p.communicate()}"
        assert time.monotonic() < deadline, "no part stored in 120 s"
        time.sleep(0.02)


def test_sigint_interrupts_the_engine_within_a_second():
    fired = []

    def interrupt():
        fired.append(time.perf_counter())
        os.kill(os.getpid(), signal.SIGINT)

    timer = threading.Timer(1.0, interrupt)
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            tcplab.run(ROOT / "scenarios" / "b-dumbbell.toml", overrides=[s for s in LONG if s != "--set"])
        stopped = time.perf_counter()
    finally:
        timer.cancel()
    assert fired, "the run ended before it was interrupted: make it longer"
    # the engine polls every 2^15 events, a few ms of work
    assert stopped - fired[0] < 0.5, f"took {stopped - fired[0]:.2f} s to stop"


def test_cancel_runs_stops_a_run_on_a_worker_thread_and_not_the_next_one():
    """Signal handlers run in the main thread only: a run on a worker thread (a
    sweep's point, reproduce's shared pool) stops on Ctrl-C because what stops calls
    `cancel_runs`; a run started after it is not affected."""
    from tcplab.scenario import _core
    from tcplab.sweep.executors import SharedPool

    pool = SharedPool(1)
    started = time.perf_counter()
    fut = pool.executor.submit(tcplab.run, ROOT / "scenarios" / "b-dumbbell.toml",
                               overrides=[s for s in LONG if s != "--set"])
    time.sleep(1.0)
    assert not fut.done(), "the run ended before it was stopped: make it longer"
    fired = time.perf_counter()
    pool.stop()
    with pytest.raises(KeyboardInterrupt, match="cancelled"):
        fut.result(timeout=30)
    stopped = time.perf_counter()
    assert stopped - fired < 0.5, f"took {stopped - fired:.2f} s to stop ({stopped - started:.1f} s in all)"
    # a run after the cancel goes to its end
    res = tcplab.run(ROOT / "scenarios" / "b-dumbbell.toml", overrides={"duration": "30s", "warmup": "5s"})
    assert res.metrics["normalized_throughput"] > 0
    _core().cancel_runs()  # with nothing in flight: nothing to stop, and no error


# the child imports everything before it says it is ready, so that the signal
# finds it in the engine, not in an import
CHILD = """
import sys
from tcplab.cli import build_parser, main
import tcplab.api, tcplab.result
build_parser()
print("ready", flush=True)
sys.exit(main(sys.argv[1:]))
"""


def test_tcplab_run_exits_130_on_sigint_and_writes_nothing(tmp_path):
    out = tmp_path / "out"
    p = subprocess.Popen([sys.executable, "-c", CHILD, "run", str(ROOT / "scenarios" / "b-dumbbell.toml"),
                          *LONG, "--out", str(out)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    with _reaped(p):
        assert p.stdout.readline().strip() == "ready"
        time.sleep(2.0)  # parsed, resolved and well into the run
        assert p.poll() is None, "the run ended before it was interrupted"
        rc, waited = _signal(p, signal.SIGINT, 10)
    assert rc == 130, p.stderr.read()
    # the engine stops within ms (test above); the rest is the interpreter's
    # exit (numpy, pandas, pyarrow), over 1 s on a loaded 2-core machine
    assert waited < 2.0, f"took {waited:.2f} s to exit"
    assert "interrupted" in p.stderr.read()
    assert not out.exists()


@pytest.mark.parametrize("sig, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)], ids=["SIGINT", "SIGTERM"])
def test_reproduce_stopped_in_its_sweep_writes_no_verdict_and_resumes(tmp_path, sig, code):
    """Interruption is not completion: stopped after its sweep stored a part, reproduce
    exits 130/143 and writes no claims.json from the points done so far; the same
    command then resumes from what was stored."""
    out, cache = tmp_path / "rep", tmp_path / "cache"
    cmd = [sys.executable, "-m", "tcplab.cli", "reproduce", "C", "--claims", "C6", "--quick", "--out", str(out),
           "--cache", str(cache)]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    with _reaped(p):
        _until_a_sweep_part_is_stored(p, cache)
        rc, _ = _signal(p, sig, 60)
    err = p.stderr.read()
    assert rc == code, err[-2000:]
    assert "interrupted" in err and "Traceback" not in err, err[-2000:]
    assert not (out / "parallel-aimd" / "claims.json").exists(), "no verdict from partial data"
    assert not (out / "parallel-aimd" / "index.html").exists() and not (out / "index.html").exists()
    stored = list(cache.glob("reproduce/sweeps/*/*/store/part-*.parquet"))
    assert stored, "what was computed is kept"
    again = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp_path, timeout=600)
    assert again.returncode == 0, again.stderr[-2000:]
    assert "already stored" in again.stderr, "resumed from the stored points"
    claims = json.loads((out / "parallel-aimd" / "claims.json").read_text())
    assert [c["id"] for c in claims] == ["C6"]


def test_tcplab_run_exits_143_on_sigterm_and_writes_nothing(tmp_path):
    out = tmp_path / "out"
    p = subprocess.Popen([sys.executable, "-c", CHILD, "run", str(ROOT / "scenarios" / "b-dumbbell.toml"),
                          *LONG, "--trace", "cwnd", "--force", "--out", str(out)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    with _reaped(p):
        assert p.stdout.readline().strip() == "ready"
        time.sleep(2.0)
        assert p.poll() is None, "the run ended before it was stopped"
        rc, _ = _signal(p, signal.SIGTERM, 10)
    err = p.stderr.read()
    assert rc == 143, err
    assert "interrupted (SIGTERM)" in err and "Traceback" not in err
    assert sorted(os.listdir(tmp_path)) == [], "neither the output nor its temporary folder (nor the streamed traces)"


def test_reproduce_of_several_papers_at_once_stops_promptly_leaving_no_temporary_file(tmp_path):
    """Claims of two papers run concurrently on two workers: Ctrl-C stops both claims
    (the engine's runs in flight are cancelled), writes no verdict and leaves no temporary file."""
    out, cache = tmp_path / "rep", tmp_path / "cache"
    cmd = [sys.executable, "-m", "tcplab.cli", "reproduce", "all", "--claims", "B1,C6", "--quick", "--jobs", "2",
           "--out", str(out), "--cache", str(cache)]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    with _reaped(p):
        _until_a_sweep_part_is_stored(p, cache)
        rc, waited = _signal(p, signal.SIGINT, 60)
    err = p.stderr.read()
    assert rc == 130, err[-2000:]
    assert "interrupted" in err and "Traceback" not in err, err[-2000:]
    # the runs in flight are cancelled (`cancel_runs`); the rest is the interpreter's exit
    assert waited < 10, f"took {waited:.1f} s to stop"
    assert not list(out.glob("*/claims.json")) and not (out / "index.html").exists()
    left = [p for p in [*out.rglob("*"), *cache.rglob("*")] if ".tmp" in p.name]
    assert not left, left
