"""Write a scenario dict back as TOML text (the lab's TOML pane).

Scenarios are tables of strings, numbers, booleans, arrays of those, inline
tables and arrays of tables; `dumps` writes each table as a `[section]` (an
array of tables as `[[section]]`) and round-trips through `tomllib.loads`
(tests/test_lab.py checks it on every example scenario). Comments of the
text a scenario was read from are not kept.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any, Mapping

_BARE = re.compile(r"^[A-Za-z0-9_-]+$")


def _key(k: str) -> str:
    return k if _BARE.match(k) else json.dumps(k, ensure_ascii=False)


def _value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, Mapping):
        return "{ " + ", ".join(f"{_key(k)} = {_value(x)}" for k, x in v.items()) + " }"
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_value(x) for x in v) + "]"
    raise TypeError(f"cannot write {type(v).__name__} as TOML")


def _is_table_array(v: Any) -> bool:
    return isinstance(v, list) and bool(v) and all(isinstance(x, Mapping) for x in v)


def dumps(doc: Mapping) -> str:
    """`doc` as TOML text."""
    out: list[str] = []
    _table(doc, [], out)
    return "\n".join(out).strip() + "\n"


def _table(table: Mapping, path: list[str], out: list[str]) -> None:
    scalars = [(k, v) for k, v in table.items() if not isinstance(v, Mapping) and not _is_table_array(v)]
    for k, v in scalars:
        out.append(f"{_key(k)} = {_value(v)}")
    for k, v in table.items():
        sub = path + [_key(k)]
        if isinstance(v, Mapping):
            # a table that holds only tables needs no header of its own
            if not v or any(not isinstance(x, Mapping) and not _is_table_array(x) for x in v.values()):
                out.append("")
                out.append(f"[{'.'.join(sub)}]")
            _table(v, sub, out)
        elif _is_table_array(v):
            for item in v:
                out.append("")
                out.append(f"[[{'.'.join(sub)}]]")
                _table(item, sub, out)
