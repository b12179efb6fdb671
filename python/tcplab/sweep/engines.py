"""What a sweep asks of an engine: resolve a point, name a version, run it.

`prepare(engine, scenario)` resolves a point's scenario in the parent process
(so that its key is known before anything runs); `run_task(task)` runs it in a
worker — a thread, a process or a Ray task — and never raises: a failure comes
back as a row with its error. Rows carry flat metrics (`groups.sack.goodput_bps`).
"""

from __future__ import annotations

import functools
import math
import numbers
import time
import traceback

from tcplab.errors import UserError

#: The main metric of each engine (summary table, plot), unless the sweep names one.
DEFAULT_METRIC = {
    "packet": "normalized_throughput",
    "ns2": "normalized_throughput",
    "linux": "normalized_throughput",
    "fluid": "mean_aggregate",
    "predict": "aimd-one",
}

@functools.lru_cache(maxsize=None)
def engine_version(engine: str) -> str:
    """The version that goes into every key of this engine."""
    from tcplab import __version__

    if engine == "packet":
        from tcplab.scenario import _core

        return str(_core().ENGINE_VERSION)
    if engine == "fluid":
        from tcplab.scenario import _core

        return str(_core().AIMD_VERSION)
    if engine == "ns2":
        import shutil

        from tcplab.backends.ns2 import _package_version

        if not shutil.which("ns"):
            raise UserError("engine ns2: ns-2 (`ns`, Debian package ns2) is not installed")
        # the export is tcplab's code, the simulator Debian's: both shape the result
        return f"ns-2 {_package_version() or '?'} / tcplab {__version__}"
    if engine == "predict":
        return f"tcplab {__version__}"
    if engine == "linux":
        import platform

        from tcplab.backends.linux import available

        why = available()
        if why:
            raise UserError(f"engine linux: {why}")
        # the kernel is the TCP under test; the emulator is the engine's link code
        from tcplab.scenario import _core

        return f"Linux {platform.release()} / tcplab-emu {_core().ENGINE_VERSION}"
    raise UserError(f"unknown engine {engine!r}")


def prepare(engine: str, scenario: dict) -> dict:
    """The resolved scenario of a point (every default filled in); UserError if invalid."""
    if engine in ("packet", "ns2", "predict", "linux"):
        from tcplab.scenario import resolve

        return resolve(scenario)
    if engine == "fluid":
        from tcplab.fluid import resolve

        return resolve(scenario)
    raise UserError(f"unknown engine {engine!r}")


def default_seed(engine: str, scenario: dict) -> int:
    return int(prepare(engine, scenario).get("seed", 1))


def flatten(metrics: dict, prefix: str = "") -> dict:
    """Nested metrics → flat columns; lists become JSON text, NaN/inf become None."""
    import json

    out = {}
    for k, v in metrics.items():
        name = f"{prefix}{k}"
        if isinstance(v, dict):
            out.update(flatten(v, f"{name}."))
        elif isinstance(v, (list, tuple)):
            out[name] = json.dumps(v, default=float)
        elif isinstance(v, bool) or v is None or isinstance(v, str):
            out[name] = v
        elif isinstance(v, numbers.Integral):
            out[name] = int(v)
        elif isinstance(v, numbers.Real):
            out[name] = float(v) if math.isfinite(float(v)) else None
        else:
            out[name] = str(v)
    return out


def _metrics(engine: str, scenario: dict) -> dict:
    """The metrics of a point whose scenario `prepare` resolved."""
    if engine in ("packet", "ns2", "linux"):
        from tcplab.api import _run_engine

        # `tcplab.run` without resolving it again: resolution is idempotent (resolving a
        # resolved scenario gives it back, key order too), and cost ~1 ms a point
        return _run_engine(scenario, engine, False).metrics
    if engine == "fluid":
        from tcplab.fluid import fluid

        return fluid(**scenario).metrics
    if engine == "predict":
        from tcplab.models.scenario import predict_scenario

        out = {}
        for p in predict_scenario(scenario):
            if p.applies:
                name = p.model if p.group is None else f"{p.model}.{p.group}"
                out[name] = p.value
        return out
    raise UserError(f"unknown engine {engine!r}")


def run_task(task: dict) -> dict:
    """Run one point: task = {key, engine, scenario}. Returns {key, status, error,
    wall_s, metrics}; never raises (a failure is a row with status "failed")."""
    t0 = time.perf_counter()
    try:
        metrics = flatten(_metrics(task["engine"], task["scenario"]))
        status, error = "ok", None
    except Exception as exc:  # recorded, not raised: one bad point must not stop a sweep
        metrics = {}
        status = "failed"
        if isinstance(exc, UserError):
            error = str(exc)
        else:
            tb = traceback.extract_tb(exc.__traceback__)
            where = f" (at {tb[-1].filename.rsplit('/', 1)[-1]}:{tb[-1].lineno})" if tb else ""
            error = f"{type(exc).__name__}: {exc}{where}"
    return {"key": task["key"], "status": status, "error": error,
            "wall_s": time.perf_counter() - t0, "metrics": metrics}
