"""The lab's worker processes: every scenario the page sends is parsed, checked
and run here, never in the server, so that a hostile scenario costs a worker
(killed on cancel, on a timeout or when the server stops), never the server.

Two kinds, both started with `multiprocessing`'s spawn context and both
importing the engine before they are needed (a run starts in milliseconds):

- the *quick* worker (long-lived) answers "analyze" requests: TOML text plus
  control changes → the scenario resolved by the engine (the CLI's checks), its
  controls, its TOML, the closed forms and the fluid model (`tcplab.lab.answers`);
- a *run* worker runs one scenario on one engine at a time, streams its
  progress, writes its files into the job's folder and sends the answer
  (metrics, flows, plot data, the "why" sentences), then waits for the next run;
  cancelling a run kills its worker.

Messages are dicts sent over a `multiprocessing.Pipe`.
"""

from __future__ import annotations

import copy
import ctypes
import json
import math
import os
import signal
import struct
import threading
import time
import tomllib
from pathlib import Path
from typing import Any, Mapping

#: largest TOML text a request may carry (bytes); the server refuses larger bodies first
MAX_TOML_BYTES = 256 * 1024
#: points per plotted series (min/max per time bucket beyond that)
MAX_POINTS = 800
#: packets of the sequence plot outside its loss episodes (those are kept whole)
MAX_SEQ_POINTS = 2000
#: flows whose cwnd is drawn
MAX_CWND_FLOWS = 10
#: rows of the per-flow table sent to the page
MAX_FLOW_ROWS = 200
#: events (the engine's estimate) up to which every trace is recorded at every change
FULL_TRACE_EVENTS = 2_000_000
#: rows the engine holds before writing a trace table to the job folder (the progress's grain)
SPILL_ROWS = 2048
#: samples of cwnd and queue over a run too large to trace at every change
SAMPLES = 2000


def _die_with_parent() -> None:
    """Linux: this process gets SIGKILL when the server process ends, however it ends."""
    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except OSError:
        pass


def serve(conn, kind: str, folder: str | None = None) -> None:
    """A worker's main: import the engine, say "ready", then serve requests (quick) or runs
    (run). `folder` is the lab's own folder, where its warm-up run writes."""
    _die_with_parent()
    # Ctrl-C in the terminal reaches the whole process group: the server stops
    # the workers itself, in order. It stops one with SIGTERM, raised here as
    # KeyboardInterrupt (the packet engine checks for it every few ms of work), so
    # that an engine cleans up as after Ctrl-C in the CLI (ns-2's process, the
    # linux engine's namespaces); SIGKILL only if it has not ended after a grace time.
    signal.signal(signal.SIGINT, signal.SIG_IGN)

    def _term(signum, frame):
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, _term)
    try:
        import tcplab.lab.answers  # noqa: F401  (the engine, numpy, pandas: imported now, not per request)
        from tcplab.scenario import _core

        _core()
        _warm_up(kind, folder)
    except KeyboardInterrupt:
        return  # stopped (Ctrl-C: the server's SIGTERM) while warming up: no traceback, nothing to clean
    conn.send({"type": "ready", "pid": os.getpid()})
    try:
        while True:
            try:
                req = conn.recv()
            except EOFError:
                return
            if kind == "quick":
                op = {"gallery": gallery, "doc": checked_doc}.get(req.get("op"), analyze)
                conn.send(_answer(op, req))
            else:
                # a run worker serves run after run; the server kills it to cancel one
                conn.send(_answer(lambda r: run_job(r, conn), req))
    finally:
        conn.close()


#: a small scenario every worker answers once before it says "ready", so that the
#: first real request finds every lazy import done and every cache warm
_WARM = """
duration = "2s"
[topology]
bottleneck = { rate = "1Mbps", delay = "10ms", buffer = 10 }
access = { rate = "10Mbps", delay = "1ms", buffer = 100 }
sink_access = { rate = "10Mbps", delay = "1ms", buffer = 100 }
[flows.tcp]
kind = "tcp"
count = 2
"""


def _warm_up(kind: str, folder: str | None) -> None:
    import shutil
    import tempfile

    class _Null:
        def send(self, msg):
            pass

    try:
        ans = analyze({"toml": _WARM})
        if kind == "quick":
            gallery({})
        if kind == "run" and folder:
            # inside the lab's folder: removed with it, however this process ends
            tmp = tempfile.mkdtemp(prefix=f"warm-{os.getpid()}-", dir=folder)
            try:
                run_job({"doc": ans["doc"], "engine": "packet", "folder": tmp}, _Null())
            finally:
                shutil.rmtree(tmp, ignore_errors=True)
    except Exception:  # a warm-up is an optimization; the real request reports any error
        pass


def json_safe(value):
    """`value` as strict JSON takes it (what a browser's JSON.parse reads): NaN and ±inf
    become None, numpy numbers plain numbers, tuples lists."""
    from tcplab.lab.answers import _plain

    return _plain(value)


def _answer(fn, req) -> dict:
    from tcplab.errors import UserError

    try:
        return {"type": "result", **json_safe(fn(req))}
    except UserError as exc:
        return {"type": "error", "message": str(exc), "key": error_key(str(exc))}
    except (ValueError, TypeError, KeyError, OverflowError, RecursionError) as exc:
        return {"type": "error", "message": f"scenario: {exc}", "key": error_key(str(exc))}


def error_key(message: str) -> str | None:
    """The key path an engine error names ("scenario: flows.tcp.beta: must be …" → flows.tcp.beta)."""
    text = message
    for prefix in ("scenario: ", "overrides: "):
        if text.startswith(prefix):
            text = text[len(prefix):]
    head = text.split(":", 1)[0].strip()
    if head and " " not in head and all(part for part in head.split(".")):
        return head
    return None


# --- scenarios -----------------------------------------------------------------------


def read_doc(req: Mapping) -> dict:
    """The scenario document a request describes: its TOML text (`toml`) with its
    control changes (`set`: {key path: value}) applied; a rate table that names a
    CSV file is read only for an example scenario (`example`), from the package."""
    from tcplab.errors import UserError
    from tcplab.lab import knobs
    from tcplab.resources import data_dir
    from tcplab.scenario import _rate_files, check_depth, read_rate_files

    text = req.get("toml")
    if not isinstance(text, str):
        raise UserError("toml: expected the scenario's TOML text")
    if len(text.encode()) > MAX_TOML_BYTES:
        raise UserError(f"toml: the scenario is {len(text.encode())} bytes, more than the lab's limit of "
                        f"{MAX_TOML_BYTES} bytes")
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise UserError(f"toml: {exc}") from None
    except RecursionError:
        raise UserError("toml: arrays or tables nested too deeply") from None
    check_depth(doc, "toml")
    sets = req.get("set") or {}
    if not isinstance(sets, Mapping):
        raise UserError("set: expected {key path: value}")
    for key, value in sets.items():
        if not isinstance(key, str) or not key or any(not p for p in key.split(".")):
            raise UserError(f"set: {key!r} is not a key path such as flows.tcp.count")
        doc = knobs.set_value(doc, key, value)
    if _rate_files(doc):
        example = req.get("example")
        if not (isinstance(example, str) and example in {p.stem for p in (data_dir() / "scenarios").glob("*.toml")}):
            raise UserError("a rate table names a `file`: the lab reads trace files only for the example "
                            "scenarios; paste the points inline (rate = { shape = \"piecewise\", points = [...] })")
        doc = read_rate_files(doc, data_dir() / "scenarios", replace_points=False)
    return doc


def gallery(req: Mapping) -> dict:
    """The papers' gallery (`tcplab.lab.gallery`; it imports the reproduction, so a worker builds it)."""
    from tcplab.lab.gallery import cards

    report = req.get("report")
    return {"cards": cards(Path(report) if report else None)}


def checked_doc(req: Mapping) -> dict:
    """The request's scenario document, checked as a run checks it before it starts
    (the engine's resolution and Plan), without the answers."""
    from tcplab.scenario import _core, resolve

    doc = read_doc(req)
    _core().plan(json.dumps(resolve(doc)))
    return {"doc": doc}


def analyze(req: Mapping) -> dict:
    """Controls, TOML and the instant answers for a request (see `read_doc`)."""
    from tcplab.lab import answers, knobs, tomlout
    from tcplab.scenario import resolve

    t0 = time.perf_counter()
    doc = read_doc(req)
    resolved = resolve(doc)
    # the Plan too: what a run would refuse before it starts (a plan that cannot be built)
    from tcplab.scenario import _core

    _core().plan(json.dumps(resolved))
    quick = answers.quick(resolved)
    quick["why"] = answers.why(quick["facts"], quick["predictions"], None)
    return {"doc": doc, "toml": tomlout.dumps(doc), "controls": knobs.controls(resolved),
            "name": resolved.get("name", ""), "description": resolved.get("description", ""),
            "quick": quick, "ms_total": (time.perf_counter() - t0) * 1e3}


# --- runs ----------------------------------------------------------------------------


def _progress_thread(folder: Path, total_s: float, conn, stop: threading.Event) -> threading.Thread:
    """Send the run's simulated time every 100 ms: the last time the engine wrote
    into the tcp trace table's time column in the job folder."""
    lock = threading.Lock()

    def loop():
        last = -1.0
        path = folder / "tcp.t"
        while not stop.wait(0.1):
            try:
                n = path.stat().st_size // 8
                if not n:
                    continue
                with open(path, "rb") as fh:
                    fh.seek((n - 1) * 8)
                    t = struct.unpack("<d", fh.read(8))[0]
            except (OSError, struct.error):
                continue
            if t > last:
                last = t
                with lock:
                    conn.send({"type": "progress", "done_s": t, "total_s": total_s})

    th = threading.Thread(target=loop, daemon=True)
    th.start()
    return th


def run_job(req: Mapping, conn) -> dict:
    """Run `req["doc"]` on `req["engine"]`; files into `req["folder"]`."""
    from tcplab.errors import UserError
    from tcplab.plan import Plan
    from tcplab.scenario import resolve

    engine = req.get("engine", "packet")
    folder = Path(req["folder"])
    doc = req["doc"]
    sc = resolve(doc)
    total = Plan(sc).end_s
    t0 = time.perf_counter()
    if engine == "packet":
        res, spill = _run_packet(sc, folder, total, conn)
    elif engine in ("ns2", "linux"):
        res = _run_other(sc, engine, total, conn)
        spill = None
    else:
        raise UserError(f"engine: unknown engine {engine!r}; expected packet, ns2 or linux")
    wall = time.perf_counter() - t0
    out = describe(res, wall)
    from tcplab.lab import answers

    f = answers.facts(sc)
    out["why"] = answers.why(f, answers.predictions(sc), out)
    _write_files(res, doc, folder)
    if spill is not None:
        import shutil

        shutil.rmtree(spill, ignore_errors=True)
    out["files"] = sorted(p.name for p in folder.iterdir() if p.is_file())
    return out


def trace_plan(sc: Mapping) -> tuple[list[str], str | None]:
    """Which traces a lab run records: every change of cwnd, queue, sequence numbers
    and drops while the engine's estimate is small; beyond `FULL_TRACE_EVENTS`,
    cwnd and queue sampled `SAMPLES` times over the run, and drops (no per-packet sends)."""
    from tcplab.plan import Plan
    from tcplab.scenario import _core

    est = dict(_core().estimate_budget(json.dumps(sc)))
    if est["events"] <= FULL_TRACE_EVENTS:
        return ["cwnd", "queue", "seq", "drops"], None
    return ["cwnd", "queue", "drops"], f"{Plan(sc).end_s / SAMPLES:.6g}s"


def _run_packet(sc: dict, folder: Path, total: float, conn):
    from tcplab.api import _arrays, _trace_frame
    from tcplab.errors import UserError
    from tcplab.result import Result
    from tcplab.scenario import _core, resolve
    from tcplab.tracefiles import SpilledTrace

    series, interval = trace_plan(sc)
    sc = copy.deepcopy(sc)
    sc["trace"] = {"series": series, "interval": interval or "0s"}
    sc = resolve(sc)
    spill = folder / "spill"
    stop = threading.Event()
    th = _progress_thread(spill, total, conn, stop)
    t0 = time.perf_counter()
    try:
        # sampled traces of many flows: larger writes (the progress stays fine-grained)
        rows = SPILL_ROWS if interval is None else 4 * SPILL_ROWS
        resolved, summary, traces = _core().run_scenario(json.dumps(sc), trace_dir=str(spill), trace_rows=rows)
    except ValueError as exc:
        raise UserError(f"scenario: {exc}") from None
    finally:
        stop.set()
        th.join()
    wall = time.perf_counter() - t0
    conn.send({"type": "progress", "done_s": total, "total_s": total})

    raw = dict(summary, flows=_arrays(summary["flows"]), links=_arrays(summary["links"]))
    raw["scenario"] = json.loads(resolved)
    raw["traces"] = {name: SpilledTrace(spill, *cols).to_frame() if isinstance(cols, tuple)
                     else _trace_frame(cols) for name, cols in traces.items()}
    return Result.from_raw(raw, wall_s=wall), spill


def _run_other(sc: dict, engine: str, total: float, conn):
    import shutil

    from tcplab import progress
    from tcplab.api import _run_engine
    from tcplab.errors import UserError

    if engine == "ns2" and not shutil.which("ns"):
        raise UserError("engine ns2: ns-2 is not installed here (Debian: apt-get install ns2)")
    if engine == "linux" and os.geteuid() != 0:
        raise UserError("engine linux: the linux engine needs root (network namespaces); "
                        "start the lab as root to use it")
    sc = copy.deepcopy(sc)
    # what each records (the linux engine samples TCP_INFO: no queue trace)
    series = ["cwnd", "queue", "drops"] if engine == "ns2" else ["cwnd", "drops"]
    sc["trace"] = {"series": series, "interval": "0s"}
    last = [0.0]

    def report(done_s, total_s):
        now = time.monotonic()
        if now - last[0] >= 0.1:
            last[0] = now
            conn.send({"type": "progress", "done_s": float(done_s), "total_s": float(total_s)})

    progress._local.callback = report
    try:
        return _run_engine(sc, engine, False)
    finally:
        progress._local.callback = None


def _write_files(res, doc: Mapping, folder: Path) -> None:
    """What the page offers to download: the scenario (TOML), the flows table and the
    traces (Parquet), the summary (JSON)."""
    import pandas as pd

    from tcplab.lab import tomlout

    (folder / "scenario.toml").write_text(tomlout.dumps(doc))
    flows = res.flows.copy()
    flows.insert(0, "engine", res.engine)
    flows.to_parquet(folder / "flows.parquet", index=False)
    for name, df in (res.traces or {}).items():
        if isinstance(df, pd.DataFrame) and name in ("tcp", "queue", "drops", "sends"):
            df.to_parquet(folder / f"trace-{name}.parquet", index=False)
    (folder / "summary.json").write_text(json.dumps(res.to_dict(), default=str))


# --- what the page draws -------------------------------------------------------------


def downsample(t, y, max_points: int = MAX_POINTS):
    """(t, y) of a step series with at most about `max_points` points: the min and the
    max of each of max_points/2 time buckets beyond that (a sawtooth keeps its peaks)."""
    import numpy as np

    t = np.asarray(t, dtype=float)
    y = np.asarray(y, dtype=float)
    if t.size <= max_points:
        return t, y
    k = max_points // 2
    edges = np.linspace(t[0], t[-1], k + 1)
    starts = np.unique(np.searchsorted(t, edges[:-1], side="left"))
    starts = starts[starts < t.size]
    hi = np.maximum.reduceat(y, starts)
    lo = np.minimum.reduceat(y, starts)
    ends = np.r_[starts[1:], t.size]
    tm = (t[starts] + t[ends - 1]) / 2
    tt = np.empty(2 * starts.size)
    yy = np.empty(2 * starts.size)
    tt[0::2], tt[1::2] = t[starts], tm
    yy[0::2], yy[1::2] = hi, lo
    return tt, yy


def _r(a, nd=4):
    """Numbers for JSON: rounded to `nd` decimals, NaN and ±inf as None."""
    import numpy as np

    x = np.round(np.asarray(a, dtype=float), nd)
    out = x.tolist()
    if not np.isfinite(x).all():
        out = [v if math.isfinite(v) else None for v in out]
    return out


def describe(res, wall_s: float) -> dict:
    """A run as the page shows it: metrics, flows, the summary the "why" reads, plot data."""
    import numpy as np
    import pandas as pd

    from tcplab.metrics import (allotted_goodput, congestion_events, loss_events, slowstart_cycles,
                                slowstart_phase_counts, synchronization)
    from tcplab.plan import first_data_seq, payload_bytes, plan
    from tcplab.traces import canonical

    m = res.metrics
    keys = ("measured_s", "reference_bps", "tcp_goodput_bps", "tcp_throughput_bps", "udp_throughput_bps",
            "normalized_goodput", "normalized_throughput", "jain_index", "bottleneck_utilization",
            "bottleneck_drops", "bottleneck_loss_rate", "tcp_retransmissions", "tcp_timeouts",
            "tcp_fast_retransmits", "events")
    metrics = {k: m[k] for k in keys if k in m}
    flows = res.flows
    cols = [c for c in ("id", "group", "kind", "variant", "goodput_bps", "delivered_packets", "retransmissions",
                        "timeouts", "fast_retransmits", "drops") if c in flows]
    out: dict[str, Any] = {"engine": res.engine, "engine_version": res.engine_version, "wall_s": wall_s,
                           "metrics": metrics, "flow_count": int(len(flows)),
                           "flows": json.loads(flows[cols].head(MAX_FLOW_ROWS).to_json(orient="records"))}
    summary: dict = {}
    plots: dict = {}
    tr = canonical(res.traces or {}, res.links) if res.traces else {}
    sc = res.scenario
    p = plan(sc, resolved=True)
    start, end = p.warmup_s, p.end_s
    rtt = p.base_rtt_s() if (flows["kind"] == "tcp").any() else None
    tcp = tr.get("tcp")
    tcp_ids = flows.loc[flows["kind"] == "tcp", "id"].tolist()
    drops = tr.get("drops")
    if drops is not None and tcp_ids and rtt:
        # paper C, Sec. V.E: drops within one RTT are one loss event of a flow, loss events
        # within one RTT one congestion event; E[M]/N flows hit per event (as metrics.summarize)
        d = drops[(drops["link"] == 0) & drops["flow"].isin(tcp_ids) & (drops["t"] > start) & (drops["t"] <= end)]
        le = loss_events(d["t"], d["flow"], rtt)
        ce = congestion_events(le["t"], le["flow"], rtt)
        summary["synchronization"] = synchronization(ce["flows_hit"], len(tcp_ids))
    if tcp is not None and not tcp.empty and tcp_ids and "ssthresh" in tcp and len(tcp_ids) <= MAX_CWND_FLOWS:
        # paper D's slow-start phases per cycle, counted over the flows
        cyc = []
        for fid in tcp_ids:
            f = tcp[tcp["flow"] == fid]  # the whole trace, as metrics.summarize counts them
            cyc.append(slowstart_cycles(f["cwnd"].to_numpy(float), f["ssthresh"].to_numpy(float), t=f["t"].to_numpy(float)))
        summary["slowstart_cycles"] = slowstart_phase_counts(np.concatenate(cyc) if cyc else [])
    if tcp is not None and not tcp.empty and tcp_ids:
        tcp = tcp[tcp["flow"].isin(tcp_ids)]
        lines = []
        for fid in tcp_ids[:MAX_CWND_FLOWS]:
            f = tcp[tcp["flow"] == fid]
            tt, yy = downsample(f["t"].to_numpy(), f["cwnd"].to_numpy())
            lines.append({"flow": int(fid), "t": _r(tt), "y": _r(yy, 3)})
        plots["cwnd"] = {"flows": lines, "shown": len(lines), "of": len(tcp_ids)}
        if "ack" in tcp:
            groups = flows.set_index("id").loc[tcp_ids, "group"]
            per_group = {g: payload_bytes(sc, g) for g in groups.unique()}
            pay = pd.Series([per_group[g] for g in groups], index=tcp_ids, dtype=float)
            al = allotted_goodput(tcp, pay, 1.0, 0.0, end, flows, first_data_seq(sc))
            g = {str(name): _r(al[ids.index].sum(axis=1, min_count=1).to_numpy() / 1e6, 4)
                 for name, ids in groups.groupby(groups)}
            plots["goodput"] = {"t": _r(al.index.to_numpy() + 1.0), "groups": g}
            live = al[(al.index >= start) & (al.index + 1.0 <= end)]
            if live.size:
                vals = live.to_numpy()
                summary["stalled_share"] = float(np.mean(vals[~np.isnan(vals)] == 0)) if (~np.isnan(vals)).any() else None
    q = tr.get("queue")
    if q is not None and not q.empty:
        q0 = q[q["link"] == 0]
        if "packets" in q0:  # ns-2's and the linux engine's queue trace: one occupancy column
            occ = q0["packets"].to_numpy(dtype=float)
        else:
            occ = q0["tcp"].to_numpy(dtype=float) + (q0["udp"].to_numpy(dtype=float) if "udp" in q0 else 0)
        tt, yy = downsample(q0["t"].to_numpy(), occ)
        plots["queue"] = {"t": _r(tt), "y": _r(yy, 2), "buffer": int(p.bottleneck()["buffer_pkts"])}
    drops = tr.get("drops")
    sends = tr.get("sends")
    if drops is not None and tcp_ids:
        d0 = drops[(drops["link"] == 0) & drops["flow"].isin(tcp_ids)] if "link" in drops else drops
        plots["drops"] = {"t": _r(d0["t"].to_numpy()[:5000])}
    if sends is not None and not sends.empty and tcp_ids:
        fid = tcp_ids[0]
        rtt = p.base_rtt_s()
        d1 = drops[drops["flow"] == fid] if drops is not None and "seq" in drops else None
        # the first loss episodes after the warm-up at full resolution, the rest thinned
        episodes = np.array([])
        if d1 is not None and len(d1):
            ev = d1["t"].to_numpy()
            firsts = ev[np.r_[True, np.diff(ev) > 2 * rtt]]
            episodes = firsts[firsts > start][:2] if (firsts > start).any() else firsts[:2]

        def pick(df):
            t = df["t"].to_numpy()
            keep = np.zeros(len(df), dtype=bool)
            keep[::max(1, len(df) // MAX_SEQ_POINTS)] = True
            for te in episodes:
                keep |= (t >= te - 3 * rtt) & (t <= te + 10 * rtt)
            return df[keep]

        s0 = pick(sends[sends["flow"] == fid])
        seq = {"flow": int(fid), "t": _r(s0["t"]), "seq": _r(s0["seq"], 0),
               "rtx": [bool(x) for x in s0["rtx"].to_numpy()] if "rtx" in s0 else []}
        if tcp is not None and "ack" in tcp:
            a0 = pick(tcp[tcp["flow"] == fid])
            seq["ack_t"], seq["ack"] = _r(a0["t"]), _r(a0["ack"], 0)
        if d1 is not None:
            seq["drop_t"], seq["drop_seq"] = _r(d1["t"].head(5000)), _r(d1["seq"].head(5000), 0)
        seq["episodes"] = _r(episodes)
        plots["seq"] = seq
    out["summary"] = summary
    out["plots"] = plots
    out["rtt_s"] = p.base_rtt_s() if tcp_ids else None
    out["end_s"] = end
    out["warmup_s"] = start
    return out
