"""The one shape of a result, whatever engine produced it.

A `Result` holds the resolved scenario, the engine's name and version, a
per-flow table, a per-link table, summary metrics (computed here, the same
way for every engine) and optional traces as pandas DataFrames.

Every engine that runs a scenario returns one (packet, ns2, linux), and
`tcplab reproduce`'s cache gives its traced runs back as one (with a claim's
reduction of the traces in `traces` when it asked for one). The hybrid AIMD
model's `tcplab.fluid.FluidResult` is the one other result type, for the
reason its docstring gives.

The metrics are computed from the tables' columns with numpy, and the two
tables become DataFrames only when read: building them and summing pandas
columns cost ten times what a short packet-engine run costs (bench/NOTES.md,
"Python around the engine"), and a sweep point reads only the metrics.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from tcplab.metrics import jain_index  # re-exported: it lives with the other metrics

__all__ = ["Result", "jain_index", "compute_metrics"]


def compute_metrics(flows, links, reference_bps: float, measured_s: float, plan=None) -> dict:
    """Summary metrics over the measurement window, from the per-flow and per-link
    tables: DataFrames, or dicts of columns (name -> list or array), which is
    how `Result.from_raw` calls it (plain numpy: no DataFrame is built for a run
    whose tables nobody reads). Sums are numpy's (pairwise), as pandas' are,
    NaN counted as 0, so the values are those pandas gives.

    With `plan` (the engine's Plan as a dict: `tcplab.plan.Plan.engine`), each flow
    is also measured against its own bottleneck (`tcplab.metrics.path_metrics`):
    `flows` gains the columns `bottleneck_bps`, `normalized_goodput` and
    `fair_share_bps` when it is a dict of columns, and the summary lists the
    `bottlenecks` and any `warnings`. Where the TCP flows have more than one
    bottleneck (a parking lot, two-way traffic) no sum of flows on different links
    is set against one link: `normalized_goodput` and `normalized_throughput` are
    NaN (each bottleneck's own are in `bottlenecks`), and Jain's index is taken over
    each flow's goodput divided by its max-min fair share."""
    kind = _col(flows, "kind", object)
    tcp, udp = kind == "tcp", kind == "udp"
    goodput = _col(flows, "goodput_bps", float)
    throughput = _col(flows, "throughput_bps", float)
    # NaN counts as 0 in sums (np.nansum's and pandas' way, done once here)
    gsum, tsum = (np.where(np.isnan(x), 0.0, x) for x in (goodput, throughput))
    m: dict = {"measured_s": measured_s, "reference_bps": reference_bps}
    m["tcp_goodput_bps"] = float(gsum[tcp].sum())
    m["tcp_throughput_bps"] = float(tsum[tcp].sum())
    m["udp_throughput_bps"] = float(tsum[udp].sum())
    paths = None
    if plan is not None and "id" in flows:
        from tcplab.metrics import path_metrics

        pflows = plan["flows"]
        ids = [int(i) for i in _col(flows, "id", None)]
        known = [0 <= i < len(pflows) for i in ids]
        routes = [list(pflows[i]["route"]["forward"]) if k else [] for i, k in zip(ids, known)]
        bottlenecks = [int(pflows[i]["bottleneck"]["forward"]) if k else -1 for i, k in zip(ids, known)]
        columns, paths = path_metrics(plan["links"], routes, bottlenecks, kind, goodput, throughput, links)
        if isinstance(flows, dict):
            flows.update(columns)
        m["bottlenecks"], m["warnings"] = paths["bottlenecks"], paths["warnings"]
    several = paths is not None and len(paths["bottlenecks"]) > 1
    if reference_bps > 0:
        m["normalized_goodput"] = m["tcp_goodput_bps"] / reference_bps if not several else float("nan")
        m["normalized_throughput"] = m["tcp_throughput_bps"] / reference_bps if not several else float("nan")
    if several:
        with np.errstate(invalid="ignore", divide="ignore"):
            m["jain_index"] = jain_index((goodput / columns["fair_share_bps"])[tcp])
        m["jain_index_of"] = "goodput / max-min fair share"
    else:
        m["jain_index"] = jain_index(goodput[tcp]) if tcp.any() else float("nan")
    bn = np.flatnonzero((_col(links, "name", object) == "bottleneck")
                        & (_col(links, "direction", object) == "forward"))
    if bn.size:
        i = bn[0]
        drops = _col(links, "drops", None)[i]
        m["bottleneck_utilization"] = float(_col(links, "utilization", None)[i])
        m["bottleneck_drops"] = int(drops)
        arrivals = _col(links, "arrivals", None)[i] if "arrivals" in links else None
        if arrivals is not None and not pd.isna(arrivals) and arrivals > 0:
            m["bottleneck_loss_rate"] = float(drops) / float(arrivals)
    for name in ("retransmissions", "timeouts", "fast_retransmits"):
        if name in flows:
            v = _col(flows, name, None)[tcp]
            if not pd.isna(v).any():
                m[f"tcp_{name}"] = int(v.sum())
    # Paper B's aggregated protocol goodput per group (B8 friendliness: ideally
    # each of two groups gets half); share = of all flows' goodput.
    total = float(gsum.sum())
    group = _col(flows, "group", object)
    m["groups"] = {}
    # one pass over the flows, however many groups (10^5 groups once took minutes
    # when each group scanned every flow): flows sorted by group, each group a slice
    labelled = np.flatnonzero([isinstance(x, str) for x in group.tolist()])
    if labelled.size:
        names, inverse = np.unique(group[labelled].astype(str), return_inverse=True)
        order = labelled[np.argsort(inverse, kind="stable")]
        bounds = np.searchsorted(np.sort(inverse), np.arange(len(names) + 1))
        for j, g in enumerate(names.tolist()):
            mine = order[bounds[j]:bounds[j + 1]]
            gp = float(gsum[mine].sum())
            m["groups"][g] = {
                "flows": int(mine.size), "goodput_bps": gp,
                "throughput_bps": float(tsum[mine].sum()),
                "share": gp / total if total > 0 else float("nan"),
                "normalized_goodput": gp / reference_bps if reference_bps > 0 and not several else float("nan"),
                "jain_index": jain_index(goodput[mine])}
    return m


def _col(table, name: str, dtype) -> np.ndarray:
    """One column of a DataFrame or a dict of columns as a numpy array (`dtype`
    None: as it comes; object for labels, so a missing one stays None/NaN)."""
    return np.asarray(table[name], dtype=dtype)


def _columns(table) -> dict:
    """A table as a dict of columns: a dict of columns as it is; a list of
    records (dicts) with the columns in order of first appearance and NaN where
    a record lacks a key, as `pd.DataFrame(records)` makes them."""
    if isinstance(table, Mapping):
        return dict(table)
    if isinstance(table, pd.DataFrame):
        return {k: table[k].to_numpy() for k in table.columns}
    keys = list(dict.fromkeys(k for r in table for k in r))
    return {k: [r.get(k, np.nan) for r in table] for k in keys}


class _Table:
    """A DataFrame attribute that may be set to a dict of columns instead: the
    DataFrame is then built when the attribute is first read, and kept."""

    def __set_name__(self, owner, name: str) -> None:
        self.slot = "_" + name

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        value = getattr(obj, self.slot)
        if not isinstance(value, pd.DataFrame):
            value = pd.DataFrame(value)
            setattr(obj, self.slot, value)
        return value

    def __set__(self, obj, value) -> None:
        setattr(obj, self.slot, value)


class Result:
    """One run's result (any engine): engine, engine_version, scenario (resolved),
    flows and links (DataFrames), metrics (dict), traces (name -> DataFrame)
    and wall_s (the engine's wall time, if timed).

    A result written by `tcplab.run(..., out=DIR)` reads its traces from
    DIR/traces/*.parquet when first used (`tcplab.tracefiles.TraceFiles`);
    while it is being written, a trace the engine streamed to disk is a
    `tcplab.tracefiles.SpilledTrace`.

    `flows` and `links` may be given as DataFrames or as dicts of columns; the
    DataFrame is then built when first read (most runs of a sweep only need
    the metrics, computed without it)."""

    flows = _Table()
    links = _Table()

    def __init__(self, engine: str, engine_version: str, scenario: dict, flows, links, metrics: dict,
                 traces: dict | None = None, wall_s: float | None = None):
        self.engine = engine
        self.engine_version = engine_version
        self.scenario = scenario
        self.flows = flows
        self.links = links
        self.metrics = metrics
        self.traces = {} if traces is None else traces
        self.wall_s = wall_s

    def __repr__(self) -> str:
        return (f"Result(engine={self.engine!r}, engine_version={self.engine_version!r}, "
                f"scenario={self.scenario.get('name', '')!r}, metrics={self.metrics!r}, "
                f"traces={sorted(self.traces)!r}, wall_s={self.wall_s!r})")

    @classmethod
    def from_raw(cls, raw: dict, wall_s: float | None = None) -> "Result":
        """Build from an engine's raw dict (flows and links as lists of records,
        or as dicts of columns)."""
        flows = _columns(raw["flows"])
        links = _columns(raw["links"])
        from tcplab.plan import Plan

        sc = raw["scenario"]
        measured_s = float(raw["measured_s"])
        plan = Plan(sc)  # one engine Plan for the rates and the paths (each built its own)
        reference_bps = float(raw.get("reference_bps") or plan.reference_bps)
        _fill_rates(flows, plan, measured_s)
        metrics = compute_metrics(flows, links, reference_bps, measured_s, plan.engine)
        if "events" in raw:
            metrics["events"] = int(raw["events"])
        playback = (raw.get("traces") or {}).get("playback")
        if playback is not None and len(playback):
            from tcplab.metrics import playback_success

            start = plan.warmup_s
            # paper B7: share of reads that got at least 70 % of their amount
            metrics["app_success_percentage"] = playback_success(
                playback, start, start + measured_s, 0.7)
        return cls(
            engine=raw["engine"],
            engine_version=str(raw["engine_version"]),
            scenario=sc,
            flows=flows,
            links=links,
            metrics=metrics,
            traces=dict(raw.get("traces") or {}),
            wall_s=wall_s,
        )

    def _repr_html_(self) -> str:
        """Rich display in Jupyter: the headline, metrics (with units), flows and links as tables."""
        import html

        from tcplab.provenance import units_of
        from tcplab.sweep.engines import flatten

        e = html.escape
        flat = flatten(self.metrics)
        units = units_of(flat)
        rows = "".join(f"<tr><td>{e(k)}</td><td>{e(_fmt(v))}</td><td>{e(units.get(k, ''))}</td></tr>"
                       for k, v in flat.items())
        name = self.scenario.get("name") or "scenario"
        wall = f", {self.wall_s:.2f} s wall" if self.wall_s is not None else ""
        traces = ", ".join(sorted(self.traces)) or "none"
        n = 20
        flows = self.flows.head(n).to_html(index=False, na_rep="–", float_format=lambda x: f"{x:.6g}")
        links = self.links.to_html(index=False, na_rep="–", float_format=lambda x: f"{x:.6g}")
        more = f" (first {n} of {len(self.flows)})" if len(self.flows) > n else ""
        return (f"<div><b>{e(str(name))}</b> — engine {e(self.engine)} {e(self.engine_version)}{e(wall)}; "
                f"traces: {e(traces)}"
                f"<details open><summary>metrics</summary><table><tr><th>metric</th><th>value</th>"
                f"<th>unit</th></tr>{rows}</table></details>"
                f"<details open><summary>flows{e(more)}</summary>{flows}</details>"
                f"<details><summary>links</summary>{links}</details></div>")

    def plot(self, kind: str = "cwnd", **kwargs):
        """A paper-style figure of this run's traces (`tcplab.plots.plot`):
        kind = cwnd | queue | seq | rate; returns the matplotlib Figure."""
        from tcplab.plots import plot

        return plot(self, kind, **kwargs)

    def metadata(self) -> dict:
        """What produced this result (`tcplab.provenance.metadata`): tcplab version,
        build, engine and its version, command line, time, host, Python and Rust
        versions, seed, and the unit of every flows/links column and metric."""
        from tcplab.provenance import metadata, units_of
        from tcplab.sweep.engines import flatten

        units = {f"flows.{c}": u for c, u in units_of(self.flows.columns).items()}
        units.update({f"links.{c}": u for c, u in units_of(self.links.columns).items()})
        units.update({f"metrics.{c}": u for c, u in units_of(flatten(self.metrics)).items()})
        for name in self.traces:
            units.update({f"traces.{name}.{c}": u for c, u in units_of(self.trace_columns(name)).items()})
        return metadata(engine=self.engine, engine_version=self.engine_version,
                        seed=self.scenario.get("seed"), units=units)

    def trace_columns(self, name: str) -> list[str]:
        """The column names of trace `name`, without reading a trace that is
        on disk (`tcplab.tracefiles`)."""
        columns = getattr(self.traces, "columns", None)
        if callable(columns):
            return columns(name)
        return list(self.traces[name].columns)

    def to_dict(self) -> dict:
        """The JSON summary (`summary.json`): everything but the traces, and
        `meta` (`Result.metadata()`)."""
        d = {
            "engine": self.engine,
            "engine_version": self.engine_version,
            "scenario": self.scenario,
            "metrics": self.metrics,
            "flows": _records(self.flows),
            "links": _records(self.links),
            "traces": sorted(self.traces),
        }
        if self.wall_s is not None:
            d["wall_s"] = self.wall_s
        d["meta"] = self.metadata()
        return d

    def save(self, out_dir: str | Path, formats=("parquet", "csv")) -> Path:
        """Write summary.json, flows/links CSV and traces (Parquet and CSV) into
        `out_dir`, whole or not at all, and never over files tcplab did not write
        (`tcplab.outdir`: a folder that is neither missing, empty nor a previous
        tcplab output is refused with a UserError; the output is written into a
        temporary sibling and renamed into place)."""
        from tcplab.outdir import write_output_dir

        return write_output_dir(out_dir, lambda tmp: self.write_into(tmp, formats))

    def write_into(self, folder: Path, formats=("parquet", "csv")) -> None:
        """Write the output files (what `save` writes) into an existing, empty
        `folder`. A trace streamed to disk during the run (a
        `tcplab.tracefiles.SpilledTrace`) is copied a chunk at a time."""
        from tcplab.provenance import units_of
        from tcplab.tracefiles import write_trace

        summary = self.to_dict()
        (folder / "summary.json").write_text(json.dumps(summary, indent=2, default=_json_default) + "\n")
        self.flows.to_csv(folder / "flows.csv", index=False)
        self.links.to_csv(folder / "links.csv", index=False)
        if self.traces:
            (folder / "traces").mkdir()
            for name in self.traces:
                meta = dict(summary["meta"], units=units_of(self.trace_columns(name)), table=name)
                write_trace(self.traces[name], folder / "traces", name, meta, formats)


def _fmt(v) -> str:
    """A metric for display: floats to 6 significant digits, None/NaN as a dash."""
    if v is None or (isinstance(v, float) and v != v):
        return "–"
    if isinstance(v, float):
        return f"{v:.6g}"
    return str(v)


def _fill_rates(flows: dict, plan, measured_s: float) -> None:
    """Goodput (payload) and throughput (on the wire) from delivered counts
    (`tcplab.plan.rates_bps`), where an engine reports only the counts
    (`flows`: a dict of columns; `plan`: the run's `tcplab.plan.Plan`)."""
    from tcplab.plan import rates_bps

    by_group = {f["group"]: int(f["packet_size"]) for f in plan.engine["flows"]}
    size = [by_group[g] for g in flows["group"]]
    goodput, throughput = rates_bps(flows["delivered_bytes"], flows["delivered_packets"], size, measured_s)
    for col, value in (("goodput_bps", goodput), ("throughput_bps", throughput)):
        if col in flows:
            given = np.asarray(flows[col])
            if given.dtype.kind not in "iuf":
                given = pd.to_numeric(given, errors="coerce")
            value = np.where(np.isnan(given), value, given) if given.dtype.kind == "f" else given
        flows[col] = value


def _records(df: pd.DataFrame) -> list[dict]:
    return json.loads(df.to_json(orient="records"))


def _json_default(o):
    if isinstance(o, (np.integer,)):
        return int(o)
    if isinstance(o, (np.floating,)):
        return float(o)
    raise TypeError(f"not JSON serializable: {type(o)}")
