"""Sweep files: a base scenario plus axes, expanded into points.

A sweep file is TOML::

    name = "c-n-buffer"                 # default: the file's stem
    engine = "packet"                   # packet | fluid | ns2 | predict
    scenario = "../scenarios/c-parallel-sack.toml"   # relative to this file; or an inline table
    metric = "normalized_throughput"    # the main metric (summary, plot); default per engine
    replications = 3                    # seeds: the scenario's own, then derived ones
    batch = 16                          # points per results file (default 16)

    [set]                               # fixed overrides, as `tcplab run --set`
    duration = "20s"

    [axes]                              # a grid: every combination, first axis slowest
    "flows.sack.count" = { range = [1, 10] }           # inclusive, step 1 (or step = ...)
    "topology.bottleneck.buffer" = [5, 20, 60]         # a list of values
    "flows.background.freq" = { log = ["0.05Hz", "10Hz"], n = 30 }   # geometric, unit strings
    "topology.bottleneck.rate" = { linear = ["1Mbps", "10Mbps"], n = 10 }
    rtt = { zip = { "topology.bottleneck.delay" = ["10ms", "50ms"],  # one axis, several
                    "topology.access.delay" = ["1ms", "5ms"] } }     # paths varied together

Axis paths are dotted key paths into the scenario (quoted or TOML dotted keys).
Replication r = 0 runs the point's own seed, so a point can be re-run with
`tcplab run ... --set`; r ≥ 1 runs `derive_seed(seed, r)`.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

from tcplab.errors import UserError
from tcplab.rng import _splitmix64
from tcplab.units import split_quantity, unit_table

ENGINES = ("packet", "fluid", "ns2", "predict", "linux")
SPEC_KEYS = {"values", "range", "step", "linear", "log", "n", "zip"}
TOP_KEYS = {"name", "description", "engine", "scenario", "metric", "replications", "batch", "set", "axes"}
UNIT_KINDS = ("duration", "rate", "frequency")
#: values of one axis, and points of a whole sweep (axes × replications): beyond
#: these the plan alone (a resolved scenario per point) would not fit in memory
MAX_AXIS = 1_000_000
MAX_POINTS = 10_000_000


@dataclass(frozen=True)
class Axis:
    """One dimension of the grid: `paths` varied together (one path unless zipped);
    `values[i]` holds one value per path."""

    name: str
    paths: tuple[str, ...]
    values: tuple[tuple, ...]
    log: bool = False  # a log range: plot it on a log axis


@dataclass(frozen=True)
class Point:
    """One run: the axis values (path → value), the replication and its overrides."""

    index: int
    axes: dict
    replication: int
    overrides: tuple  # ((path, value), ...) applied after the sweep's [set]


@dataclass
class Sweep:
    name: str
    engine: str
    base: dict  # the base scenario with [set] applied
    axes: list[Axis]
    replications: int = 1
    metric: str | None = None
    batch: int = 16
    source: Path | None = None
    description: str = ""
    raw: dict = field(default_factory=dict)

    @property
    def columns(self) -> list[str]:
        """The axis columns of the results store, in axis order."""
        return [p for a in self.axes for p in a.paths]

    def points(self) -> list[Point]:
        """Every point: the grid (first axis slowest) × replications (innermost)."""
        out = []
        combos = itertools.product(*(range(len(a.values)) for a in self.axes))
        for combo in combos:
            values = {}
            for axis, i in zip(self.axes, combo):
                values.update(zip(axis.paths, axis.values[i]))
            for r in range(self.replications):
                out.append(Point(len(out), values, r, tuple(values.items())))
        return out


def derive_seed(seed: int, replication: int) -> int:
    """The seed of replication r ≥ 1: splitmix64 of (seed, r), below 2^63 so that
    it fits a Parquet int64 column. Replication 0 keeps the seed as it is."""
    if replication == 0:
        return int(seed)
    x = (int(seed) ^ ((replication * 0xD1B54A32D192ED03) & ((1 << 64) - 1))) & ((1 << 64) - 1)
    _, z = _splitmix64(x)
    return z >> 1


# --- units --------------------------------------------------------------------------


def split_unit(value, where: str) -> tuple[float, str, str | None, Decimal]:
    """A number or unit string → (SI value, unit, kind, scale); kind None for plain numbers."""
    if isinstance(value, bool):
        raise UserError(f"{where}: expected a number or a unit string such as \"10Hz\", got {value!r}")
    out = None
    if isinstance(value, (int, float)):
        out = (float(value) if abs(value) < 1e308 else math.inf), "", None, Decimal(1)
    elif isinstance(value, str):
        q = split_quantity(value)
        if q and q[1]:
            for kind in UNIT_KINDS:
                table = unit_table(kind)
                if q[1] in table:
                    scale = Decimal(str(table[q[1]]))
                    out = float(Decimal(q[0]) * scale), q[1], kind, scale
                    break
    if out is not None:
        if not math.isfinite(out[0]):
            raise UserError(f"{where}: expected a finite number, got {str(value)[:40]!r}")
        return out
    raise UserError(f"{where}: expected a number or a unit string such as \"10Hz\", \"5ms\", \"1Mbps\"; got {value!r}")


def si_value(value) -> float | None:
    """The SI number an axis value stands for (for plots), or None (e.g. "sack")."""
    try:
        return split_unit(value, "")[0]
    except UserError:
        return None


def _emit(v_si: float, unit: str, kind: str | None, scale: Decimal, whole: bool):
    if kind is None:
        if whole:
            return int(round(v_si))
        return float(f"{v_si:.12g}")
    return f"{float(Decimal(repr(v_si)) / scale):.6g}{unit}"


def _ends(spec: dict, key: str, where: str):
    ends = spec[key]
    if not isinstance(ends, list) or len(ends) != 2:
        raise UserError(f"{where}: {key} = [low, high] expected, got {ends!r}")
    lo, hi = (split_unit(e, f"{where}.{key}") for e in ends)
    if lo[2] != hi[2]:
        raise UserError(f"{where}: {key} ends are of different kinds ({ends[0]!r}, {ends[1]!r})")
    return ends, lo, hi


def _count(spec: dict, where: str) -> int:
    n = spec.get("n")
    if isinstance(n, bool) or not isinstance(n, int) or n < 1 or n > MAX_AXIS:
        raise UserError(f"{where}: n = <number of points, 1 to {MAX_AXIS}> expected, got {n!r}")
    return n


def expand_values(spec, where: str) -> tuple[list, bool]:
    """An axis spec → (values, is_log)."""
    if isinstance(spec, list):
        if not spec:
            raise UserError(f"{where}: an axis needs at least one value")
        return list(spec), False
    if not isinstance(spec, dict):
        raise UserError(f"{where}: expected a list of values or a range table "
                        f"({{ range = [lo, hi] }}, {{ linear = [lo, hi], n = N }}, {{ log = [lo, hi], n = N }}); got {spec!r}")
    unknown = set(spec) - SPEC_KEYS
    if unknown:
        raise UserError(f"{where}: unknown key(s) {', '.join(sorted(unknown))}; expected one of values, range (+ step), linear/log (+ n), zip")
    kinds = [k for k in ("values", "range", "linear", "log") if k in spec]
    if len(kinds) != 1:
        raise UserError(f"{where}: give exactly one of values, range, linear, log")
    kind = kinds[0]
    if kind == "values":
        return expand_values(spec["values"], where)
    ends, (lo, unit, uk, scale), (hi, *_rest) = _ends(spec, kind, where)
    if kind == "range":
        step_raw = spec.get("step", 1)
        step, _, sk, _ = split_unit(step_raw, f"{where}.step")
        if uk is not None and sk is None and "step" in spec:
            step = float(Decimal(repr(step)) * scale)  # a plain step counts in the ends' unit
        elif sk is not None and sk != uk:
            raise UserError(f"{where}: step {step_raw!r} is not of the ends' kind")
        elif "step" not in spec and uk is not None:
            step = float(scale)
        if step <= 0 or hi < lo:
            raise UserError(f"{where}: range needs low ≤ high and step > 0; got {ends!r}, step {step_raw!r}")
        span = (hi - lo) / step * (1 + 1e-12) + 1e-9
        if not math.isfinite(span) or span >= MAX_AXIS:
            raise UserError(f"{where}: range {ends!r} with step {step_raw!r} has more than {MAX_AXIS} values")
        n = int(math.floor(span)) + 1
        whole = all(isinstance(e, int) and not isinstance(e, bool) for e in ends) and float(step).is_integer()
        values = [lo + i * step for i in range(n)]
    elif kind == "linear":
        n = _count(spec, where)
        values = [lo] if n == 1 else [lo + (hi - lo) * i / (n - 1) for i in range(n)]
        whole = all(isinstance(e, int) and not isinstance(e, bool) for e in ends) and all(
            abs(v - round(v)) < 1e-9 for v in values)
    else:
        n = _count(spec, where)
        if lo <= 0 or hi <= 0:
            raise UserError(f"{where}: log range ends must be positive, got {ends!r}")
        values = [lo] if n == 1 else [lo * (hi / lo) ** (i / (n - 1)) for i in range(n)]
        whole = False
    return [_emit(v, unit, uk, scale, whole) for v in values], kind == "log"


def _walk_axes(table: dict, prefix: str, where: str) -> list[Axis]:
    """[axes] entries: `path = spec`; TOML dotted keys nest, so recurse until a spec."""
    out = []
    for key, spec in table.items():
        path = f"{prefix}{key}"
        w = f"{where}.{path}"
        if isinstance(spec, dict) and "zip" in spec:
            if set(spec) != {"zip"} or not isinstance(spec["zip"], dict) or not spec["zip"]:
                raise UserError(f"{w}: expected {{ zip = {{ \"path\" = values, ... }} }}")
            members = _walk_axes(spec["zip"], "", f"{w}.zip")
            lengths = {m.paths[0]: len(m.values) for m in members}
            if len(set(lengths.values())) != 1:
                raise UserError(f"{w}: zipped axes must have equal lengths, got {lengths}")
            values = tuple(tuple(m.values[i][0] for m in members) for i in range(len(members[0].values)))
            out.append(Axis(path, tuple(m.paths[0] for m in members), values, members[0].log))
        elif isinstance(spec, dict) and not (set(spec) & SPEC_KEYS):
            out.extend(_walk_axes(spec, f"{path}.", where))
        else:
            values, is_log = expand_values(spec, w)
            out.append(Axis(path, (path,), tuple((v,) for v in values), is_log))
    return out


def _flatten_set(table: dict, prefix: str = "") -> list[tuple[str, Any]]:
    out = []
    for key, value in table.items():
        if isinstance(value, dict):
            out.extend(_flatten_set(value, f"{prefix}{key}."))
        else:
            out.append((f"{prefix}{key}", value))
    return out


def parse_sweep(data: dict, source: Path | None = None, engine: str | None = None) -> Sweep:
    """A sweep table (from TOML) → Sweep; `engine` overrides the file's."""
    where = str(source) if source else "sweep"
    unknown = set(data) - TOP_KEYS
    if unknown:
        raise UserError(f"{where}: unknown key(s) {', '.join(sorted(unknown))}; expected {', '.join(sorted(TOP_KEYS))}")
    file_engine = data.get("engine", "packet")
    engine = engine or file_engine
    if engine not in ENGINES:
        raise UserError(f"{where}: engine: expected one of {', '.join(ENGINES)}, got {engine!r}")
    sc = data.get("scenario")
    if sc is None:
        raise UserError(f"{where}: scenario: give the base scenario, a path (relative to the sweep file) or an inline table")
    if isinstance(sc, str):
        from tcplab.scenario import read_toml

        path = Path(sc)
        if not path.is_absolute() and source is not None:
            path = source.parent / path
        base = read_toml(path)
    elif isinstance(sc, dict):
        base = dict(sc)
    else:
        raise UserError(f"{where}: scenario: expected a path or a table, got {sc!r}")
    sets = data.get("set", {})
    if not isinstance(sets, dict):
        raise UserError(f"{where}: set: expected a table of key.path = value")
    from tcplab.scenario import apply_overrides

    base = apply_overrides(base, _flatten_set(sets))
    axes_table = data.get("axes", {})
    if not isinstance(axes_table, dict):
        raise UserError(f"{where}: axes: expected a table of key.path = values")
    axes = _walk_axes(axes_table, "", f"{where}: axes")
    seen: set[str] = set()
    for a in axes:
        for p in a.paths:
            if p in seen:
                raise UserError(f"{where}: axes: {p} appears twice")
            seen.add(p)
    reps = data.get("replications", 1)
    if isinstance(reps, bool) or not isinstance(reps, int) or reps < 1:
        raise UserError(f"{where}: replications: expected a whole number ≥ 1, got {reps!r}")
    points = math.prod(len(a.values) for a in axes) * reps
    if points > MAX_POINTS:
        raise UserError(f"{where}: axes × replications make {points} points, more than {MAX_POINTS}; "
                        "split the sweep")
    batch = data.get("batch", 16)
    if isinstance(batch, bool) or not isinstance(batch, int) or batch < 1:
        raise UserError(f"{where}: batch: expected a whole number ≥ 1, got {batch!r}")
    name = data.get("name") or (source.stem if source else "sweep")
    if not isinstance(name, str) or name in (".", "..") or any(c in name for c in "/\\\0") or name.startswith("."):
        raise UserError(f"{where}: name: expected a plain folder name (no path separators, not . or .., "
                        f"not starting with a dot; it names runs/sweeps/<name>), got {name!r}")
    # the file's metric belongs to the file's engine; another engine has its own default
    metric = data.get("metric") if engine == file_engine else None
    return Sweep(name=str(name), engine=engine, base=base, axes=axes, replications=reps,
                 metric=metric, batch=batch, source=source, description=data.get("description", ""), raw=data)


def load_sweep(path: str | Path, engine: str | None = None) -> Sweep:
    """Read a sweep TOML file."""
    from tcplab.resources import locate
    from tcplab.scenario import load_toml

    return parse_sweep(load_toml(path, "sweep"), locate(path), engine)
