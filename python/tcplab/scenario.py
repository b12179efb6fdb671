"""Scenario loading: TOML file → dict → overrides by dotted path → resolved.

The schema lives in one place, the Rust engine (`crates/engine/src/scenario/`: schema.rs,
defaults.rs, validate.rs);
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

#: Tables and arrays nest at most this deep in a scenario or sweep (the schema
#: needs 5); deeper input is refused before anything recursive walks it.
MAX_DEPTH = 64


def check_depth(value: Any, where: str) -> None:
    """UserError if tables/arrays in `value` nest deeper than MAX_DEPTH (an
    iterative walk: no recursion limit to hit); the message names the key path."""
    stack = [(value, 0, [])]
    while stack:
        node, depth, path = stack.pop()
        if isinstance(node, Mapping):
            children = [(v, [*path, str(k)]) for k, v in node.items()]
        elif isinstance(node, (list, tuple)):
            children = [(v, [*path, f"[{i}]"]) for i, v in enumerate(node)]
        else:
            continue
        if depth >= MAX_DEPTH:
            shown = ".".join(path[:6]).replace(".[", "[") + ("…" if len(path) > 6 else "")
            raise UserError(f"{where}: {shown or 'the top level'}: tables and arrays nested more than "
                            f"{MAX_DEPTH} deep; a scenario needs a handful of levels")
        stack.extend((v, depth + 1, p) for v, p in children)


def load_toml(path: str | Path, what: str = "scenario") -> dict:
    """A TOML file as a dict; a missing file, bytes that are not UTF-8, bad
    syntax or absurd nesting is a UserError (`what` names the kind of file). A
    packaged example (`scenarios/x.toml`, `sweeps/x.toml`) is found wherever
    tcplab runs (`tcplab.resources.locate`)."""
    from tcplab.resources import locate

    p = locate(path)
    if not p.is_file():
        raise UserError(f"{path}: no such {what} file")
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise UserError(f"{path}: cannot read the {what} file: {exc.strerror or exc}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise UserError(f"{path}: not UTF-8 text (byte {exc.start}, line {line}: {data[exc.start:exc.start + 1]!r}); "
                        f"a {what} file is TOML, which is UTF-8") from None
    try:
        table = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise UserError(f"{path}: not valid TOML: {exc}") from None
    except RecursionError:
        raise UserError(f"{path}: arrays or inline tables nested too deeply to read "
                        f"(a {what} needs a handful of levels)") from None
    check_depth(table, str(path))
    return table


def read_toml(path: str | Path) -> dict:
    """Read a scenario file into a dict (`load_toml`). Rate trace files
    (`rate = {shape = "piecewise", file = "x.csv"}`) are read here, relative
    to the scenario file's directory, into `points`."""
    from tcplab.resources import locate

    return read_rate_files(load_toml(path), locate(path).parent, replace_points=False)


def read_rate_files(scenario: dict, base: str | Path = ".", replace_points: bool = True) -> dict:
    """Replace each piecewise rate's `file` by the `points` it holds (a CSV
    file with columns t_s, rate_bps; a header line is skipped; relative paths
    are relative to `base`). The resolved scenario is then self-contained:
    what ran does not depend on a file that may change. A file set by an
    override replaces points read earlier (`replace_points`); in a scenario
    file, giving both is an error. Returns `scenario`."""
    flows = scenario.get("flows") if isinstance(scenario, dict) else None
    if not isinstance(flows, dict):
        return scenario
    for label, g in flows.items():
        rate = g.get("rate") if isinstance(g, dict) else None
        if not (isinstance(rate, dict) and rate.get("shape") == "piecewise" and "file" in rate):
            continue
        key = f"flows.{label}.rate.file"
        if "points" in rate and not replace_points:
            raise UserError(f"{key}: give either file or points, not both")
        name = rate["file"]
        if not isinstance(name, str):
            raise UserError(f"{key}: expected a file name, got {name!r}")
        path = Path(base) / name
        if not path.is_file():
            raise UserError(f"{key}: no such file {str(path)!r}")
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except UnicodeDecodeError as exc:
            raise UserError(f"{key}: {str(path)!r} is not UTF-8 text (byte {exc.start}); "
                            "expected a CSV file with columns t_s,rate_bps") from None
        except OSError as exc:
            raise UserError(f"{key}: cannot read {str(path)!r}: {exc.strerror or exc}") from None
        points = []
        for n, line in enumerate(lines, 1):
            cells = [c.strip() for c in line.split(",")]
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            try:
                t, r = (float(c) for c in cells)
            except ValueError:
                if not points and n == 1:
                    continue  # header
                raise UserError(f"{key}: {path.name} line {n}: expected two numbers "
                                f"t_s,rate_bps, got {line!r}") from None
            points.append([t, r])
        new = {k: v for k, v in rate.items() if k not in ("file", "points")}
        new["points"] = points
        g["rate"] = new
    return scenario


def _rate_files(scenario: Mapping) -> bool:
    """Whether some rate table still names a `file` (for `read_rate_files` to read)."""
    flows = scenario.get("flows")
    return isinstance(flows, dict) and any(
        isinstance(g, dict) and isinstance(g.get("rate"), dict) and "file" in g["rate"] for g in flows.values())


def parse_override(text: str) -> tuple[list[str], Any]:
    """Split `a.b.c=value`; the value is read as TOML (`3`, `0.5`, `true`,
    `"x"`, `[1, 2]`) and otherwise taken as a plain string (`newreno`, `5ms`)."""
    if "=" not in text:
        raise UserError(f"--set {text!r}: expected key.path=value, e.g. flows.tcp.variant=newreno")
    key, raw = text.split("=", 1)
    key = key.strip()
    shown = text if len(text) <= 60 else text[:57] + "..."
    if not key or any(not part for part in key.split(".")):
        raise UserError(f"--set {shown!r}: the key path {key!r} is empty or has an empty part")
    if key.count(".") >= MAX_DEPTH:
        raise UserError(f"--set {shown!r}: the key path has {key.count('.') + 1} parts; "
                        f"at most {MAX_DEPTH}")
    raw = raw.strip()
    try:
        value = tomllib.loads(f"v = {raw}")["v"]
    except tomllib.TOMLDecodeError:
        value = raw
    except RecursionError:
        raise UserError(f"--set {shown!r}: the value nests arrays or tables too deeply") from None
    check_depth(value, f"--set {key}")
    return key.split("."), value


def apply_overrides(scenario: Mapping, overrides: Iterable[str | tuple[list[str], Any]]) -> dict:
    """Return a copy of `scenario` with each override set (tables created as needed)."""
    check_depth(scenario, "scenario")
    out = copy.deepcopy(dict(scenario))
    for ov in overrides:
        parts, value = parse_override(ov) if isinstance(ov, str) else ov
        if isinstance(parts, str):
            parts = parts.split(".")
        if not isinstance(ov, str):
            check_depth(value, ".".join(map(str, parts)))
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
    """Validate a scenario dict and fill in every default (the engine's schema).
    A rate trace `file` still unread (set by an override or in a dict) is read
    relative to the working directory."""
    check_depth(scenario, "scenario")
    scenario = dict(scenario)
    if _rate_files(scenario):  # read into a copy: the caller's dict is left as it is
        scenario = read_rate_files(copy.deepcopy(scenario))
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
