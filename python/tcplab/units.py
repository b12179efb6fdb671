"""Unit strings as scenarios write them ("5ms", "1.5Mbps", "0.4Hz"); plain numbers are SI.

Only input a user types, which the engine never sees as such: command-line
options (`tcplab plot --start/--end/--interval`), sweep axes and overrides
(`sweep/spec.py`, `sweep/keys.py` normalize numbers with units), rates a
reproduction writes into its own overrides (`reproduce/alpha_beta/runs.bps`), the
`[linux]` table's own durations (no simulator reads them), and the ns-2
export (`backends/ns2.py`), which still reads parts of the resolved scenario
that the Plan carries too. Everything else reads the engine's Plan in SI
numbers and nanoseconds (`tcplab.plan`).
"""

from __future__ import annotations

import math
import re

from tcplab.errors import UserError

_NUM = re.compile(r"^\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*([A-Za-zµ/]*)\s*$")

_DURATION = {"": 1.0, "s": 1.0, "sec": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "ns": 1e-9, "min": 60.0, "h": 3600.0}
_RATE = {"": 1.0, "bps": 1.0, "b/s": 1.0, "kbps": 1e3, "Kbps": 1e3, "kb/s": 1e3, "Kb/s": 1e3,
         "Mbps": 1e6, "mbps": 1e6, "Mb/s": 1e6, "Gbps": 1e9, "gbps": 1e9, "Gb/s": 1e9}
_BYTES = {"": 1.0, "B": 1.0, "KB": 1e3, "kB": 1e3, "MB": 1e6, "GB": 1e9, "KiB": 1024.0,
          "MiB": 1024.0**2}
_FREQ = {"": 1.0, "Hz": 1.0, "hz": 1.0, "kHz": 1e3, "khz": 1e3, "mHz": 1e-3}


def _parse(value, table: dict, what: str, example: str, path: str) -> float:
    if isinstance(value, bool):
        raise UserError(f"{path}: expected {what} such as {example}, got {value!r}")
    if isinstance(value, (int, float)):
        try:
            v, unit = float(value), ""
        except OverflowError:  # an int beyond a double
            v, unit = math.inf, ""
    else:
        m = _NUM.match(str(value))
        if not m or m.group(2) not in table:
            raise UserError(f"{path}: expected {what} such as {example}, got {_short(value)}")
        v, unit = float(m.group(1)), m.group(2)
    if v < 0:
        raise UserError(f"{path}: expected a non-negative {what}, got {_short(value)}")
    out = v * table[unit]
    if not math.isfinite(out):  # nan, inf, 1e999, 10**400
        raise UserError(f"{path}: expected a finite {what}, got {_short(value)}")
    return out


def _short(value) -> str:
    """repr(value), cut to 60 characters (a 400-digit number is not a message)."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def parse_duration(value, path: str = "duration") -> float:
    """Seconds from "5ms", "1.5s", "2min" or a number of seconds."""
    return _parse(value, _DURATION, "a duration", '"5ms"', path)


def parse_rate(value, path: str = "rate") -> float:
    """Bit/s from "1.5Mbps", "500kbps" or a number of bit/s."""
    return _parse(value, _RATE, "a rate", '"1.5Mbps"', path)


def parse_freq(value, path: str = "freq") -> float:
    """Hertz from "0.4Hz" or a number of hertz."""
    return _parse(value, _FREQ, "a frequency", '"0.4Hz"', path)


def parse_bytes(value, path: str = "bytes") -> int:
    """Bytes from "125KB" (10³), "64KiB" (2¹⁰), "1MB" or a number of bytes."""
    return round(_parse(value, _BYTES, "an amount of data", '"125KB"', path))
