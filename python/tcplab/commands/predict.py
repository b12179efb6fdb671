"""`tcplab predict`: closed-form answers from the papers, in microseconds.

    tcplab predict --list
    tcplab predict MODEL [--param value ...] [--json]
    tcplab predict scenario SCENARIO.toml [--json]

A parameter takes a number (`0.5`, `7/8`), a comma list (`0.25,0.5,0.75`) or
a range: `1..15` (whole numbers, inclusive) or `0.1..0.5:0.1` (with a step).
Several list parameters make a grid (every combination, first one slowest).
`--json` prints one object with the inputs and `value`: a number, or a list
for list inputs, row i of every list in `inputs` belonging to `value[i]`.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
from fractions import Fraction

import numpy as np

from tcplab.errors import UserError
from tcplab.models.registry import MODELS, Model, Param, get_model
from tcplab.models.scenario import ScenarioValueError, predict_scenario


def _escaped(text: str) -> str:
    """`text` as an argparse help string: argparse %-formats help (``%(default)s``),
    so a literal percent sign ("100 % throughput") must be doubled."""
    return text.replace("%", "%%")


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "predict",
        help="closed-form throughput models from the papers",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--list", action="store_true", help="list the models and exit")
    parser.add_argument("--json", dest="json_root", action="store_true", help="JSON output")
    models = parser.add_subparsers(dest="model", metavar="MODEL")
    for model in MODELS:
        mp = models.add_parser(
            model.name,
            help=_escaped(model.summary),
            description=f"{model.summary}.\n\nsource: {model.source}\nassumptions: {model.assumptions}",
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        for param in model.params:
            default = "required" if param.required else f"default {param.default}"
            choices = f"; one of {', '.join(param.choices)}" if param.choices else ""
            mp.add_argument(
                f"--{param.name}",
                metavar="VALUE",
                help=_escaped(f"{param.help} ({default}{choices})"),
            )
        mp.add_argument("--json", action="store_true", help="print one JSON object")
        mp.add_argument("--force", action="store_true",
                        help=f"evaluate a grid of more than {MAX_ROWS} rows (memory: about 400 bytes a row)")
    sp = models.add_parser(
        "scenario",
        help="apply every model whose assumptions a scenario meets",
        description="Apply every model whose assumptions the scenario meets; say which do not apply and why.",
    )
    sp.add_argument("path", metavar="SCENARIO.toml")
    sp.add_argument("--json", action="store_true", help="print one JSON object")
    parser.set_defaults(func=run, predict_parser=parser)


def run(args) -> int:
    as_json = bool(getattr(args, "json", False) or args.json_root)
    if args.list:
        return _print_list(as_json)
    if args.model is None:
        args.predict_parser.print_help()
        return 0
    if args.model == "scenario":
        return _run_scenario(args.path, as_json)
    model = get_model(args.model)
    raw = {p.name: getattr(args, p.name) for p in model.params}
    result = evaluate(model, raw, force=getattr(args, "force", False))
    if as_json:
        print(json.dumps(result, indent=2, ensure_ascii=False, default=_json_default))
    else:
        _print_result(model, result)
    return 0


# --- parsing parameter values --------------------------------------------------------


def _number(param: Param, text: str):
    try:
        value = float(Fraction(text.strip()))
    except (ValueError, ZeroDivisionError, OverflowError):
        raise UserError(f"--{param.name}: expected a number, got {text!r}") from None
    if not math.isfinite(value):
        raise UserError(f"--{param.name}: expected a finite number, got {text!r}")
    if param.kind == "int":
        if value != round(value):
            raise UserError(f"--{param.name}: expected a whole number, got {text!r}")
        return int(round(value))
    return value


def parse_values(param: Param, text: str) -> tuple[list, bool]:
    """The values `text` stands for, and whether it was a list/range (vector)."""
    text = text.strip()
    if param.kind == "choice":
        values = [v.strip() for v in text.split(",")]
        bad = [v for v in values if v not in param.choices]
        if bad:
            raise UserError(f"--{param.name}: expected one of {', '.join(param.choices)}, got {bad[0]!r}")
        return values, "," in text
    if ".." in text:
        return _parse_range(param, text), True
    if "," in text:
        values = [_number(param, v) for v in text.split(",") if v.strip()]
        if not values:
            raise UserError(f"--{param.name}: expected a number or a comma list of numbers, got {text!r}")
        return values, True
    return [_number(param, text)], False


def _parse_range(param: Param, text: str) -> list:
    """`lo..hi` (whole numbers) or `lo..hi:step`, both ends included."""
    usage = f"--{param.name}: expected a range such as 1..15 or 0.1..0.5:0.1 (low <= high, step > 0), got {text!r}"
    lo_text, _, rest = text.partition("..")
    hi_text, _, step_text = rest.partition(":")
    try:
        lo, hi = float(Fraction(lo_text.strip())), float(Fraction(hi_text.strip()))
        step = float(Fraction(step_text.strip())) if step_text else 1.0
    except (ValueError, ZeroDivisionError, OverflowError):
        raise UserError(usage) from None
    if not all(map(math.isfinite, (lo, hi, step))):
        raise UserError(usage)
    if step <= 0 or hi < lo or (not step_text and (lo != round(lo) or hi != round(hi))):
        raise UserError(usage)
    count = int(np.floor((hi - lo) / step + 1e-9)) + 1
    if count > MAX_RANGE:
        raise UserError(f"--{param.name}: range {text!r} has {count} points; at most {MAX_RANGE}")
    return [_number(param, repr(round(lo + i * step, 12))) for i in range(count)]


# --- evaluating -----------------------------------------------------------------------


#: points of one list or range parameter
MAX_RANGE = 100_000
#: rows of a grid (the product of the list parameters' lengths) without --force:
#: a row costs ~400 bytes with --json (measured: 199k gaimd rows, +75 MB), more as a table
MAX_ROWS = 1_000_000


def evaluate(model: Model, raw: dict[str, str | None], force: bool = False) -> dict:
    """Evaluate `model` on CLI-style string inputs; the JSON-ready result dict.
    A grid of more than MAX_ROWS rows is refused unless `force`."""
    values: dict[str, list] = {}
    vector: list[str] = []
    for param in model.params:
        text = raw.get(param.name)
        if text is None:
            if param.required:
                raise UserError(f"{model.name}: --{param.name} is required ({param.help})")
            values[param.name] = [param.default]
            continue
        vals, is_vector = parse_values(param, text)
        values[param.name] = vals
        if is_vector:
            vector.append(param.name)
    if vector and not model.vector_inputs:
        raise UserError(f"{model.name}: its value is already a vector; give single values, not {vector[0]} lists")
    n_rows = math.prod(len(values[k]) for k in vector)
    if n_rows > MAX_ROWS and not force:
        sizes = " × ".join(f"{len(values[k])} (--{k})" for k in vector)
        raise UserError(f"--{vector[-1]}: the grid has {sizes} = {n_rows} rows, more than the limit of "
                        f"{MAX_ROWS} (about 400 bytes of memory a row, and as many lines of output); narrow the ranges, or --force")
    result = {
        "model": model.name,
        "summary": model.summary,
        "source": model.source,
        "assumptions": model.assumptions,
        "quantity": model.quantity,
    }
    try:
        if not vector:
            inputs = {k: v[0] for k, v in values.items()}
            value = model.func(**inputs)
            details = model.explain(**inputs) if model.explain else None
        else:
            rows = list(itertools.product(*(values[k] for k in vector)))
            inputs = {k: v[0] for k, v in values.items()}
            inputs.update({k: [row[i] for row in rows] for i, k in enumerate(vector)})
            value = _evaluate_rows(model, inputs, vector, len(rows))
            details = None
            if model.explain:
                details = [
                    model.explain(**{k: (v[i] if k in vector else v) for k, v in inputs.items()})
                    for i in range(len(rows))
                ]
    except ValueError as exc:
        raise UserError(f"{model.name}: {exc}") from None
    result["inputs"] = inputs
    if isinstance(value, Fraction):
        result["exact"] = str(value)
        value = float(value)
    result["value"] = _plain(value)
    if details is not None:
        result["details"] = _plain(details)
    return result


def _evaluate_rows(model: Model, inputs: dict, vector: list[str], n_rows: int):
    if any(model.param(k).kind == "choice" for k in vector):
        return [
            _plain(model.func(**{k: (v[i] if k in vector else v) for k, v in inputs.items()}))
            for i in range(n_rows)
        ]
    arrays = {k: (np.asarray(v) if k in vector else v) for k, v in inputs.items()}
    return np.broadcast_to(model.func(**arrays), (n_rows,))


def _plain(value):
    """numpy and Fraction values as plain JSON-able Python values."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, np.ndarray):
        return [_plain(v) for v in value.tolist()]
    if isinstance(value, Fraction):
        return float(value)
    if isinstance(value, np.generic):
        return value.item()
    return value


def _json_default(obj):
    plain = _plain(obj)
    if plain is obj:
        raise TypeError(f"not JSON serializable: {type(obj).__name__}")
    return plain


# --- output ---------------------------------------------------------------------------


def _fmt(value) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


def _console():
    from tcplab.console import stdout_console

    return stdout_console(highlight=False, soft_wrap=True)


def _print_list(as_json: bool) -> int:
    if as_json:
        print(json.dumps([{"model": m.name, "summary": m.summary, "source": m.source,
                           "params": [p.name for p in m.params]} for m in MODELS], indent=2))
        return 0
    from rich.table import Table

    table = Table(title="tcplab predict MODEL --help for a model's parameters")
    table.add_column("model", no_wrap=True)
    table.add_column("what it answers")
    table.add_column("params")
    for m in MODELS:
        table.add_row(m.name, m.summary, " ".join(f"--{p.name}" for p in m.params))
    table.add_row("scenario", "apply every model whose assumptions a scenario meets", "SCENARIO.toml")
    _console().print(table)
    return 0


def _print_result(model: Model, result: dict) -> None:
    from rich.table import Table

    console = _console()
    console.print(f"[bold]{model.name}[/bold]: {model.summary}")
    console.print(f"  source:      {model.source}")
    console.print(f"  assumptions: {model.assumptions}")
    inputs = result["inputs"]
    scalars = {k: v for k, v in inputs.items() if not isinstance(v, list)}
    console.print("  inputs:      " + ", ".join(f"{k} = {_fmt(v)}" for k, v in scalars.items()))
    value = result["value"]
    listed = [k for k, v in inputs.items() if isinstance(v, list)]
    if listed:
        table = Table()
        for k in listed:
            table.add_column(k, justify="right")
        table.add_column(model.quantity, justify="right")
        if result.get("details"):
            table.add_column("why")
        for i, v in enumerate(value):
            row = [_fmt(inputs[k][i]) for k in listed] + [_fmt(v)]
            if result.get("details"):
                row.append(result["details"][i]["reason"])
            table.add_row(*row)
        console.print(table)
    elif isinstance(value, list):
        table = Table()
        table.add_column("i", justify="right")
        table.add_column(model.quantity, justify="right")
        for i, v in enumerate(value, start=1):
            table.add_row(str(i), _fmt(v))
        console.print(table)
    else:
        exact = f" (= {result['exact']})" if "exact" in result else ""
        console.print(f"  [bold]{model.quantity}: {_fmt(value)}[/bold]{exact}")
    details = result.get("details")
    if isinstance(details, dict):
        console.print("  why:         " + details["reason"])
        console.print("  quantities:  " + ", ".join(
            f"{k} = {_fmt(v)}" for k, v in details.items() if k not in ("reason", "slowstarts")))


def _run_scenario(path: str, as_json: bool) -> int:
    from tcplab.scenario import load_scenario

    scn = load_scenario(path)  # the engine's schema: unknown keys and bad values as for `run`
    try:
        predictions = predict_scenario(scn)
    except (ScenarioValueError, ValueError) as exc:
        raise UserError(f"{path}: {exc}") from None
    rows = [
        {"model": p.model, "group": p.group, "applies": p.applies, "reason": p.reason,
         "quantity": get_model(p.model).quantity,
         "inputs": _plain(p.inputs), "value": _plain(p.value) if p.applies else None}
        for p in predictions
    ]
    if as_json:
        print(json.dumps({"scenario": path, "predictions": rows}, indent=2, ensure_ascii=False))
        return 0
    from rich.table import Table

    console = _console()
    applied = Table(title=f"models that apply to {path}")
    for col in ("model", "group", "value", "inputs; why, caveats"):
        applied.add_column(col, no_wrap=col == "model")
    for r in rows:
        if r["applies"]:
            inputs = ", ".join(f"{k} = {_fmt(v)}" for k, v in r["inputs"].items())
            applied.add_row(r["model"], r["group"] or "all", _fmt(r["value"]), f"{inputs}; {r['reason']}")
    console.print(applied)
    skipped = Table(title="models that do not apply")
    skipped.add_column("model")
    skipped.add_column("why not")
    for r in rows:
        if not r["applies"]:
            skipped.add_row(r["model"], r["reason"])
    console.print(skipped)
    return 0
