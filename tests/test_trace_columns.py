"""Trace columns cross from the engine without a copy (`ColumnBuffer`): numpy
views the engine's memory, writable, for as long as the array lives, and the
trace's DataFrame holds those arrays as they are."""

from __future__ import annotations

import ctypes
import gc
import json

import numpy as np
import pytest

from tcplab import _core
from tcplab.scenario import load_scenario


def _run(**kwargs):
    sc = load_scenario("scenarios/a-sine-background.toml", ["duration=150s"])
    sc["trace"] = {"series": ["cwnd", "queue"]}
    return _core.run_scenario(json.dumps(sc), **kwargs)


def test_columns_are_views_the_arrays_keep_alive(tmp_path):
    _, _, traces = _run()
    dtype, buf = traces["tcp"]["t"]
    view = memoryview(buf)
    assert not view.readonly and view.nbytes % 8 == 0
    view.release()
    ctypes.c_char.from_buffer(buf)  # a writable export (raises TypeError if not)
    arrays = {c: np.frombuffer(b, dtype=d) for c, (d, b) in traces["tcp"].items()}
    t = arrays["t"]
    assert t.flags.writeable
    # two views of one column see each other's writes: the same memory, no copy
    again = np.frombuffer(traces["tcp"]["t"][1], dtype="f8")
    first = t[0]
    t[0] = -1.0
    assert again[0] == -1.0
    t[0] = first
    del traces, buf, again
    gc.collect()
    # the same values as the run streamed to files (another path out of the engine)
    _, _, spilled = _run(trace_dir=str(tmp_path), trace_rows=1000)
    cols, parts = spilled["tcp"]
    for name, dtype in cols:
        on_disk = np.concatenate([np.fromfile(tmp_path / f"{stem}.{name}", dtype=dtype) for stem, _ in parts])
        np.testing.assert_array_equal(arrays[name], on_disk)


def test_trace_frames_hold_the_engines_arrays_and_take_writes():
    """`tcplab.run`'s trace tables are the engine's columns, not a consolidated
    copy, and a user can still assign into them."""
    from tcplab.api import _run_packet

    sc = load_scenario("scenarios/a-sine-background.toml", ["duration=150s"])
    sc["trace"] = {"series": ["cwnd", "queue"]}
    res = _run_packet(sc)
    tcp = res.traces["tcp"]
    assert tcp._mgr.nblocks == len(tcp.columns)  # one block a column: nothing was stacked
    expected = tcp["cwnd"].to_numpy().copy()
    tcp.loc[tcp.index[:3], "cwnd"] = 0.0
    tcp["cwnd"] += 1.0
    assert (tcp["cwnd"].to_numpy()[:3] == 1.0).all()
    np.testing.assert_array_equal(tcp["cwnd"].to_numpy()[3:], expected[3:] + 1.0)
    assert tcp.sort_values("t").shape == tcp.shape
