"""Scenario loading: TOML file → dict → overrides by dotted path → resolved.

The schema lives in one place, the Rust engine (`crates/engine/src/scenario.rs`);
this module only reads files, applies `--set key.path=value` overrides and asks
the engine to validate and fill in defaults. Any problem is a `UserError`
whose message names the key path and what was expected.
"""

from __future__ import annotations

import copy
import json
import tomllib
from pathlib import Path
from typing import Any, Iterable, Mapping

from tcplab.errors import UserError

__all__ = ["load_scenario", "apply_overrides", "parse_override", "resolve", "read_toml"]


def read_toml(path: str | Path) -> dict:
    """Read a TOML file into a dict; a missing file or bad syntax is a UserError."""
    p = Path(path)
    if not p.is_file():
        raise UserError(f"{path}: no such scenario file")
    try:
        with p.open("rb") as fh:
            return tomllib.load(fh)
    except tomllib.TOMLDecodeError as exc:
        raise UserError(f"{path}: not valid TOML: {exc}") from None


def parse_override(text: str) -> tuple[list[str], Any]:
    """Split `a.b.c=value`; the value is read as TOML (`3`, `0.5`, `true`,
    `"x"`, `[1, 2]`) and otherwise taken as a plain string (`newreno`, `5ms`)."""
    if "=" not in text:
        raise UserError(f"--set {text!r}: expected key.path=value, e.g. flows.tcp.variant=newreno")
    key, raw = text.split("=", 1)
    key = key.strip()
    if not key or any(not part for part in key.split(".")):
        raise UserError(f"--set {text!r}: the key path {key!r} is empty or has an empty part")
    raw = raw.strip()
    try:
        value = tomllib.loads(f"v = {raw}")["v"]
    except tomllib.TOMLDecodeError:
        value = raw
    return key.split("."), value


def apply_overrides(scenario: Mapping, overrides: Iterable[str | tuple[list[str], Any]]) -> dict:
    """Return a copy of `scenario` with each override set (tables created as needed)."""
    out = copy.deepcopy(dict(scenario))
    for ov in overrides:
        parts, value = parse_override(ov) if isinstance(ov, str) else ov
        if isinstance(parts, str):
            parts = parts.split(".")
        node = out
        for i, part in enumerate(parts[:-1]):
            child = node.get(part)
            if child is None:
                child = node[part] = {}
            elif not isinstance(child, dict):
                where = ".".join(parts[: i + 1])
                raise UserError(f"{where}: is a value, not a table; cannot set {'.'.join(parts)}")
            node = child
        node[parts[-1]] = value
    return out


def _core():
    try:
        from tcplab import _core
    except ImportError as exc:  # pragma: no cover - only without a build
        raise UserError(
            "the compiled engine (tcplab._core) is not installed; build it with `maturin develop --release`"
        ) from exc
    return _core


def resolve(scenario: Mapping) -> dict:
    """Validate a scenario dict and fill in every default (the engine's schema)."""
    try:
        text = json.dumps(scenario)
    except (TypeError, ValueError) as exc:
        raise UserError(f"scenario: cannot be encoded: {exc}") from None
    try:
        return json.loads(_core().resolve_scenario(text))
    except ValueError as exc:
        raise UserError(f"scenario: {exc}") from None


def load_scenario(source: str | Path | Mapping, overrides: Iterable[str] = ()) -> dict:
    """Load a scenario (path to TOML, or a dict), apply overrides, resolve."""
    data = read_toml(source) if isinstance(source, (str, Path)) else dict(source)
    return resolve(apply_overrides(data, overrides))
