"""Engines that live outside tcplab's own Rust core.

Each backend takes a *resolved* scenario dict (every default filled in) and
returns a raw result dict of the same shape as the packet engine's, which
`tcplab.Result` wraps. Backends are imported lazily by name so that a missing
external tool only matters when its backend is used.
"""

from __future__ import annotations

__all__ = ["run_ns2", "export_tcl", "Ns2Error"]


def __getattr__(name):  # PEP 562: lazy re-exports
    if name in __all__:
        from tcplab.backends import ns2

        return getattr(ns2, name)
    raise AttributeError(f"module 'tcplab.backends' has no attribute {name!r}")
