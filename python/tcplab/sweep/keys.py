"""The key of a point: a hash of (resolved scenario, engine, engine version, build).

The scenario is first put in a canonical form, so that the same scenario written
differently gets the same key:

- table order and TOML style (inline tables, sections, dotted keys) do not matter:
  keys are sorted;
- defaults written out or left to the engine: the scenario is resolved first;
- `1` and `1.0` are the same number; unit strings become SI numbers, exactly
  (`"50ms"` = `"0.05s"` = `0.05`; `"10Mbps"` = `"10000kbps"`);
- the top-level `name` and `description` are labels, not inputs: left out.

Any other change (a parameter, the seed, the engine or its version) changes the key,
and so does any change of the code: the build (`tcplab.provenance.build()`: the
tcplab version, the engine build id baked at build time, the hash of the
result-shaping Python sources) is part of it. A cache can then miss after a
`git pull`, never return what older code computed.
"""

from __future__ import annotations

import hashlib
import json
from decimal import Decimal, InvalidOperation

from tcplab.sweep.spec import UNIT_KINDS
from tcplab.units import split_quantity, unit_table

LABELS = ("name", "description")


def _number(d: Decimal):
    d = d.normalize()
    if d == d.to_integral_value():
        return int(d)
    return float(d)


def _unit_value(text: str):
    q = split_quantity(text)
    if not q or not q[1]:
        return None
    for kind in UNIT_KINDS:
        table = unit_table(kind)
        if q[1] in table:
            try:
                return _number(Decimal(q[0]) * Decimal(str(table[q[1]])))
            except InvalidOperation:  # pragma: no cover - the engine admits only numbers
                return None
    return None


def canonical(value, top: bool = True):
    """The canonical form of a scenario value (see the module doc)."""
    if isinstance(value, dict):
        return {str(k): canonical(v, False) for k, v in sorted(value.items())
                if not (top and k in LABELS)}
    if isinstance(value, (list, tuple)):
        return [canonical(v, False) for v in value]
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            return repr(value)
        return _number(Decimal(repr(value)))
    if isinstance(value, str):
        v = _unit_value(value)
        return value if v is None else v
    return str(value)


def canonical_json(scenario: dict) -> str:
    return json.dumps(canonical(scenario), sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def point_key(scenario: dict, engine: str, engine_version: str, build: str | None = None) -> str:
    """16 hex digits of SHA-256 over the canonical scenario, the engine, its version
    and the build (default: this installation's, `tcplab.provenance.build()`)."""
    if build is None:
        from tcplab.provenance import build as current

        build = current()
    text = json.dumps({"scenario": canonical(scenario), "engine": engine, "engine_version": engine_version,
                       "build": build},
                      sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()[:16]
