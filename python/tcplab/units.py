"""Unit strings as scenarios write them ("5ms", "1.5Mbps", "0.4Hz"); plain numbers are SI.

Only input a user types, which the engine never sees as such: command-line
options (`tcplab plot --start/--end/--interval`), sweep axes and overrides
(`sweep/spec.py`, `sweep/keys.py` normalize numbers with units), rates a
reproduction writes into its own overrides (`reproduce/alpha_beta/runs.bps`), the
`[linux]` table's own durations (no simulator reads them). Everything else
reads the engine's Plan in SI numbers and nanoseconds (`tcplab.plan`). The
suffixes and their scales are the engine's (`_core.unit_tables`,
`crates/engine/src/time.rs`): no second table of them here.
"""

from __future__ import annotations

import math

from tcplab.errors import UserError


def split_quantity(text: str) -> tuple[str, str] | None:
    """("1.5", "Mbps") from "1.5Mbps": the number's text as written and the unit
    suffix, by the engine's grammar (`_core.split_quantity`, the one grammar of
    unit strings); None when `text` is not a number followed by a suffix."""
    from tcplab.scenario import _core

    return _core().split_quantity(str(text))

def _tables() -> dict[str, dict[str, float]]:
    """The engine's unit suffixes and scales (`_core.unit_tables`, the one table of
    them), durations in seconds."""
    global _TABLES
    if _TABLES is None:
        from tcplab.scenario import _core

        t = dict(_core().unit_tables())
        _TABLES = {
            "duration": {u: k / 1e9 for u, k in t["duration"]},
            "rate": dict(t["rate"]),
            "frequency": dict(t["frequency"]),
            "bytes": dict(t["bytes"]),
        }
    return _TABLES


_TABLES: dict | None = None


def unit_table(kind: str) -> dict[str, float]:
    """Suffix → scale to SI for `kind`: "duration" (s), "rate" (bit/s), "frequency" (Hz), "bytes"."""
    return _tables()[kind]


def _parse(value, kind: str, what: str, example: str, path: str) -> float:
    table = unit_table(kind)
    if isinstance(value, bool):
        raise UserError(f"{path}: expected {what} such as {example}, got {value!r}")
    if isinstance(value, (int, float)):
        try:
            v, unit = float(value), ""
        except OverflowError:  # an int beyond a double
            v, unit = math.inf, ""
    else:
        q = split_quantity(str(value))
        if q is None or q[1] not in table:
            raise UserError(f"{path}: expected {what} such as {example}, got {_short(value)}")
        v, unit = float(q[0]), q[1]
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
    return _parse(value, "duration", "a duration", '"5ms"', path)


def parse_rate(value, path: str = "rate") -> float:
    """Bit/s from "1.5Mbps", "500kbps" or a number of bit/s."""
    return _parse(value, "rate", "a rate", '"1.5Mbps"', path)


def parse_freq(value, path: str = "freq") -> float:
    """Hertz from "0.4Hz" or a number of hertz."""
    return _parse(value, "frequency", "a frequency", '"0.4Hz"', path)


def parse_bytes(value, path: str = "bytes") -> int:
    """Bytes from "125KB" (10³), "64KiB" (2¹⁰), "1MB" or a number of bytes."""
    return round(_parse(value, "bytes", "an amount of data", '"125KB"', path))
