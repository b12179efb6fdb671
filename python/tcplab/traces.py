"""Trace tables in one shape, whatever engine recorded them; and run directories.

Engines name and cut their traces differently. The packet engine records

* ``tcp``    t, flow, cwnd, ssthresh, inflight, ack  (every ack, or sampled)
* ``sends``  t, flow, seq, rtx                         (every data packet sent)
* ``queue``  t, link, tcp, udp                          (every link, by class)
* ``drops``  t, link, flow, seq, cause (code, see DROP_CAUSES)

while the ns-2 backend writes ``cwnd`` (t, flow, cwnd, ssthresh), ``seq``
(t, flow, seq = highest sent, ack; on change), ``inflight``, ``queue``
(t, link = "bottleneck", packets; forward bottleneck only) and ``drops``
(t, link = "bottleneck", flow).

`canonical` turns either into the same tables, so that metrics and plots are
written once:

* ``tcp``    t, flow, cwnd, ssthresh, and where recorded inflight, ack, seq
  (``seq`` = highest sequence number sent so far)
* ``sends``  t, flow, seq, rtx — only where the engine records every send
* ``queue``  t, link (integer link id), packets, and where recorded tcp, udp;
  one row per link and instant (the state after it)
* ``drops``  t, link (integer link id), flow, and where recorded seq and
  cause (a string: one of DROP_CAUSES)
* ``rtt``    t, flow, srtt, rttvar (seconds), backoff, and where recorded rto
  (seconds, backoff included; ns-2 has no RTO variable) — on every change

Link ids follow the result's ``links`` table (0 = forward bottleneck). All
tables are sorted by time (stable, so rows of one instant keep their order).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from tcplab.provenance import read_parquet

__all__ = ["canonical", "load_run", "payload_bytes", "base_rtt_s"]

TABLES = ("tcp", "sends", "queue", "drops", "udp", "rtt", "playback")

# Why a packet was lost, in the engine's code order (net/link.rs DropCause).
DROP_CAUSES = ("overflow", "red", "threshold", "error", "outage")


def canonical(traces: dict, links: pd.DataFrame | None = None) -> dict:
    """The engine's trace tables (dict of DataFrames) in the canonical shape above.

    Idempotent: canonical tables pass through unchanged. Tables a run did not
    record are simply absent.
    """
    out: dict = {}
    tcp = _tcp_table(traces)
    if tcp is not None:
        out["tcp"] = tcp
    if "sends" in traces:
        out["sends"] = _by_time(traces["sends"])
    if "queue" in traces:
        q = traces["queue"].copy()
        q["link"] = _link_ids(q["link"], links)
        if "packets" not in q:
            q["packets"] = q["tcp"].astype("int64") + q["udp"].astype("int64")
        cols = ["t", "link", "packets"] + [c for c in ("tcp", "udp") if c in q]
        # Several changes at one instant (an arrival and a departure): keep the
        # state after the instant, as the ns-2 backend does.
        q = _by_time(q[cols])
        out["queue"] = q[~q.duplicated(["link", "t"], keep="last")].reset_index(drop=True)
    if "drops" in traces:
        d = traces["drops"].copy()
        d["link"] = _link_ids(d["link"], links)
        if "cause" in d and pd.api.types.is_integer_dtype(d["cause"]):
            d["cause"] = pd.Categorical.from_codes(d["cause"].to_numpy(), categories=list(DROP_CAUSES))
        cols = ["t", "link", "flow"] + [c for c in ("seq", "cause") if c in d]
        out["drops"] = _by_time(d[cols])
    if "udp" in traces:  # every UDP packet delivered: t, flow, seq
        out["udp"] = _by_time(traces["udp"])
    if "rtt" in traces:  # RTT estimator: t, flow, srtt, rttvar, backoff, and where recorded rto
        out["rtt"] = _by_time(traces["rtt"])
    if "playback" in traces:  # one row per playback read of a CBR-over-TCP flow
        out["playback"] = _by_time(traces["playback"])
    return out


def _tcp_table(traces: dict) -> pd.DataFrame | None:
    if "tcp" in traces:
        return _by_time(traces["tcp"])
    parts = []
    if "cwnd" in traces:
        parts.append(traces["cwnd"][["t", "flow", "cwnd", "ssthresh"]])
    if "seq" in traces:
        parts.append(traces["seq"][["t", "flow", "seq", "ack"]])
    if "inflight" in traces:
        parts.append(traces["inflight"][["t", "flow", "inflight"]])
    if not parts:
        return None
    df = parts[0]
    for p in parts[1:]:
        df = df.merge(p, on=["t", "flow"], how="outer", sort=False)
    df = df.sort_values(["flow", "t"], kind="stable")
    # Series recorded on change: carry each value forward within its flow.
    value_cols = [c for c in df.columns if c not in ("t", "flow")]
    df[value_cols] = df.groupby("flow", sort=False)[value_cols].ffill()
    return _by_time(df.dropna(subset=value_cols[:1]))


def _link_ids(col: pd.Series, links: pd.DataFrame | None) -> np.ndarray:
    """Integer link ids; names (ns-2 writes "bottleneck") become the id of the
    forward link of that name (row order of `links` if it has no id column)."""
    if pd.api.types.is_integer_dtype(col):
        return col.to_numpy()
    ids = {"bottleneck": 0}
    if links is not None and len(links):
        lk = links.reset_index(drop=True)
        lid = lk["id"] if "id" in lk else pd.Series(range(len(lk)))
        fwd = lk["direction"] == "forward" if "direction" in lk else pd.Series(True, index=lk.index)
        for i in lk.index[fwd][::-1]:
            ids[lk.at[i, "name"]] = int(lid[i])
    return col.map(lambda v: ids.get(v, v) if isinstance(v, str) else v).astype("int64").to_numpy()


def _by_time(df: pd.DataFrame) -> pd.DataFrame:
    t = df["t"].to_numpy()
    if len(t) > 1 and np.any(t[1:] < t[:-1]):
        df = df.iloc[np.argsort(t, kind="stable")]
    return df.reset_index(drop=True)


def payload_bytes(flows: pd.DataFrame, scenario: dict) -> pd.Series:
    """Payload bytes per data packet of each flow (index = flow id), as
    `tcplab.plan.payload_bytes` defines them for the flow's group (from one
    engine plan of the scenario: a run can have hundreds of flows in a handful
    of groups)."""
    from tcplab.plan import Plan

    p = Plan(scenario)
    per_group = {g: float(p.payload_bytes(g)) for g in pd.unique(flows["group"])}
    return pd.Series(flows["group"].map(per_group).to_numpy(dtype=float), index=flows["id"].to_numpy())


def base_rtt_s(scenario: dict, group: str | None = None) -> float:
    """Round-trip propagation delay (s) of a flow of `group` (default: the first
    TCP group): the delays of its forward and reverse routes, no queueing
    (`tcplab.plan.Plan.base_rtt_s`; on the dumbbell, twice access + bottleneck +
    sink access)."""
    from tcplab.plan import plan

    return plan(scenario).base_rtt_s(group)


def load_run(run_dir: str | Path):
    """A `Result` from a `tcplab run --out RUN_DIR` directory (summary.json,
    traces/*.parquet, or traces/*.csv where Parquet is absent)."""
    from tcplab.errors import UserError
    from tcplab.result import Result

    d = Path(run_dir)
    summary_path = d / "summary.json"
    if not summary_path.is_file():
        raise UserError(f"{run_dir}: not a run directory (no summary.json; write one with `tcplab run ... --out DIR`)")
    s = json.loads(summary_path.read_text())
    traces = {}
    tdir = d / "traces"
    for name in s.get("traces", []):
        pq, csv = tdir / f"{name}.parquet", tdir / f"{name}.csv"
        if pq.is_file():
            traces[name] = read_parquet(pq)
        elif csv.is_file():
            traces[name] = pd.read_csv(csv)
    return Result(engine=s["engine"], engine_version=str(s["engine_version"]), scenario=s["scenario"],
                  flows=pd.DataFrame(s["flows"]), links=pd.DataFrame(s["links"]), metrics=s["metrics"],
                  traces=traces, wall_s=s.get("wall_s"))
