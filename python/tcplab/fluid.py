"""The hybrid AIMD model of paper C, exact and event-driven (`tcplab.fluid`).

N connections increase their rates linearly (η_i); the link is congested when
Σ x_i = c (zero buffer); a loss policy picks who is cut to β_i of its rate
(paper C, eqs. 2–4). The Rust crate `tcplab-aimd` jumps from congestion event
to congestion event and integrates the piecewise-linear paths exactly, so a run
of 10⁶ events takes a fraction of a second.

    >>> import tcplab
    >>> r = tcplab.fluid(n=3, beta=0.5, policy="rate-proportional", events=100_000, seed=1)
    >>> round(r.metrics["mean_aggregate"], 3)   # Theorem 1: 1 − 1/(1+3N) = 0.9
    0.9

Policies (`policy=`):

- ``rate-proportional``  connection i cut with probability x_i/c
- ``largest-rate``       the largest rate is cut (ties: lowest index)
- ``rate-independent``   connection i cut with a fixed probability ∝ ``weights[i]``
                         (uniform by default; ``sigma=`` gives Example 1's bias)
- ``beatdown``           a tagged connection is cut at every event until its rate
                         is 0 (Sec. IV.B); ``tag=`` picks the next one to tag
- ``all``                every connection at every event (synchronization)
- ``subset``             each connection independently with probability
                         ``probs[i]``, conditioned on at least one cut

All rates are normalized by the capacity c; second moments by c².

A run returns a `FluidResult`, not the `tcplab.result.Result` every scenario
engine returns: the model's inputs are no scenario (N, β, η, a loss policy, a
number of events) and its outputs are rates in units of the capacity, with no
links, packets or bytes for Result's tables, metrics and plots to read. It
keeps Result's attribute names where they mean the same.
"""

from __future__ import annotations

import functools
import inspect
import math
import numbers
import sys
import types
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from tcplab.errors import UserError

POLICIES = ("rate-proportional", "largest-rate", "rate-independent", "beatdown", "all", "subset")
ONE_POLICIES = ("rate-proportional", "largest-rate", "rate-independent", "beatdown")
TAGS = ("largest", "rate-proportional")


@dataclass
class FluidResult:
    """What a fluid run returns; plain attributes with the names `tcplab.result.Result`
    uses where they mean the same (engine, engine_version, scenario, metrics, flows,
    traces).

    Not a `Result`, because what it describes is no scenario run: its inputs are
    the hybrid model's (N, β, η, a loss policy, a number of congestion events), not a
    scenario the engine resolves, and its outputs are rates in units of the capacity
    and their moments per connection — no links, packets, bytes or goodput. Result's
    links table, its metrics (computed from delivered bytes over a measurement
    window), `metadata()`'s units and `plot()` would all be empty or wrong for it.

    - ``engine``: ``"fluid"``; ``engine_version``: the tcplab-aimd version
    - ``scenario``: every input, resolved (defaults filled in)
    - ``metrics``: ``mean_aggregate`` (time average of Σx_i/c) with
      ``mean_aggregate_ci95`` (95% half-width, batch means), ``prediction``
      (Theorem 1 or eq. 6 where they apply, else None), ``events`` …
    - ``flows``: one row per connection: ``id``, ``eta``, ``beta``, ``mean``,
      ``mean_ci95``, ``second_moment``, ``second_moment_ci95``,
      ``mean_at_congestion`` (just before events), ``cut_share``
    - ``traces``: ``"rates"`` (time, x0 … x{N−1}; before and after every cut,
      so straight lines between rows are the exact path) when ``trace`` > 0;
      ``"rates_at_congestion"`` (flow, bin_lo, bin_hi, fraction) when ``bins`` > 0
    """

    engine: str
    engine_version: str
    scenario: dict[str, Any]
    metrics: dict[str, Any]
    flows: pd.DataFrame
    traces: dict[str, pd.DataFrame] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The JSON object `tcplab fluid --json` prints (NaN becomes null)."""
        s = self.scenario
        out = {
            "engine": self.engine,
            "engine_version": self.engine_version,
            # the inputs scripts rely on, at top level
            "n": s["n"],
            "beta": s["beta"],
            "policy": s["policy"],
            "events": s["events"],
            "seed": s["seed"],
            "mean_aggregate": self.metrics["mean_aggregate"],
            "mean_aggregate_ci95": self.metrics["mean_aggregate_ci95"],
            "per_connection": self.flows.to_dict(orient="records"),
            "metrics": self.metrics,
            "scenario": s,
        }
        return _json_clean(out)


def _json_clean(value):
    if isinstance(value, dict):
        return {str(k): _json_clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_clean(v) for v in value]
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        f = float(value)
        return f if math.isfinite(f) else None
    return value


def _per_connection(name: str, value, n: int, check, expected: str) -> list[float]:
    """A scalar (same for all) or a sequence of n numbers, each passing `check`."""
    if isinstance(value, (str, bytes)):
        raise UserError(f"{name}: expected a number or {n} numbers, got {value!r}")
    if isinstance(value, numbers.Real):
        values = [float(value)] * n
    else:
        try:
            values = [float(v) for v in value]
        except (TypeError, ValueError):
            raise UserError(f"{name}: expected a number or {n} numbers, got {value!r}") from None
        if len(values) != n:
            raise UserError(f"{name}: expected {n} values (one per connection), got {len(values)}")
    for i, v in enumerate(values):
        if not (math.isfinite(v) and check(v)):
            raise UserError(f"{name}[{i}]: expected {expected}, got {v}")
    return values


def _whole(name: str, value, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        else:
            raise UserError(f"{name}: expected a whole number, got {value!r}")
    if value < minimum:
        raise UserError(f"{name}: expected at least {minimum}, got {value}")
    return int(value)


#: Bytes per connection: batch means of the rate and its square (2 × 8 per batch,
#: in Rust), plus ~300 for the per-connection vectors, lists and table.
_BYTES_PER_CONN = 300
#: Bytes per histogram cell (Rust counts, the Python rows and the DataFrame),
#: measured: 100 connections × 10000 bins took 265 MB more than 100 × 0.
_BYTES_PER_CELL = 270
#: Bytes per traced (event, connection): the rate in Rust, in Python, in the table.
_BYTES_PER_TRACED = 48
#: Work: a congestion event updates every connection, ~35 ns each (measured:
#: 10000 connections, 20000 events in 7 s); 1e11 is about an hour.
MAX_CONNECTION_EVENTS = 10**11


def check_size(n: int, events: int, batches: int, bins: int, trace: int) -> None:
    """Refuse (UserError naming the input) a run that cannot fit this machine's
    memory (`tcplab.limits.memory_budget_bytes`) or would take hours."""
    from tcplab.limits import human_bytes, memory_budget_bytes

    parts = {  # each grows with n times the input named
        "batches": n * (_BYTES_PER_CONN + 16 * batches),
        "bins": n * bins * _BYTES_PER_CELL,
        "trace": n * trace * _BYTES_PER_TRACED,
    }
    total = sum(parts.values())
    budget = memory_budget_bytes()
    if total > budget:
        key = max(parts, key=parts.get)
        what = {"batches": "batches", "bins": "histogram bins", "trace": "traced events"}[key]
        other = {"batches": batches, "bins": bins, "trace": trace}[key]
        raise UserError(f"{_cli_name('n')}: {n} connections × {other} {what} need about {human_bytes(total)} "
                        f"of memory, more than this machine can give ({human_bytes(budget)}); lower n or "
                        f"{_cli_name(key)} (force=True / --force to try anyway)")
    if n * events > MAX_CONNECTION_EVENTS:
        raise UserError(f"{_cli_name('n')}: {n} connections × {events} events (warm-up included) is "
                        f"{n * events:.3g} connection updates, more than the limit of {MAX_CONNECTION_EVENTS:.0e} "
                        "(about an hour); lower n or events (force=True / --force to run anyway)")


def _cli_name(key: str) -> str:
    """An input's name with the `tcplab fluid` option that sets it: "n (--n)"."""
    return f"{key} (--{'trace-events' if key == 'trace' else key})"


#: A run discards first 1/WARMUP_DIVISOR of the events it measures unless told
#: (`default_warmup`: the one place the rule is written).
WARMUP_DIVISOR = 10

#: Inputs of `fluid()` that choose what it records or whether it may run, not the model.
_NOT_MODEL_INPUTS = {"trace", "bins", "force"}


def default_warmup(events: int) -> int:
    """Congestion events discarded before measuring when `warmup` is not given."""
    return events // WARMUP_DIVISOR


def resolve(inputs: Mapping) -> dict:
    """The fluid model's inputs with every default filled in (the sweep's resolved
    point): `fluid()`'s own defaults, and `default_warmup(events)` for the warm-up.
    A key `fluid()` does not take as a model input is a UserError."""
    defaults = _model_defaults()
    unknown = set(inputs) - set(defaults)
    if unknown:
        raise UserError(f"fluid scenario: unknown key(s) {', '.join(sorted(unknown))}; "
                        f"expected some of {', '.join(defaults)}")
    out = dict(defaults)
    out.update(inputs)
    if out["warmup"] is None and isinstance(out["events"], int):
        out["warmup"] = default_warmup(out["events"])
    return out


@functools.cache
def _model_defaults() -> dict:
    sig = inspect.signature(fluid)
    return {k: p.default for k, p in sig.parameters.items() if k not in _NOT_MODEL_INPUTS}


def sigma_weights(n: int, sigma: float) -> list[float]:
    """Example 1's bias: the first ⌊N/2⌋ connections share probability σ, the
    others 1 − σ (N = 4: [σ/2, σ/2, (1−σ)/2, (1−σ)/2])."""
    k = n // 2
    return [sigma / k] * k + [(1 - sigma) / (n - k)] * (n - k)


def fluid(
    n: int = 2,
    beta=0.5,
    policy: str = "rate-proportional",
    events: int = 100_000,
    seed: int = 1,
    *,
    eta=1.0,
    capacity: float = 1.0,
    weights=None,
    sigma: float | None = None,
    probs=None,
    tag: str = "largest",
    warmup: int | None = None,
    batches: int = 32,
    initial=None,
    trace: int = 0,
    bins: int = 0,
    force: bool = False,
) -> FluidResult:
    """Run the hybrid AIMD model of paper C.

    n: connections; beta, eta: a number (all alike) or one per connection;
    policy: see the module doc; events: congestion events measured (beatdown:
    tag times); seed: the random stream; warmup: events discarded first
    (default `default_warmup(events)`); batches: for the batch-means confidence intervals;
    weights / sigma: rate-independent selection probabilities (sigma is the
    bias of Example 1, 0 < sigma < 1, N ≥ 2); probs: the subset policy's
    per-connection probabilities; tag: whom beatdown tags next (``largest`` —
    Sec. IV.B — or ``rate-proportional``); initial: rates at time 0 (default 0);
    trace: record the sample path over the first `trace` events; bins:
    histogram of the rates just before congestion events over [0, c].
    Raises UserError on bad input, and on a run whose memory or work is beyond
    this machine (`check_size`) unless `force`.
    """
    n = _whole("n", n, 1)
    if policy not in POLICIES:
        raise UserError(f"policy: expected one of {', '.join(POLICIES)}; got {policy!r}")
    events = _whole("events", events, 1)
    seed = _whole("seed", seed, 0)
    if seed >= 2**64:
        raise UserError(f"seed: expected a whole number below 2^64, got {seed}")
    batches = _whole("batches", batches, 2)
    if events < batches:
        raise UserError(f"events: expected at least as many events as batches ({batches}), got {events}")
    warmup = default_warmup(events) if warmup is None else _whole("warmup", warmup, 0)
    trace = _whole("trace", trace, 0)
    bins = _whole("bins", bins, 0)
    if not (isinstance(capacity, numbers.Real) and math.isfinite(capacity) and capacity > 0):
        raise UserError(f"capacity: expected a positive number, got {capacity!r}")
    if not force:
        check_size(n, events + warmup, batches, bins, trace)
    betas = _per_connection("beta", beta, n, lambda v: 0 < v < 1, "0 < beta < 1")
    etas = _per_connection("eta", eta, n, lambda v: v > 0, "a positive number")
    if tag not in TAGS:
        raise UserError(f"tag: expected one of {', '.join(TAGS)}; got {tag!r}")

    if sigma is not None:
        if policy != "rate-independent":
            raise UserError(f"sigma: the bias applies to the rate-independent policy, not {policy}")
        if weights is not None:
            raise UserError("sigma: give either sigma or weights, not both")
        if n < 2:
            raise UserError("sigma: the bias needs at least two connections (two classes)")
        if not (isinstance(sigma, numbers.Real) and 0 < sigma < 1):
            raise UserError(f"sigma: expected 0 < sigma < 1, got {sigma!r}")
        weights = sigma_weights(n, float(sigma))
    elif weights is not None:
        if policy != "rate-independent":
            raise UserError(f"weights: selection weights apply to the rate-independent policy, not {policy}")
        # a connection that is never cut takes the whole link and the congestion
        # times of the others accumulate: no stationary regime (Theorem 1's condition)
        weights = _per_connection("weights", weights, n, lambda v: v > 0, "a positive weight")
    if probs is not None:
        if policy != "subset":
            raise UserError(f"probs: per-connection cut probabilities apply to the subset policy, not {policy}")
        probs = _per_connection("probs", probs, n, lambda v: 0 <= v <= 1, "a probability in [0, 1]")
        if not any(p > 0 for p in probs):
            raise UserError("probs: expected at least one positive probability")
    elif policy == "subset":
        raise UserError("probs: the subset policy needs --probs (one probability, or one per connection)")
    if initial is not None:
        initial = _per_connection("initial", initial, n, lambda v: v >= 0, "a non-negative rate")
        if sum(initial) > capacity * (1 + 1e-12):
            raise UserError(f"initial: the rates sum to {sum(initial)}, more than the capacity {capacity}")

    from tcplab import _core

    try:
        raw = _core.aimd_simulate(
            eta=etas,
            beta=betas,
            policy=policy,
            events=events,
            warmup=warmup,
            seed=seed,
            capacity=float(capacity),
            weights=weights,
            probs=probs,
            tag=tag,
            batches=batches,
            initial=initial,
            trace_events=trace,
            histogram_bins=bins,
        )
    except ValueError as exc:  # validation in Rust: the same wording
        raise UserError(str(exc)) from None

    same_beta = all(b == betas[0] for b in betas)
    prediction = None
    if same_beta and policy in ONE_POLICIES:
        prediction = 1 - 1 / (1 + n * (1 + betas[0]) / (1 - betas[0]))  # Theorem 1, eq. (5)
    elif same_beta and policy == "all":
        prediction = (1 + betas[0]) / 2  # eq. (6)

    scenario = {
        "n": n,
        "beta": betas[0] if same_beta else betas,
        "eta": etas[0] if all(e == etas[0] for e in etas) else etas,
        "capacity": float(capacity),
        "policy": policy,
        "weights": weights,
        "sigma": sigma,
        "probs": probs,
        "tag": tag if policy == "beatdown" else None,
        "events": events,
        "warmup": warmup,
        "seed": seed,
        "batches": batches,
        "initial": initial,
    }
    metrics = {
        "mean_aggregate": raw["mean_aggregate"],
        "mean_aggregate_ci95": raw["mean_aggregate_ci95"],
        "aggregate_second_moment": raw["aggregate_second_moment"],
        "prediction": prediction,
        "prediction_source": (
            "Theorem 1 (eq. 5)" if policy in ONE_POLICIES and prediction is not None
            else "eq. 6" if prediction is not None else None
        ),
        "events": raw["events"],
        "duration": raw["duration"],
        "jain_index": _jain([m for m in raw["flow_mean"]]),
    }
    flows = pd.DataFrame(
        {
            "id": range(n),
            "eta": etas,
            "beta": betas,
            "mean": raw["flow_mean"],
            "mean_ci95": raw["flow_mean_ci95"],
            "second_moment": raw["flow_second_moment"],
            "second_moment_ci95": raw["flow_second_moment_ci95"],
            "mean_at_congestion": raw["flow_mean_at_congestion"],
            "cut_share": raw["flow_cut_share"],
        }
    )
    traces: dict[str, pd.DataFrame] = {}
    if trace:
        t = raw["trace_time"]
        r = raw["trace_rates"]
        frame = {"time": t}
        for i in range(n):
            frame[f"x{i}"] = r[i::n]
        traces["rates"] = pd.DataFrame(frame)
    if bins:
        rows = []
        for i, h in enumerate(raw["histogram"]):
            for k, frac in enumerate(h):
                rows.append((i, k / bins, (k + 1) / bins, frac))
        traces["rates_at_congestion"] = pd.DataFrame(rows, columns=["flow", "bin_lo", "bin_hi", "fraction"])
    return FluidResult(
        engine="fluid",
        engine_version=_core.AIMD_VERSION,
        scenario=scenario,
        metrics=metrics,
        flows=flows,
        traces=traces,
    )


def _jain(x: list[float]) -> float:
    s, s2 = sum(x), sum(v * v for v in x)
    return s * s / (len(x) * s2) if s2 > 0 else float("nan")


class _CallableModule(types.ModuleType):
    """`tcplab.fluid` names both this module and the function `fluid`: once the
    module is imported (`from tcplab.fluid import …`, the CLI), the package
    attribute is the module, not the lazily exported function. Calling the
    module calls the function, so `tcplab.fluid(...)` works in any import order."""

    def __call__(self, *args, **kwargs) -> FluidResult:
        return fluid(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
