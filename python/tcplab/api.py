"""`tcplab.run(scenario) -> Result`: one scenario, any engine."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Iterable, Mapping

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
    overrides: Iterable[str] = (),
    trace: Iterable[str] | None = None,
    trace_interval: str | float | None = None,
    force: bool = False,
) -> Result:
    """Run a scenario (a TOML path or a dict) on an engine and return its Result.

    `overrides` are `key.path=value` strings; `trace` names the series to record
    (cwnd, inflight, seq, queue, drops, udp), `trace_interval` samples them at a fixed
    interval instead of at every change. The packet engine refuses a run whose
    estimated work or memory is beyond what the machine can do (the error names
    the key that costs most); `force=True` runs it anyway.
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
    sc = load_scenario(scenario, list(overrides) + extra)
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
    raise UserError(f"--engine: unknown engine {engine!r}; expected one of {', '.join(ENGINES)}")


def _run_packet(sc: dict, force: bool = False) -> Result:
    from tcplab.scenario import _core

    t0 = time.perf_counter()
    try:
        resolved, summary, traces = _core().run_scenario(json.dumps(sc), force=force)
    except ValueError as exc:
        raise UserError(f"scenario: {exc}") from None
    wall = time.perf_counter() - t0
    raw = dict(summary, flows=_arrays(summary["flows"]), links=_arrays(summary["links"]))
    raw["scenario"] = json.loads(resolved)
    raw["traces"] = {name: pd.DataFrame(_arrays(cols)) for name, cols in traces.items()}
    return Result.from_raw(raw, wall_s=wall)


def _arrays(cols: dict) -> dict:
    """The engine's columns ({name: (dtype, little-endian bytes) or [str]}) as
    numpy arrays and lists."""
    return {c: np.frombuffer(v[1], dtype=v[0]) if isinstance(v, tuple) else v for c, v in cols.items()}
