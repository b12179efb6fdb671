"""Reading what the exported script wrote: the counter snapshots
(COUNTERS_FILE) into the raw result dict, and ns-2's traces into tables."""

from __future__ import annotations

import functools
import subprocess
from pathlib import Path

from tcplab.backends.ns2.errors import Ns2Error
from tcplab.backends.ns2.export import (
    DROPS_FILE,
    QSAMPLES_FILE,
    QUEUE_FILE,
    RTT_VARS,
    SAMPLES_FILE,
    TCPMAP_FILE,
    TCPVARS_FILE,
    _tcl_key,
)
from tcplab.backends.ns2.view import (
    _COUNTER_MODULUS,
    _Flow,
    _Plan,
    _queue_traced_per_packet,
    _read_times,
)

@functools.lru_cache(maxsize=None)
def _package_version() -> str | None:
    """Debian's version of the ns2 package, if dpkg knows it."""
    try:
        r = subprocess.run(["dpkg-query", "-W", "-f", "${Version}", "ns2"],
                           capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return r.stdout.strip() or None if r.returncode == 0 else None


def _unwrap(values: list[int]) -> list[int]:
    """Absolute counts from 32-bit ns-2 counters sampled often enough that no
    counter grew by 2^32 or more between samples (see _COUNTER_SAFE_STEP)."""
    out, total, prev = [], 0, 0
    for v in values:
        total += (v - prev) % _COUNTER_MODULUS
        prev = v
        out.append(total)
    return out


def _parse(plan: _Plan, text: str, wd: Path) -> dict:
    version = "?"
    times: dict[int, float] = {}
    rows: dict[tuple[str, str], dict[int, list[int]]] = {}
    sink_reads: dict[int, list[int]] = {}
    for line in text.splitlines():
        parts = line.split()
        if not parts:
            continue
        tag = parts[0]
        if tag == "V":
            version = " ".join(parts[1:])
        elif tag == "T":
            times[int(parts[1])] = float(parts[2])
        elif tag in ("F", "U", "L"):
            rows.setdefault((tag, parts[2]), {})[int(parts[1])] = [int(x) for x in parts[3:]]
        elif tag == "P":
            sink_reads.setdefault(int(parts[1]), []).append(int(parts[2]))
    n_samples = len(plan.sample_times)
    if sorted(times) != list(range(n_samples)):
        raise Ns2Error(f"ns-2 output is incomplete: expected {n_samples} counter snapshots, "
                       f"got {len(times)}")
    warm_index = plan.sample_times.index(plan.warmup_s) + 1 if plan.warmup_s > 0 else 0

    def series(tag: str, key: str) -> list[list[int]]:
        """Per counter column, absolute values at t = 0 (all zero) and each sample."""
        by_sample = rows.get((tag, key))
        if by_sample is None or len(by_sample) != n_samples:
            raise Ns2Error(f"ns-2 output lacks counters for {tag} {key}")
        columns = zip(*(by_sample[k] for k in range(n_samples)))
        return [[0] + _unwrap(list(c)) for c in columns]

    def window(col: list[int]) -> int:
        return col[-1] - col[warm_index]

    flows = []
    playback = []
    for f in plan.flows:
        if f.kind == "tcp":
            sent, rexmit_pkts, timeouts, cuts, sink_bytes, _ack = series("F", str(f.id))
            size, header, syn = f.packet_size, int(f.tcp["header_size"]), bool(f.tcp["syn"])

            def data_packets(b: int) -> int:
                # The sink counts wire bytes in order: the header-only SYN,
                # then full-size data packets; without a SYN, packet 0 is the
                # bare payload (output() adds the header in the else branch of
                # its packet-0 test), so it lacks `header` bytes.
                if b > 0:
                    b += -header if syn else header
                return b // size

            delivered = data_packets(sink_bytes[-1]) - data_packets(sink_bytes[warm_index])
            if f.app:
                playback.append(_playback_table(plan, f, [data_packets(b) * (size - header)
                                                          for b in sink_reads.get(f.id, [])]))
            syn_in_window = int(syn and sent[warm_index] == 0 and sent[-1] > 0)
            flows.append({
                "id": f.id, "group": f.group, "kind": "tcp",
                "delivered_packets": delivered,
                "delivered_bytes": delivered * (size - header),
                "sent_packets": window(sent) - syn_in_window,
                "retransmissions": window(rexmit_pkts),
                "timeouts": window(timeouts),
                # ncwndcuts1_ counts window cuts with data outstanding: one per
                # fast retransmit and one per timeout (nrexmit_); with ECN also
                # one per echoed mark, and a fast retransmit after one cuts
                # nothing (Reno) or once (Tahoe): no count can be told apart
                "fast_retransmits": None if f.tcp["ecn"] else window(cuts) - window(timeouts),
            })
        else:
            npkts, nbytes, _lost = series("U", str(f.id))
            flows.append({
                "id": f.id, "group": f.group, "kind": "udp",
                "delivered_packets": window(npkts),
                "delivered_bytes": window(nbytes),
                "sent_packets": None, "retransmissions": None,
                "timeouts": None, "fast_retransmits": None,
            })

    measured = plan.duration_s - plan.warmup_s
    links = []
    for name, link, _a, _b in plan.monitored:
        for direction in ("forward", "reverse"):
            pdep, bdep, pdrops, _bdrops, _parr = series("L", f"{_tcl_key(name)}/{direction}")
            # an asymmetric link's reverse direction has its own rate
            rate = link.reverse.rate_bps if direction == "reverse" and link.reverse else link.rate_bps
            links.append({
                "name": name, "direction": direction,
                "drops": window(pdrops), "departures": window(pdep),
                "utilization": window(bdep) * 8 / (rate * measured),
            })

    pkg = _package_version()
    extra = {}
    if any(f.kind == "udp" and f.udp["shape"]["kind"] != "constant" for f in plan.flows):
        # "free" capacity needs the clipped mean of each shape (the engine's).
        extra["reference_bps"] = plan.reference_bps
    return {
        **extra,
        "engine": "ns2",
        "engine_version": f"ns-2 {version}" + (f" (Debian {pkg})" if pkg else ""),
        "scenario": plan.scenario,
        "measured_s": measured,
        "flows": flows,
        "links": links,
        "traces": {**_parse_traces(plan, wd),
                   **({"playback": _concat_by_time(playback)} if playback else {})},
    }


def _playback_table(plan: _Plan, f: _Flow, delivered: list[int]):
    import pandas as pd

    from tcplab.metrics import playback_reads

    times = _read_times(plan, f)
    if len(delivered) != len(times):
        raise Ns2Error(f"ns-2 output lacks playback samples for flow {f.id} "
                       f"({len(delivered)} of {len(times)})")
    wanted = int(f.app["read_bytes"])
    t = pd.DataFrame({"t": times, "flow": f.id})
    return pd.concat([t, playback_reads(delivered, wanted)], axis=1)


def _concat_by_time(tables):
    import pandas as pd

    return (pd.concat(tables, ignore_index=True)
            .sort_values(["t", "flow"], kind="stable").reset_index(drop=True))


def _agent_flows(map_path: Path, addr, port):
    """The flow id of each trace line, from its agent's node address and port and
    the map the script wrote (TCPMAP_FILE): node numbers differ off the dumbbell (a
    path's agents all sit on its end routers), so the address alone cannot say."""
    import numpy as np

    ids = {}
    for line in map_path.read_text().split("\n"):
        parts = line.split()
        if len(parts) == 3:
            ids[(int(parts[0]), int(parts[1]))] = int(parts[2])
    keys = zip(np.asarray(addr, dtype="int64").tolist(), np.asarray(port, dtype="int64").tolist())
    try:
        return np.array([ids[k] for k in keys], dtype="int64")
    except KeyError as exc:
        raise Ns2Error(f"ns-2's TCP trace names an agent (node, port) {exc.args[0]} that the script "
                       f"did not map to a flow ({map_path.name})") from None


def _parse_traces(plan: _Plan, wd: Path) -> dict:
    if not plan.series:
        return {}
    import pandas as pd

    traces: dict = {}
    tcp_series = [s for s in plan.series if s in ("cwnd", "inflight", "seq", "rtt")]
    if "drops" in plan.series:
        red = plan.bottleneck.queue == "red"
        if _queue_traced_per_packet(plan):
            # trace-queue logs RED's early and forced drops alike as "d"
            d = _read_ws(wd / QUEUE_FILE, [0, 1, 7], ["event", "t", "flow"])
            d = d[d["event"] == "d"]
            cause = None if red else "overflow"
        else:
            # "d": the buffer was full; "e": RED's early drop (see _trace_tcl)
            d = _read_ws(wd / DROPS_FILE, [0, 1, 7], ["event", "t", "flow"])
            cause = d["event"].map({"d": "overflow", "e": "red"}).to_numpy()
        drops = pd.DataFrame({"t": d["t"].to_numpy(dtype=float), "link": "bottleneck",
                              "flow": d["flow"].to_numpy(dtype="int64")})
        if cause is not None:
            drops["cause"] = cause
        traces["drops"] = drops
    if plan.interval_s <= 0:
        if tcp_series:
            path = wd / TCPVARS_FILE
            raw = _read_ws(path, [0, 1, 2, 5, 6], ["t", "src", "port", "var", "value"])
            raw["flow"] = _agent_flows(wd / TCPMAP_FILE, raw["src"], raw["port"])
            # The values at attach time precede ns-2's reset at `run`; keep the
            # last value of each variable per instant.
            raw = raw.drop_duplicates(["flow", "var", "t"], keep="last")
            wide = (raw.pivot_table(index=["flow", "t"], columns="var", values="value",
                                    aggfunc="last")
                    .groupby(level="flow").ffill().reset_index())
            wide.columns.name = None
            wide = wide.sort_values(["t", "flow"], kind="stable")
            if "cwnd" in tcp_series:
                traces["cwnd"] = _frame(wide, {"cwnd_": "cwnd", "ssthresh_": "ssthresh"},
                                        {"ssthresh": "int64"})
            if "seq" in tcp_series:
                traces["seq"] = _frame(wide, {"maxseq_": "seq", "ack_": "ack"},
                                       {"seq": "int64", "ack": "int64"})
            if "rtt" in tcp_series:
                traces["rtt"] = _rtt_frame(_frame(wide, dict(zip(RTT_VARS, RTT_VARS)), {}), plan, raw=False)
            if "inflight" in tcp_series:
                fr = _frame(wide, {"maxseq_": "seq", "ack_": "ack"}, {})
                fr["inflight"] = (fr["seq"] - fr["ack"]).astype("int64")
                traces["inflight"] = fr[["t", "flow", "inflight"]]
        if "queue" in plan.series:
            raw = _read_ws(wd / QUEUE_FILE, [0, 1], ["event", "t"])
            step = raw["event"].map({"+": 1, "-": -1, "d": -1})
            keep = step.notna()
            q = pd.DataFrame({"t": raw["t"][keep].to_numpy(),
                              "link": "bottleneck",
                              "packets": step[keep].astype("int64").cumsum().to_numpy()})
            # ns-2 logs an arrival ("+") before the queue decides, so a dropped
            # arrival shows as "+" then "d", and an arrival at an idle link as
            # "+" then "-", at the same instant: keep the state after each instant.
            traces["queue"] = q.drop_duplicates("t", keep="last").reset_index(drop=True)
    else:
        if tcp_series:
            c = _read_ws(wd / SAMPLES_FILE, list(range(9)),
                         ["t", "flow", "cwnd", "ssthresh", "seq", "ack"] + RTT_VARS)
            c = c.astype({"flow": "int64", "ssthresh": "int64", "seq": "int64", "ack": "int64"})
            if "rtt" in tcp_series:
                traces["rtt"] = _rtt_frame(c[["t", "flow"] + RTT_VARS], plan, raw=True)
            if "cwnd" in tcp_series:
                traces["cwnd"] = c[["t", "flow", "cwnd", "ssthresh"]].reset_index(drop=True)
            if "seq" in tcp_series:
                traces["seq"] = c[["t", "flow", "seq", "ack"]].reset_index(drop=True)
            if "inflight" in tcp_series:
                traces["inflight"] = pd.DataFrame({"t": c["t"].to_numpy(),
                                                   "flow": c["flow"].to_numpy(),
                                                   "inflight": (c["seq"] - c["ack"]).to_numpy()})
        if "queue" in plan.series:
            q = _read_ws(wd / QSAMPLES_FILE, [0, 1], ["t", "packets"])
            traces["queue"] = pd.DataFrame({"t": q["t"].to_numpy(), "link": "bottleneck",
                                            "packets": q["packets"].astype("int64").to_numpy()})
    return traces


def _read_ws(path: Path, usecols: list[int], names: list[str]):
    """A whitespace-separated ns-2 output file, selected columns only."""
    import pandas as pd

    if not path.exists() or path.stat().st_size == 0:
        return pd.DataFrame({n: pd.Series(dtype="object" if n in ("event", "var") else "float64")
                             for n in names})
    df = pd.read_csv(path, sep=r"\s+", header=None, usecols=usecols, engine="c")
    df.columns = names
    return df


def _rtt_frame(fr, plan: _Plan, raw: bool):
    """The rtt table (t, flow, srtt, rttvar in seconds, backoff) from ns-2's
    estimator variables: `raw` values (read with `$agent set`) in ticks, else
    as ns-2's own variable trace prints them (already in seconds: srtt =
    (srtt_ >> 3)·tick, rttvar = rttvar_·tick/4). ns-2 exposes no RTO
    variable, so there is no rto column."""
    import pandas as pd

    srtt, rttvar = fr["srtt_"].to_numpy(float), fr["rttvar_"].to_numpy(float)
    if raw:
        tick = {f.id: f.tcp["tick_ns"] / 1e9 for f in plan.flows if f.kind == "tcp"}
        ticks = fr["flow"].astype("int64").map(tick).to_numpy(float)
        srtt = (fr["srtt_"].to_numpy("int64") >> 3) * ticks
        rttvar = rttvar * ticks / 4.0
    return pd.DataFrame({"t": fr["t"].to_numpy(float), "flow": fr["flow"].to_numpy("int64"),
                         "srtt": srtt, "rttvar": rttvar, "backoff": fr["backoff_"].to_numpy("int64")})


def _frame(wide, rename: dict, dtypes: dict):
    cols = ["t", "flow"] + [c for c in rename if c in wide.columns]
    fr = wide[cols].rename(columns=rename).dropna()
    return fr.astype({k: v for k, v in dtypes.items() if k in fr.columns}).reset_index(drop=True)
