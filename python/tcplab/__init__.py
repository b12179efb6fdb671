"""tcplab: what throughput will TCP get on this path, and why?

The compiled engine (`tcplab._core`) is imported lazily, so the pure-Python
parts (closed-form models, scenario loading) work without it.
"""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__", "run", "load_scenario", "fluid", "Result", "UserError", "build"]


def __dir__():  # dir(tcplab) lists the lazy names too
    return sorted(set(globals()) | set(__all__))


def __getattr__(name):  # PEP 562: lazy re-exports
    if name == "run":
        from tcplab.api import run

        return run
    if name == "load_scenario":
        from tcplab.scenario import load_scenario

        return load_scenario
    if name == "fluid":
        from tcplab.fluid import fluid

        return fluid
    if name == "Result":
        from tcplab.result import Result

        return Result
    if name == "UserError":
        from tcplab.errors import UserError

        return UserError
    if name == "build":
        from tcplab.provenance import build

        return build
    raise AttributeError(f"module 'tcplab' has no attribute {name!r}")
