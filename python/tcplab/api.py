"""`tcplab.run(scenario) -> Result`: one scenario, any engine."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any, Iterable, Mapping

import numpy as np
import pandas as pd

from tcplab.errors import UserError
from tcplab.result import Result
from tcplab.scenario import load_scenario

__all__ = ["run", "ENGINES", "TRACE_SERIES"]

ENGINES = ("packet", "ns2", "linux")
TRACE_SERIES = ("cwnd", "inflight", "seq", "queue", "drops", "udp", "rtt")


def run(
    scenario: str | Path | Mapping,
    *,
    engine: str = "packet",
    overrides: Mapping[str, Any] | Iterable[str] | None = (),
    trace: Iterable[str] | None = None,
    trace_interval: str | float | None = None,
    force: bool = False,
    out: str | Path | None = None,
) -> Result:
    """Run a scenario (a TOML path or a dict) on an engine and return its Result.

    `overrides` is a dict `{"key.path": value}` (values as Python values:
    `{"flows.sack.count": 5, "topology.bottleneck.delay": "50ms"}`) or a list of
    `"key.path=value"` strings as the CLI's `--set` takes them (values read as TOML);
    a wrong shape is a TypeError, a malformed entry a ValueError (`UserError`), both naming it.
    `trace` names the series to record
    (cwnd, inflight, seq, queue, drops, udp), `trace_interval` samples them at a fixed
    interval instead of at every change. The packet engine refuses a run whose
    estimated work or memory is beyond what the machine can do (the error names
    the key that costs most); `force=True` runs it anyway.

    `out` writes the result into that folder as `Result.save` does (whole or
    not at all, `tcplab.outdir`), and the packet engine then streams the traces
    to disk as the run goes, so that the run's memory does not grow with its
    duration (`tcplab.tracefiles`); the returned Result reads its traces from
    `out/traces/*.parquet` when they are first used.
    """
    extra = []
    if trace:
        series = [s.strip() for s in trace if s.strip()]
        bad = [s for s in series if s not in TRACE_SERIES]
        if bad:
            raise UserError(f"--trace: unknown series {', '.join(bad)}; expected some of {', '.join(TRACE_SERIES)}")
        extra.append((["trace", "series"], series))
    if trace_interval is not None:
        extra.append((["trace", "interval"], trace_interval))
    sc = load_scenario(scenario, override_list(overrides) + extra)
    if engine not in ENGINES:
        raise UserError(f"--engine: unknown engine {engine!r}; expected one of {', '.join(ENGINES)}")
    if out is not None:
        return _run_into(sc, engine, force, out)
    return _run_engine(sc, engine, force)


# The folder inside an output's temporary folder that the packet engine streams
# traces into; removed before the output is complete.
SPILL_FOLDER = ".traces-spill"


def _run_into(sc: dict, engine: str, force: bool, out: str | Path) -> Result:
    """Run and write the result into `out` (`tcplab.outdir.write_output_dir`):
    the packet engine's traces go to raw files in the temporary output folder
    as the run goes and are copied into Parquet and CSV from there; they are
    removed with it whatever happens (error, Ctrl-C)."""
    import shutil

    from tcplab.outdir import write_output_dir
    from tcplab.tracefiles import TraceFiles

    done = {}

    def write(tmp: Path) -> None:
        if engine == "packet":
            spill = tmp / SPILL_FOLDER
            try:
                res = _run_packet(sc, force=force, trace_dir=spill)
                res.write_into(tmp)
            finally:
                shutil.rmtree(spill, ignore_errors=True)
        else:
            res = _run_engine(sc, engine, force)
            res.write_into(tmp)
        done["result"] = res

    final = write_output_dir(out, write)
    res = done["result"]
    if res.traces:
        names = list(res.traces)
        res.traces = TraceFiles(final / "traces", names, {n: res.trace_columns(n) for n in names})
    return res


def _run_engine(sc: dict, engine: str, force: bool) -> Result:
    if engine == "packet":
        return _run_packet(sc, force=force)
    if engine == "ns2":
        from tcplab.backends.ns2 import run_ns2

        t0 = time.perf_counter()
        raw = run_ns2(sc)
        return Result.from_raw(raw, wall_s=time.perf_counter() - t0)
    if engine == "linux":
        from tcplab.backends.linux import run_linux

        t0 = time.perf_counter()
        raw = run_linux(sc)
        res = Result.from_raw(raw, wall_s=time.perf_counter() - t0)
        # how the kernel was configured and how exactly the emulator kept time
        res.metrics["linux"] = raw["linux"]
        return res
    raise AssertionError(engine)


def override_list(overrides) -> list:
    """`overrides` (a dict, a list of "key.path=value" strings, or None) as the list
    `apply_overrides` takes; TypeError (wrong shape) or UserError, a ValueError
    (a malformed entry), naming what is wrong."""
    if overrides is None:
        return []
    if isinstance(overrides, (str, bytes)):
        raise TypeError(f"overrides: expected a dict {{'key.path': value}} or a list of 'key.path=value' "
                        f"strings, got the string {overrides!r}; write [{overrides!r}]")
    if isinstance(overrides, Mapping):
        out = []
        for key, value in overrides.items():
            if not isinstance(key, str):
                raise TypeError(f"overrides: a key must be a dotted path string such as 'flows.tcp.count', "
                                f"got {key!r} ({type(key).__name__})")
            if not key or any(not part for part in key.split(".")):
                raise UserError(f"overrides[{key!r}]: the key path is empty or has an empty part")
            out.append((key.split("."), value))
        return out
    if not isinstance(overrides, Iterable):
        raise TypeError(f"overrides: expected a dict or a list of 'key.path=value' strings, "
                        f"got {type(overrides).__name__}")
    out = []
    for item in overrides:
        if isinstance(item, tuple) and len(item) == 2:
            out.append(item)  # (path, value), as tcplab's own callers pass them
            continue
        if not isinstance(item, str):
            raise TypeError(f"overrides: each item must be a 'key.path=value' string, got {item!r} "
                            f"({type(item).__name__}); for Python values pass a dict")
        key = item.split("=", 1)[0].strip()
        if "=" not in item:
            raise UserError(f"overrides: {item!r} is not 'key.path=value' (e.g. 'flows.tcp.variant=newreno')")
        if not key or any(not part for part in key.split(".")):
            raise UserError(f"overrides: {item!r}: the key path {key!r} is empty or has an empty part")
        out.append(item)
    return out


def _run_packet(sc: dict, force: bool = False, trace_dir: Path | None = None) -> Result:
    """Run on the packet engine; with `trace_dir` (a folder the caller
    removes), the traces are streamed there and come back as
    `tcplab.tracefiles.SpilledTrace` (playback reads stay DataFrames)."""
    from tcplab import tracefiles
    from tcplab.scenario import _core

    t0 = time.perf_counter()
    try:
        if trace_dir is None:
            resolved, summary, traces = _core().run_scenario(json.dumps(sc), force=force)
        else:
            resolved, summary, traces = _core().run_scenario(
                json.dumps(sc), force=force, trace_dir=str(trace_dir), trace_rows=tracefiles.SPILL_ROWS)
    except ValueError as exc:
        raise UserError(f"scenario: {exc}") from None
    wall = time.perf_counter() - t0
    raw = dict(summary, flows=_arrays(summary["flows"]), links=_arrays(summary["links"]))
    raw["scenario"] = json.loads(resolved)
    raw["traces"] = {name: tracefiles.SpilledTrace(trace_dir, *cols) if isinstance(cols, tuple)
                     else _trace_frame(cols) for name, cols in traces.items()}
    return Result.from_raw(raw, wall_s=wall)


def _trace_frame(cols: dict) -> pd.DataFrame:
    """A trace table from the engine's columns, over the engine's own memory:
    each column a writable array (`_core.ColumnBuffer`), one block each, not
    consolidated into one block (a copy of every value, which on a long per-ack
    trace cost more CPU than the run itself). A column given as read-only bytes
    (a big-endian machine) is copied, so that the frame can be written to."""
    arrays = {c: a.copy() if isinstance(a, np.ndarray) and not a.flags.writeable else a
              for c, a in _arrays(cols).items()}
    return pd.DataFrame(arrays, copy=False)


def _arrays(cols: dict) -> dict:
    """The engine's columns ({name: (dtype, little-endian bytes) or [str]}) as
    numpy arrays and lists."""
    return {c: np.frombuffer(v[1], dtype=v[0]) if isinstance(v, tuple) else v for c, v in cols.items()}
