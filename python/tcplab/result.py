"""The one shape of a result, whatever engine produced it.

A `Result` holds the resolved scenario, the engine's name and version, a
per-flow table, a per-link table, summary metrics (computed here, the same
way for every engine) and optional traces as pandas DataFrames.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from tcplab.metrics import jain_index  # re-exported: it lives with the other metrics

__all__ = ["Result", "jain_index", "compute_metrics"]


def compute_metrics(flows: pd.DataFrame, links: pd.DataFrame, reference_bps: float, measured_s: float) -> dict:
    """Summary metrics over the measurement window, from the per-flow and per-link tables."""
    tcp = flows[flows["kind"] == "tcp"]
    udp = flows[flows["kind"] == "udp"]
    m: dict = {"measured_s": measured_s, "reference_bps": reference_bps}
    m["tcp_goodput_bps"] = float(tcp["goodput_bps"].sum())
    m["tcp_throughput_bps"] = float(tcp["throughput_bps"].sum())
    m["udp_throughput_bps"] = float(udp["throughput_bps"].sum())
    if reference_bps > 0:
        m["normalized_goodput"] = m["tcp_goodput_bps"] / reference_bps
        m["normalized_throughput"] = m["tcp_throughput_bps"] / reference_bps
    m["jain_index"] = jain_index(tcp["goodput_bps"]) if len(tcp) else float("nan")
    bn = links[(links["name"] == "bottleneck") & (links["direction"] == "forward")]
    if len(bn):
        row = bn.iloc[0]
        m["bottleneck_utilization"] = float(row["utilization"])
        m["bottleneck_drops"] = int(row["drops"])
        arrivals = row.get("arrivals")
        if arrivals is not None and not pd.isna(arrivals) and arrivals > 0:
            m["bottleneck_loss_rate"] = float(row["drops"]) / float(arrivals)
    for col in ("retransmissions", "timeouts", "fast_retransmits"):
        if col in tcp and tcp[col].notna().all():
            m[f"tcp_{col}"] = int(tcp[col].sum())
    # Paper B's aggregated protocol goodput per group (B8 friendliness: ideally
    # each of two groups gets half); share = of all flows' goodput.
    total = float(flows["goodput_bps"].sum())
    m["groups"] = {
        g: {"flows": int(len(d)), "goodput_bps": float(d["goodput_bps"].sum()),
            "throughput_bps": float(d["throughput_bps"].sum()),
            "share": float(d["goodput_bps"].sum()) / total if total > 0 else float("nan"),
            "normalized_goodput": (float(d["goodput_bps"].sum()) / reference_bps
                                   if reference_bps > 0 else float("nan")),
            "jain_index": jain_index(d["goodput_bps"])}
        for g, d in flows.groupby("group", sort=True)
    }
    return m


@dataclass
class Result:
    engine: str
    engine_version: str
    scenario: dict
    flows: pd.DataFrame
    links: pd.DataFrame
    metrics: dict
    traces: dict = field(default_factory=dict)
    wall_s: float | None = None

    @classmethod
    def from_raw(cls, raw: dict, wall_s: float | None = None) -> "Result":
        """Build from an engine's raw dict (flows and links as lists of dicts)."""
        flows = pd.DataFrame(raw["flows"])
        links = pd.DataFrame(raw["links"])
        sc = raw["scenario"]
        measured_s = float(raw["measured_s"])
        reference_bps = float(raw.get("reference_bps") or _reference_bps(sc))
        _fill_rates(flows, sc, measured_s)
        metrics = compute_metrics(flows, links, reference_bps, measured_s)
        if "events" in raw:
            metrics["events"] = int(raw["events"])
        playback = (raw.get("traces") or {}).get("playback")
        if playback is not None and len(playback):
            from tcplab.metrics import playback_success
            from tcplab.units import parse_duration

            start = parse_duration(sc.get("warmup", 0.0), "warmup")
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

    def plot(self, kind: str = "cwnd", **kwargs):
        """A paper-style figure of this run's traces (`tcplab.plots.plot`):
        kind = cwnd | queue | seq | rate; returns the matplotlib Figure."""
        from tcplab.plots import plot

        return plot(self, kind, **kwargs)

    def to_dict(self) -> dict:
        """The JSON summary (`summary.json`): everything but the traces."""
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
        return d

    def save(self, out_dir: str | Path, formats=("parquet", "csv")) -> Path:
        """Write summary.json, flows/links CSV and traces (Parquet and CSV) into
        `out_dir` atomically: everything is written to a temporary sibling
        first, so an error leaves no partial output behind."""
        out = Path(out_dir)
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
        try:
            (tmp / "summary.json").write_text(json.dumps(self.to_dict(), indent=2, default=_json_default) + "\n")
            self.flows.to_csv(tmp / "flows.csv", index=False)
            self.links.to_csv(tmp / "links.csv", index=False)
            if self.traces:
                (tmp / "traces").mkdir()
                for name, df in self.traces.items():
                    if "parquet" in formats:
                        df.to_parquet(tmp / "traces" / f"{name}.parquet", index=False)
                    if "csv" in formats:
                        df.to_csv(tmp / "traces" / f"{name}.csv", index=False)
            if out.exists():
                shutil.rmtree(out)
            os.replace(tmp, out)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        return out


def _fill_rates(flows: pd.DataFrame, sc: dict, measured_s: float) -> None:
    """Goodput (payload) and throughput (on the wire) from delivered counts,
    where an engine reports only the counts."""
    size = flows["group"].map(lambda g: sc["flows"][g].get("packet_size", 1000)).astype(float)
    goodput = flows["delivered_bytes"].astype(float) * 8.0 / measured_s
    throughput = flows["delivered_packets"].astype(float) * size * 8.0 / measured_s
    for col, value in (("goodput_bps", goodput), ("throughput_bps", throughput)):
        if col not in flows:
            flows[col] = value
        else:
            flows[col] = pd.to_numeric(flows[col], errors="coerce").fillna(value)


def _reference_bps(sc: dict) -> float:
    """The normalizing rate, computed by the engine's schema (one definition for
    every engine: "capacity", "free" = capacity minus the mean UDP rate of any
    shape, or an explicit rate)."""
    from tcplab.scenario import _core

    return float(_core().reference_bps(json.dumps(sc)))


def _records(df: pd.DataFrame) -> list[dict]:
    return json.loads(df.to_json(orient="records"))


def _json_default(o):
    if isinstance(o, (np.integer,)):
        return int(o)
    if isinstance(o, (np.floating,)):
        return float(o)
    raise TypeError(f"not JSON serializable: {type(o)}")
