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
