"""Traces streamed to disk as the run goes (`tcplab run --out`, `tcplab.run(..., out=)`):
the files written are those of the in-memory path, and nothing is left behind
when the run fails or is interrupted."""

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest

import tcplab
from tcplab import api, tracefiles

ROOT = Path(__file__).resolve().parent.parent
SERIES = ["cwnd", "inflight", "seq", "queue", "drops", "udp", "rtt"]
# 4 TCP flows and a sine UDP background on 10 Mb/s links for 40 s: ~1.5 M events
# (the engine writes at every 2^15 events), drops, and queue rows on several links
SMALL = {"flows.tcp.count": 4, "duration": "40s", "warmup": "5s",
         "topology.bottleneck.rate": "10Mbps", "topology.access.rate": "10Mbps",
         "topology.sink_access.rate": "10Mbps",
         "flows.background.rate.mean": "4Mbps", "flows.background.rate.amplitude": "4Mbps"}
SCENARIO = ROOT / "scenarios" / "a-sine-background.toml"


def leftovers(parent: Path) -> list[str]:
    return sorted(p.name for p in parent.iterdir() if ".tcplab-tmp-" in p.name)


@pytest.fixture
def small_chunks(monkeypatch):
    """The engine writes a table once it holds 500 rows; Parquet row groups of 3000."""
    monkeypatch.setattr(tracefiles, "SPILL_ROWS", 500)
    monkeypatch.setattr(tracefiles, "CHUNK_ROWS", 3000)


def test_streamed_output_is_the_in_memory_output(tmp_path, small_chunks, monkeypatch):
    spilled = []
    real = tracefiles.SpilledTrace.__init__

    def seen(self, folder, columns, parts):  # what the engine wrote, as it came back
        real(self, folder, columns, parts)
        spilled.append(self.parts)

    monkeypatch.setattr(tracefiles.SpilledTrace, "__init__", seen)
    mem = tcplab.run(SCENARIO, overrides=SMALL, trace=SERIES)
    assert not spilled
    mem.save(tmp_path / "old")  # the in-memory path: whole DataFrames written at the end
    res = tcplab.run(SCENARIO, overrides=SMALL, trace=SERIES, out=tmp_path / "new")
    assert len(spilled) == 6  # every table but the playback reads (none here)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["new", "old"]
    assert res.metrics == mem.metrics
    old, new = (json.loads((tmp_path / d / "summary.json").read_text()) for d in ("old", "new"))
    for key in ("scenario", "metrics", "flows", "links", "traces"):
        assert old[key] == new[key], key
    assert old["meta"]["units"] == new["meta"]["units"]
    for name in ("flows.csv", "links.csv"):
        assert (tmp_path / "old" / name).read_bytes() == (tmp_path / "new" / name).read_bytes()
    assert sorted(os.listdir(tmp_path / "new")) == sorted(os.listdir(tmp_path / "old"))
    assert sorted(os.listdir(tmp_path / "new" / "traces")) == sorted(os.listdir(tmp_path / "old" / "traces"))
    for name in mem.traces:
        a = pq.read_table(tmp_path / "old" / "traces" / f"{name}.parquet")
        b = pq.read_table(tmp_path / "new" / "traces" / f"{name}.parquet")
        assert b.schema.equals(a.schema, check_metadata=False), name
        assert a.schema.metadata[b"pandas"] == b.schema.metadata[b"pandas"], name
        ma, mb = (json.loads(t.schema.metadata[b"tcplab"]) for t in (a, b))
        assert (ma["table"], ma["units"]) == (mb["table"], mb["units"]) == (name, ma["units"])
        pd.testing.assert_frame_equal(a.to_pandas(), b.to_pandas(), check_exact=True)
        pd.testing.assert_frame_equal(mem.traces[name], b.to_pandas(), check_exact=True)
        assert len(mem.traces[name]) > 0, name
        # copied in chunks of 3000 rows (across the queue's links): one row group each
        groups = pq.ParquetFile(tmp_path / "new" / "traces" / f"{name}.parquet").num_row_groups
        assert groups == -(-len(mem.traces[name]) // 3000), name
        csv_a = (tmp_path / "old" / "traces" / f"{name}.csv").read_bytes()
        assert csv_a == (tmp_path / "new" / "traces" / f"{name}.csv").read_bytes(), name
        # the result reads its traces back from the output folder
        pd.testing.assert_frame_equal(res.traces[name], mem.traces[name], check_exact=True)
    queue = [parts for parts in spilled if parts[0][0].startswith("queue.")]
    assert len(queue[0]) >= 3, "queue rows of several links, one part each"
    assert isinstance(res.traces, tracefiles.TraceFiles)


def test_spilled_trace_reads_back_whole_and_in_chunks(tmp_path, small_chunks):
    spill = tmp_path / "spill"
    res = api._run_packet(tcplab.load_scenario(SCENARIO, [(k.split("."), v) for k, v in SMALL.items()]
                                               + [(["trace", "series"], SERIES)]), trace_dir=spill)
    mem = tcplab.run(SCENARIO, overrides=SMALL, trace=SERIES)
    for name, t in res.traces.items():
        assert isinstance(t, tracefiles.SpilledTrace)
        assert t.columns == list(mem.traces[name].columns)
        whole = t.to_frame()
        pd.testing.assert_frame_equal(whole, mem.traces[name], check_exact=True)
        chunks = list(t.frames(777))
        assert [len(c) for c in chunks[:-1]] == [777] * (len(chunks) - 1), name
        assert 0 < len(chunks[-1]) <= 777 and len(chunks) == -(-len(whole) // 777), name
        pd.testing.assert_frame_equal(pd.concat(chunks, ignore_index=True), whole, check_exact=True)


@pytest.mark.parametrize("error", [RuntimeError, KeyboardInterrupt])
def test_an_error_while_writing_leaves_nothing(tmp_path, small_chunks, monkeypatch, error):
    """The raw trace files live in the output's temporary folder: an error or
    Ctrl-C after the run (while the files are copied) removes them with it."""
    seen = []

    def fail(self, folder, formats=("parquet", "csv")):
        seen.append(sorted(os.listdir(folder / api.SPILL_FOLDER)))
        raise error("stop")

    monkeypatch.setattr(tcplab.Result, "write_into", fail)
    with pytest.raises(error):
        tcplab.run(SCENARIO, overrides=SMALL, trace=SERIES, out=tmp_path / "o")
    assert "tcp.cwnd" in seen[0] and "queue.0.t" in seen[0]  # the engine had written its files
    assert os.listdir(tmp_path) == []


def test_a_failure_to_write_the_traces_is_an_oserror_and_leaves_nothing(tmp_path, small_chunks, monkeypatch):
    real = api._run_packet

    def blocked(sc, force=False, trace_dir=None):
        trace_dir.write_text("a file where the engine makes its folder")
        return real(sc, force=force, trace_dir=trace_dir)

    monkeypatch.setattr(api, "_run_packet", blocked)
    with pytest.raises(OSError, match="writing the traces"):
        tcplab.run(SCENARIO, overrides=SMALL, trace=SERIES, out=tmp_path / "o")
    assert os.listdir(tmp_path) == []


def test_ctrl_c_during_a_streaming_run_leaves_nothing(tmp_path):
    """SIGINT while the engine streams traces: KeyboardInterrupt within a
    second, and neither the output nor its temporary folder remains. (The run
    is one whose trace rows would not fit in memory: refused in memory, run
    when streamed.)"""
    long = {"duration": "2000s", "flows.tcp.count": 20, "topology.bottleneck.rate": "100Mbps",
            "topology.access.rate": "1Gbps", "topology.sink_access.rate": "1Gbps"}
    with pytest.raises(tcplab.UserError, match="trace.series: .* of memory"):
        tcplab.run(ROOT / "scenarios" / "b-dumbbell.toml", overrides=long, trace=SERIES)
    fired = []

    def interrupt():
        fired.append(time.perf_counter())
        os.kill(os.getpid(), signal.SIGINT)

    timer = threading.Timer(1.5, interrupt)
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            tcplab.run(ROOT / "scenarios" / "b-dumbbell.toml", overrides=long, trace=SERIES,
                       out=tmp_path / "o")
        stopped = time.perf_counter()
    finally:
        timer.cancel()
    assert fired, "the run ended before it was interrupted: make it longer"
    assert stopped - fired[0] < 1.0
    assert os.listdir(tmp_path) == []


def test_a_killed_streaming_run_is_cleaned_by_the_next(tmp_path):
    """SIGKILL during `tcplab run --out` leaves the temporary folder with the
    raw trace files (nothing can remove them then); the next run into the same
    folder removes it."""
    out = tmp_path / "o"
    args = [sys.executable, "-c", "import sys; from tcplab.cli import main; sys.exit(main(sys.argv[1:]))", "run", str(ROOT / "scenarios" / "b-dumbbell.toml"),
            "--set", "duration=2000s", "--set", "flows.tcp.count=20",
            "--trace", ",".join(SERIES), "--out", str(out)]
    p = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            tmp = leftovers(tmp_path)
            if tmp and any((tmp_path / tmp[0] / api.SPILL_FOLDER).glob("tcp.*")):
                break
            time.sleep(0.1)
        else:
            pytest.fail("the run wrote no trace files")
    finally:
        p.kill()
        p.wait()
    assert len(leftovers(tmp_path)) == 1 and not out.exists()
    tcplab.run(SCENARIO, overrides=SMALL, out=out)
    assert sorted(x.name for x in tmp_path.iterdir()) == ["o"]


@pytest.mark.slow
def test_memory_is_flat_in_the_duration(tmp_path):
    """Max RSS of `tcplab run --out` with every trace on: 20x the duration,
    about the same memory, where the traces held in memory grow by over 100 MB
    (bench/NOTES.md has the 1000 s, 100-flow measurement)."""
    def peak(duration: str, out: bool) -> int:
        # the peak of the child's own memory (VmHWM; ru_maxrss would count the forked
        # copy of this test process, before the exec)
        code = ("import re, sys; from tcplab.cli import main; rc = main(sys.argv[1:]); "
                "print(re.search(r'VmHWM:\\s*(\\d+)', open('/proc/self/status').read())[1], file=sys.stderr); "
                "sys.exit(rc)")
        where = ["--out", str(tmp_path / duration)] if out else []
        r = subprocess.run([sys.executable, "-c", code, "run", str(ROOT / "scenarios" / "b-dumbbell.toml"),
                            "--set", f"duration={duration}", "--set", "flows.tcp.count=20", "--json",
                            "--trace", ",".join(SERIES[:-1]), *where],
                           capture_output=True, text=True, cwd=ROOT, check=True)
        return int(r.stderr.strip().splitlines()[-1]) * 1024

    short, long = peak("20s", True), peak("400s", True)
    held = peak("400s", False)  # the same run, its traces in memory
    print(f"max RSS: {short / 1e6:.0f} MB for 20 s, {long / 1e6:.0f} MB for 400 s; "
          f"{held / 1e6:.0f} MB for 400 s held in memory")
    assert held > short + 100e6, "the in-memory run should grow: make the runs longer"
    assert long < short + 30e6, (short, long)


def test_an_empty_trace_is_written_as_in_memory(tmp_path, small_chunks):
    """No UDP flow: the `udp` table is empty, with its columns and dtypes."""
    over = {"duration": "5s", "warmup": "1s", "flows.tcp.count": 2}
    dumbbell = ROOT / "scenarios" / "b-dumbbell.toml"
    tcplab.run(dumbbell, overrides=over, trace=["udp", "drops"]).save(tmp_path / "old")
    tcplab.run(dumbbell, overrides=over, trace=["udp", "drops"], out=tmp_path / "new")
    for name in ("udp", "drops"):
        a, b = (pq.read_table(tmp_path / d / "traces" / f"{name}.parquet") for d in ("old", "new"))
        assert a.num_rows == 0 if name == "udp" else a.num_rows > 0
        assert b.schema.equals(a.schema, check_metadata=False)
        assert a.schema.metadata[b"pandas"] == b.schema.metadata[b"pandas"]
        pd.testing.assert_frame_equal(a.to_pandas(), b.to_pandas(), check_exact=True)
        csv = [(tmp_path / d / "traces" / f"{name}.csv").read_bytes() for d in ("old", "new")]
        assert csv[0] == csv[1]
