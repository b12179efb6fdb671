"""Trace columns cross from the engine without a copy (`ColumnBuffer`): numpy
views the engine's memory, read-only, for as long as the array lives."""

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
    assert view.readonly and view.nbytes % 8 == 0
    view.release()
    with pytest.raises(TypeError, match="not writable"):
        ctypes.c_char.from_buffer(buf)  # wants a writable buffer
    arrays = {c: np.frombuffer(b, dtype=d) for c, (d, b) in traces["tcp"].items()}
    t = arrays["t"]
    assert not t.flags.writeable
    with pytest.raises(ValueError):
        t[0] = 1.0
    del traces, buf
    gc.collect()
    # the same values as the run streamed to files (another path out of the engine)
    _, _, spilled = _run(trace_dir=str(tmp_path), trace_rows=1000)
    cols, parts = spilled["tcp"]
    for name, dtype in cols:
        on_disk = np.concatenate([np.fromfile(tmp_path / f"{stem}.{name}", dtype=dtype) for stem, _ in parts])
        np.testing.assert_array_equal(arrays[name], on_disk)
