"""The papers' measures of TCP, as pure functions on arrays and trace tables.

Every function names the paper (cited in full in `tcplab.citations` and the README:
A = Szabó/Molnár/Kenesi, B = Zhang/Tsaoussidis (ISCC 2002), C = Altman/Barman/Tuffin/
Vojnović (INFOCOM 2006), D = Barakat/Altman (INRIA RR-3574, 1998)) and the
definition it implements. Trace tables are in the canonical shape of
`tcplab.traces.canonical` (``tcp``: t, flow, cwnd, ssthresh, ack, …; ``drops``:
t, link, flow), so the same code serves the packet engine and ns-2.
`summarize(result)` applies them all to one run.

Delivered bytes over time come from the ``ack`` column of the ``tcp`` trace:
the cumulative ack counts in-order packets the receiver holds, so
(ack − first data sequence number + 1) × payload bytes is the goodput so far
(payload = packet_size − header_size; with ``syn = true`` packet 0 is the SYN
and carries none). Retransmissions never count twice, as goodput requires.
The ``sends`` table is not used: it counts what left the sender, not what
arrived. Everything here is vectorized numpy; the only Python loops run over
flows, never over packets.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

__all__ = [
    "normalized_throughput",
    "system_goodput", "aggregated_goodput", "jain_index",
    "delivered_packets_at", "allotted_goodput", "allotted_system_goodput", "allotted_fairness",
    "success_percentage", "playback_reads", "playback_success",
    "loss_events", "congestion_events", "flows_hit_distribution",
    "p_loss_given_window", "window_drop_correlation", "synchronization",
    "slowstart_cycles", "slowstart_phase_counts", "tahoe_cycles",
    "summarize",
]


# --- paper A: normalized throughput --------------------------------------------------

def normalized_throughput(rate_bps, reference_bps: float):
    """Paper A's normalized throughput: a (TCP goodput) rate divided by the
    reference rate (1 = TCP uses all of it). The reference is the engine's, one
    definition for every engine: `tcplab.plan.Plan.reference_bps` (`measure.reference`:
    the capacity C, or the free capacity C − the background's mean rate, paper A's)."""
    return np.asarray(rate_bps, dtype=float) / float(reference_bps) if reference_bps > 0 else np.nan


# --- paper B: goodput and fairness ---------------------------------------------------

def system_goodput(goodput_bps) -> float:
    """Paper B, Sec. 4.2: System Goodput = the sum of the goodputs of all flows."""
    return float(np.nansum(np.asarray(goodput_bps, dtype=float)))


def aggregated_goodput(goodput_bps, groups) -> pd.Series:
    """Paper B, Sec. 4.2: Aggregated Protocol Goodput = the goodput sum of the
    flows of one protocol; here one entry per group label."""
    return pd.Series(np.asarray(goodput_bps, dtype=float)).groupby(np.asarray(groups), sort=True).sum()


def jain_index(x, axis=None):
    """Jain's fairness index (Σx)² / (n·Σx²) (paper B's Goodput Fairness Index,
    after Jain, Chiu, Hawe 1984): 1 when all n values are equal, 1/n when one
    takes everything. NaN entries (flows not active) are left out of n; all
    zero gives 1, nothing gives NaN. With `axis`, one index per row/column."""
    x = np.asarray(x, dtype=float)
    if axis is None:
        x = x[~np.isnan(x)]
        if x.size == 0:
            return float("nan")
        s2 = float(np.sum(x * x))
        return float(np.sum(x) ** 2 / (x.size * s2)) if s2 > 0 else 1.0
    n = np.sum(~np.isnan(x), axis=axis)
    s = np.nansum(x, axis=axis)
    s2 = np.nansum(x * x, axis=axis)
    with np.errstate(invalid="ignore", divide="ignore"):
        j = np.where(s2 > 0, s * s / (n * s2), 1.0)
    return np.where(n > 0, j, np.nan)


def _by_flow(flow: np.ndarray):
    """Stable order grouping rows by flow, and each flow's (id, start, stop) in it."""
    order = np.argsort(flow, kind="stable")
    f = flow[order]
    ids, first = np.unique(f, return_index=True)
    last = np.r_[first[1:], f.size]
    return order, list(zip(ids.tolist(), first.tolist(), last.tolist()))


def _value_before(t_rows: np.ndarray, v_rows: np.ndarray, times: np.ndarray, before=np.nan) -> np.ndarray:
    """A step function (rows in time order) at `times`: the last value recorded
    at or before each time; `before` where nothing was recorded yet."""
    i = np.searchsorted(t_rows, times, side="right") - 1
    out = np.where(i >= 0, v_rows[np.maximum(i, 0)], before)
    return out.astype(float)


def delivered_packets_at(t, flow, ack, times, flow_ids=None, first_data_seq: int = 1) -> np.ndarray:
    """Packets delivered in order to each flow's receiver by each of `times`:
    max(ack − first_data_seq + 1, 0) at the last trace row at or before the time
    (ack = −1 before anything is acked; first_data_seq = 1 when packet 0 is a SYN).

    Returns an array (len(flow_ids), len(times)); flows without rows give 0.
    """
    t, flow, ack = (np.asarray(a) for a in (t, flow, ack))
    times = np.asarray(times, dtype=float)
    order, segs = _by_flow(flow)
    ids = [s[0] for s in segs] if flow_ids is None else list(flow_ids)
    out = np.zeros((len(ids), times.size))
    where = {fid: (a, b) for fid, a, b in segs}
    for k, fid in enumerate(ids):
        if fid not in where:
            continue
        a, b = where[fid]
        rows = order[a:b]
        acked = _value_before(t[rows], ack[rows].astype(float), times, before=first_data_seq - 1)
        out[k] = np.maximum(acked - first_data_seq + 1, 0.0)
    return out


def allotted_goodput(tcp: pd.DataFrame, payload_bytes, interval_s: float = 1.0, start_s: float = 0.0,
                     end_s: float | None = None, flows: pd.DataFrame | None = None,
                     first_data_seq: int = 1) -> pd.DataFrame:
    """Paper B's allotted goodput: each flow's goodput within each interval
    (default one second), in bit/s.

    `tcp` is the canonical tcp trace (t, flow, ack); `payload_bytes` a number or
    a Series indexed by flow id (its index also chooses the flows). Intervals are
    (start + kΔ, start + (k+1)Δ] up to `end_s` (default: the last trace time),
    closed on the right like the run's measurement window (warmup, duration]:
    an ack at an interval's end counts in it.
    With `flows` (columns id, start_s, stop_s) a flow is NaN in intervals
    entirely outside (start_s, stop_s], so fairness counts only active flows.
    Returns a DataFrame indexed by interval start ("t"), one column per flow.
    """
    t = tcp["t"].to_numpy(dtype=float)
    end = float(t.max()) if end_s is None else float(end_s)
    k = int(np.floor((end - start_s) / interval_s + 1e-9))
    edges = start_s + interval_s * np.arange(k + 1)
    if isinstance(payload_bytes, pd.Series):
        ids = list(payload_bytes.index)
        pay = payload_bytes.to_numpy(dtype=float)[:, None]
    else:
        ids = sorted(np.unique(tcp["flow"]).tolist())
        pay = float(payload_bytes)
    cum = delivered_packets_at(t, tcp["flow"].to_numpy(), tcp["ack"].to_numpy(), edges, ids, first_data_seq)
    bps = np.diff(cum, axis=1) * pay * 8.0 / interval_s
    if flows is not None and {"start_s", "stop_s"} <= set(flows.columns):
        f = flows.set_index("id").reindex(ids)
        lo = f["start_s"].to_numpy(dtype=float)[:, None]
        hi = f["stop_s"].to_numpy(dtype=float)[:, None]
        outside = (edges[None, 1:] <= lo) | (edges[None, :-1] >= hi)
        bps = np.where(outside, np.nan, bps)
    return pd.DataFrame(bps.T, index=pd.Index(edges[:-1], name="t"), columns=ids)


def allotted_system_goodput(allotted: pd.DataFrame) -> pd.Series:
    """Paper B, Sec. 4.2: Allotted System Goodput (ASG) = the system goodput
    within each interval (one second in the paper): the row sums, bit/s."""
    return allotted.sum(axis=1, min_count=1)


def allotted_fairness(allotted: pd.DataFrame) -> pd.Series:
    """Paper B, Sec. 4.2: Allotted Fairness = Jain's index of the flows'
    goodputs within each interval, over the flows active in it (non-NaN)."""
    return pd.Series(jain_index(allotted.to_numpy(dtype=float), axis=1), index=allotted.index)


def success_percentage(allotted, target_bps: float, x: float = 0.7) -> float:
    """Paper B, Sec. 4.2: x% Application Success Percentage =
    100 · successes / attempts, one attempt per flow per interval (the
    application reads every second), a success when allotted goodput /
    targeted receiving rate ≥ x (the paper writes "> x%" in the formula and
    "at least x% of 1 Mbps" in the text; we take "at least").
    `allotted` is a series or a (intervals × flows) table; NaN = no attempt."""
    a = np.asarray(allotted, dtype=float)
    tried = ~np.isnan(a)
    if not tried.any():
        return float("nan")
    return float(100.0 * np.sum(a[tried] >= x * target_bps) / np.sum(tried))


def playback_reads(delivered_bytes, read_bytes: int) -> pd.DataFrame:
    """Paper B7's playback reader, from the bytes delivered in order by each
    read instant: everything delivered goes into the playback buffer and each
    read takes up to `read_bytes` of it (the packet engine's reader,
    traffic/app.rs, does the same as it runs). Returns read_bytes,
    wanted_bytes, arrived_bytes (delivered since the previous read),
    buffered_bytes (left after the read) and dropped_writes (0: no engine
    but the packet engine drops writes) per read."""
    d = np.asarray(delivered_bytes, dtype=np.int64)
    got = np.empty_like(d)
    buffered = np.empty_like(d)
    taken = 0
    for k, total in enumerate(d):
        avail = int(total) - taken
        got[k] = min(avail, int(read_bytes))
        taken += int(got[k])
        buffered[k] = avail - got[k]
    return pd.DataFrame({"read_bytes": got, "wanted_bytes": np.full_like(d, int(read_bytes)),
                         "arrived_bytes": np.diff(d, prepend=0), "buffered_bytes": buffered,
                         "dropped_writes": np.zeros_like(d)})


def playback_success(playback: pd.DataFrame, start_s: float, end_s: float, x: float = 0.7) -> float:
    """x% application success percentage of the playback reads in (start, end]:
    the share of reads that got at least x of what they wanted (paper B7:
    x = 70 %, 125 KB per second)."""
    p = playback[(playback["t"] > start_s) & (playback["t"] <= end_s)]
    if p.empty:
        return float("nan")
    return success_percentage(p["read_bytes"] / p["wanted_bytes"], 1.0, x)


# --- paper C: loss events, congestion events, P(z = 1 | w), synchronization ----------

def loss_events(t, flow, gap_s: float) -> pd.DataFrame:
    """Loss events per flow (paper C, Sec. V.E): a flow's packet drops clumped
    into one loss event while consecutive drops are at most `gap_s` apart
    (typically one RTT: TCP reduces its window once per window of data).

    Returns t (the first drop), flow, drops (how many), sorted by time.
    """
    t = np.asarray(t, dtype=float)
    flow = np.asarray(flow)
    if t.size == 0:
        return pd.DataFrame({"t": np.array([], float), "flow": np.array([], flow.dtype if flow.size else int),
                             "drops": np.array([], int)})
    order = np.lexsort((t, flow))
    ts, fs = t[order], flow[order]
    new = np.r_[True, (fs[1:] != fs[:-1]) | (np.diff(ts) > gap_s)]
    ev = np.cumsum(new) - 1
    out = pd.DataFrame({"t": ts[new], "flow": fs[new], "drops": np.bincount(ev)})
    return out.sort_values(["t", "flow"], kind="stable").reset_index(drop=True)


def congestion_events(t, flow, threshold_s: float, method: str = "gap", start_s: float = 0.0) -> pd.DataFrame:
    """Paper C, Sec. V.E (Figs. 15, 17): loss events clumped into congestion
    events by a time threshold (a factor of the RTT), with M = the number of
    distinct flows hit in each.

    ``method="gap"``: a new congestion event starts when a loss event comes more
    than `threshold_s` after the previous one (any flow). ``method="bins"``:
    fixed bins [start + nT, start + (n+1)T), T = threshold_s, empty bins left out
    (the paper's "time bin n"). Returns t_start, t_end, loss_events, flows_hit.
    """
    t = np.asarray(t, dtype=float)
    flow = np.asarray(flow)
    cols = ["t_start", "t_end", "loss_events", "flows_hit"]
    if t.size == 0:
        return pd.DataFrame({c: np.array([], float if c.startswith("t") else int) for c in cols})
    order = np.argsort(t, kind="stable")
    ts, fs = t[order], flow[order]
    if method == "gap":
        ev = np.cumsum(np.r_[True, np.diff(ts) > threshold_s]) - 1
    elif method == "bins":
        b = np.floor((ts - start_s) / threshold_s).astype(np.int64)
        ev = np.cumsum(np.r_[True, b[1:] != b[:-1]]) - 1
    else:
        raise ValueError(f"method must be 'gap' or 'bins', got {method!r}")
    n = int(ev[-1]) + 1
    pairs = np.unique(np.stack([ev, pd.factorize(fs)[0]]), axis=1)
    return pd.DataFrame({
        "t_start": ts[np.r_[0, np.flatnonzero(np.diff(ev)) + 1]],
        "t_end": ts[np.r_[np.flatnonzero(np.diff(ev)), ts.size - 1]],
        "loss_events": np.bincount(ev, minlength=n),
        "flows_hit": np.bincount(pairs[0], minlength=n),
    })


def flows_hit_distribution(flows_hit, n_flows: int) -> pd.DataFrame:
    """Distribution of M, the number of flows hit per congestion event (paper C,
    Fig. 15 plots its complementary distribution): for m = 1..n_flows the number
    of events, the fraction P(M = m), p_ge = P(M ≥ m) and ccdf = P(M > m)."""
    m = np.asarray(flows_hit, dtype=np.int64)
    counts = np.bincount(m, minlength=n_flows + 1)[1:n_flows + 1]
    total = counts.sum()
    frac = counts / total if total else np.full(n_flows, np.nan)
    p_ge = np.cumsum(frac[::-1])[::-1]
    return pd.DataFrame({"m": np.arange(1, n_flows + 1), "events": counts, "fraction": frac,
                         "p_ge": p_ge, "ccdf": p_ge - frac})


def _bins(start_s: float, end_s: float, bin_s: float) -> np.ndarray:
    k = int(np.floor((end_s - start_s) / bin_s + 1e-9))
    return start_s + bin_s * np.arange(k + 1)


def p_loss_given_window(tcp: pd.DataFrame, drops: pd.DataFrame, bin_s: float, start_s: float, end_s: float,
                        flows=None) -> pd.DataFrame:
    """Paper C, Sec. V.D (Figs. 13, 14): the empirical estimate
    z̄(w) = Σ_n Σ_i 1{z_i(n) = 1, w_i(n) = w} / Σ_n Σ_i 1{w_i(n) = w} of
    P(z_i(n) = 1 | w_i(n) = w).

    Time is cut into bins of `bin_s` over [start_s, end_s); z_i(n) = 1 when flow
    i has at least one drop in bin n; w_i(n) = ⌊cwnd⌋ of flow i just before the
    bin (the last value recorded at or before its start). Flows with no window
    yet are left out of that bin. `flows` picks the flows (default: all in the
    tcp trace); drops of other flows (UDP) are ignored.
    Returns w, samples (bins with that window), hits, p = hits / samples.
    """
    edges = _bins(start_s, end_s, bin_s)
    starts = edges[:-1]
    tcp_flow = tcp["flow"].to_numpy()
    order, segs = _by_flow(tcp_flow)
    ids = [s[0] for s in segs] if flows is None else list(flows)
    where = {fid: (a, b) for fid, a, b in segs}
    tt, cw = tcp["t"].to_numpy(dtype=float), tcp["cwnd"].to_numpy(dtype=float)
    dt, df = drops["t"].to_numpy(dtype=float), drops["flow"].to_numpy()
    w_all, z_all = [], []
    for fid in ids:
        if fid not in where:
            continue
        a, b = where[fid]
        rows = order[a:b]
        w = np.floor(_value_before(tt[rows], cw[rows], starts))
        z = np.zeros(starts.size, dtype=bool)
        mine = dt[(df == fid) & (dt >= start_s) & (dt < edges[-1])]
        z[np.floor((mine - start_s) / bin_s).astype(np.int64)] = True
        ok = ~np.isnan(w)
        w_all.append(w[ok].astype(np.int64))
        z_all.append(z[ok])
    if not w_all:
        return pd.DataFrame({"w": [], "samples": [], "hits": [], "p": []})
    w, z = np.concatenate(w_all), np.concatenate(z_all)
    samples = np.bincount(w)
    hits = np.bincount(w, weights=z, minlength=samples.size)
    seen = np.flatnonzero(samples)
    return pd.DataFrame({"w": seen, "samples": samples[seen], "hits": hits[seen].astype(np.int64),
                         "p": hits[seen] / samples[seen]})


def window_drop_correlation(tcp: pd.DataFrame, bin_s: float, start_s: float, end_s: float, flows=None) -> float:
    """Correlation of window drops, a synchronization measure for a set of flows
    (paper C, Sec. V: synchronized losses make Σ cwnd look like one flow).

    d_i(n) = 1 if flow i's cwnd decreased during time bin n; the result is the
    mean over flow pairs of the Pearson correlation of d_i and d_j (≈ 0:
    independent reductions, 1: every reduction shared). Flows whose d is
    constant are left out; fewer than two flows give NaN.
    """
    edges = _bins(start_s, end_s, bin_s)
    nb = edges.size - 1
    tt, cw, fl = tcp["t"].to_numpy(dtype=float), tcp["cwnd"].to_numpy(dtype=float), tcp["flow"].to_numpy()
    order, segs = _by_flow(fl)
    ids = [s[0] for s in segs] if flows is None else list(flows)
    where = {fid: (a, b) for fid, a, b in segs}
    D = np.zeros((len(ids), nb))
    for k, fid in enumerate(ids):
        if fid not in where:
            continue
        a, b = where[fid]
        rows = order[a:b]
        c, t = cw[rows], tt[rows]
        down = t[1:][c[1:] < c[:-1]]
        down = down[(down >= start_s) & (down < edges[-1])]
        D[k, np.floor((down - start_s) / bin_s).astype(np.int64)] = 1.0
    D = D[D.std(axis=1) > 0]
    if D.shape[0] < 2:
        return float("nan")
    r = np.corrcoef(D)
    return float(r[np.triu_indices(D.shape[0], k=1)].mean())


def synchronization(flows_hit, n_flows: int, window_drop_corr: float | None = None) -> dict:
    """Synchronization of a set of flows from its congestion events (paper C,
    Sec. V.E): share_multi = share of congestion events that hit more than one
    flow, share_all = share that hit every flow, mean_flows_hit = E[M],
    mean_fraction_hit = E[M]/N; plus the window-drop correlation if given."""
    m = np.asarray(flows_hit, dtype=float)
    out = {"congestion_events": int(m.size)}
    if m.size:
        out.update(share_multi=float(np.mean(m > 1)), share_all=float(np.mean(m >= n_flows)),
                   mean_flows_hit=float(m.mean()), mean_fraction_hit=float(m.mean() / n_flows))
    else:
        out.update(share_multi=float("nan"), share_all=float("nan"), mean_flows_hit=float("nan"),
                   mean_fraction_hit=float("nan"))
    if window_drop_corr is not None:
        out["window_drop_correlation"] = float(window_drop_corr)
    return out


# --- paper D: slow-start phases per cycle ---------------------------------------------

#: How far beyond ssthresh (in packets, i.e. in round trips of congestion
#: avoidance, which adds one packet per RTT) cwnd may be when a loss is detected
#: for that loss still to count as one that occurred in slow start. A loss in
#: slow start is detected about one RTT after it occurs, and the acks of that
#: RTT add less than one packet in congestion avoidance; a loss in congestion
#: avoidance comes (W_max − W_th) RTTs after it began, W_max/2 ≫ 2 on paper D's
#: path (every phase of the B = 1..64 grid, both engines, both profiles: below
#: 0.99 or above 16).
CA_LOSS_MIN_RTTS = 2.0


def tahoe_cycles(t, cwnd, ssthresh, reset_level: float = 1.0,
                 ca_rtts: float = CA_LOSS_MIN_RTTS) -> pd.DataFrame:
    """Paper D's cycles of one flow, from its cwnd/ssthresh trace (rows in time
    order, every change).

    Paper D (Barakat, Altman, INRIA RR-3574, 1998): slow start "starting at
    W = 1 ... increase[s] W by one segment for every incoming ACK until we
    reach a threshold W_th" (Sec. 1); a cycle is the "cyclic evolution of TCP
    window containing three consecutive slow-start phases per cycle" (Sec. 1),
    ended by the congestion avoidance that runs until "the loss due to a window
    size W_max exceeding the network capacity" (Sec. 2), and a loss "occurring
    in the second slow-start" belongs to that slow start even when "the source
    gets shortly in congestion avoidance before detecting the loss" (Sec. 7).

    So: every fall of cwnd to `reset_level` starts a slow-start phase (Tahoe
    after any loss, any variant after a timeout); a phase ends with the next
    such fall, the detection of its loss. The phase's loss occurred in slow
    start unless cwnd was at least `ca_rtts` packets above the phase's ssthresh
    when it was detected (`CA_LOSS_MIN_RTTS`); a cycle is the run of phases up to
    and including the first whose loss occurred in congestion avoidance.

    One row per cycle, the first (the start-up, with its default threshold)
    and an unfinished last one left out: `slowstarts` (1 = single, 2 = double,
    3 = triple), `w_s` (ssthresh of its last phase, where congestion avoidance
    starts), `w_e` (cwnd when the congestion-avoidance loss is detected: paper
    D's W_max, "the window at which the loss is detected"), `w_first` (ssthresh
    after the first phase's loss: W_B in paper D's Theorem 1 regime), `t_start`
    (the cycle's first reset), `t_end` (its last slow start's reset) and
    `t_loss` (the detection of its congestion-avoidance loss)."""
    t = np.asarray(t, dtype=float)
    c = np.asarray(cwnd, dtype=float)
    s = np.asarray(ssthresh, dtype=float)
    cols = ["slowstarts", "w_s", "w_e", "w_first", "t_start", "t_end", "t_loss"]
    resets = np.flatnonzero((c[1:] <= reset_level) & (c[:-1] > reset_level)) + 1
    if resets.size == 0:
        return pd.DataFrame([], columns=cols)
    starts = np.r_[0, resets[:-1]]          # phase i: rows starts[i] .. resets[i] − 1
    last = resets - 1
    ca = c[last] >= s[last] + ca_rtts       # its loss occurred in congestion avoidance
    rows, first = [], None
    for i in np.flatnonzero(ca):
        if first is not None:               # phases first .. i form one cycle
            rows.append({"slowstarts": int(i - first + 1), "w_s": s[last[i]], "w_e": c[last[i]],
                         "w_first": s[last[first + 1]] if i > first else np.nan,
                         "t_start": t[starts[first]], "t_end": t[starts[i]], "t_loss": t[resets[i]]})
        first = i + 1
    return pd.DataFrame(rows, columns=cols)


def slowstart_cycles(cwnd, ssthresh, reset_level: float = 1.0, t=None) -> np.ndarray:
    """Paper D: the number of consecutive slow-start phases in each TCP cycle of
    one flow (1 = single, 2 = double, 3 = triple), from its cwnd and ssthresh
    trace (rows in time order, every change): `tahoe_cycles`' ``slowstarts``.
    Needs traces at every change: a sampled trace can miss resets."""
    tt = np.arange(len(cwnd), dtype=float) if t is None else t
    return tahoe_cycles(tt, cwnd, ssthresh, reset_level)["slowstarts"].to_numpy(np.int64)


def slowstart_phase_counts(cycles) -> dict:
    """How many cycles had 1, 2, 3, … slow-start phases (paper D: single,
    double, triple slow start), from `slowstart_cycles`."""
    c = np.asarray(cycles, dtype=np.int64)
    top = max(3, int(c.max()) if c.size else 0)
    counts = np.bincount(c, minlength=top + 1)
    names = {1: "single", 2: "double", 3: "triple"}
    return {names.get(k, f"{k}x"): int(counts[k]) for k in range(1, top + 1)}


# --- all of them, for one run ---------------------------------------------------------

def summarize(res, interval_s: float = 1.0, rtt_factor: float = 1.0, bin_s: float | None = None,
              target_bps: float | None = None, success_x: float = 0.7, link: int = 0) -> dict:
    """Every metric above that the run's traces allow, for a `tcplab.result.Result`
    (any engine). Over the measurement window (warmup, duration]:

    * allotted system goodput and fairness per `interval_s` (needs the ``tcp``
      trace with ``ack``: `--trace seq` or `cwnd`), their means, and the
      `success_x` application success percentage against `target_bps` (default:
      the reference rate split evenly among the TCP flows);
    * loss events (drops ≤ rtt_factor·RTT apart), congestion events
      (rtt_factor·RTT gap) at link `link` (0 = forward bottleneck) and the
      synchronization measures (needs ``drops``);
    * P(z = 1 | w) with bins of `bin_s` (default one base RTT) (``drops`` + ``cwnd``);
    * slow-start phases per cycle, counted over all TCP flows (``cwnd`` at every change,
      paper D's cycles as `tahoe_cycles` defines them);
    * the `success_x` application success percentage of the playback reads of
      CBR-over-TCP flows (the ``playback`` table, recorded whenever there are such flows).
    RTT is the scenario's round-trip propagation delay (`traces.base_rtt_s`).
    """
    from tcplab.plan import plan
    from tcplab.traces import base_rtt_s, canonical, payload_bytes

    sc = res.scenario
    tr = canonical(res.traces, res.links)
    flows = res.flows
    tcp_ids = flows.loc[flows["kind"] == "tcp", "id"].tolist()
    n = len(tcp_ids)
    p = plan(sc, resolved=True)
    start, end = p.warmup_s, p.end_s
    rtt = base_rtt_s(sc)
    bin_s = rtt if bin_s is None else bin_s
    out: dict = {"base_rtt_s": rtt, "tcp_flows": n}
    m = res.metrics
    out["normalized_goodput"] = m.get("normalized_goodput")
    out["system_goodput_bps"] = system_goodput(flows.loc[flows["kind"] == "tcp", "goodput_bps"])
    out["aggregated_goodput_bps"] = aggregated_goodput(flows["goodput_bps"], flows["group"]).to_dict()
    out["jain_index"] = jain_index(flows.loc[flows["kind"] == "tcp", "goodput_bps"])
    tcp = tr.get("tcp")
    if tcp is not None and not tcp.empty:
        tcp = tcp[tcp["flow"].isin(tcp_ids)]
    if tcp is not None and "ack" in tcp and n:
        first = p.first_data_seq
        pay = payload_bytes(flows, sc).loc[tcp_ids]
        al = allotted_goodput(tcp, pay, interval_s, start, end, flows, first)
        asg = allotted_system_goodput(al)
        af = allotted_fairness(al)
        target = (m.get("reference_bps", 0.0) / n) if target_bps is None else target_bps
        out.update(interval_s=interval_s, allotted_system_goodput_mean_bps=float(asg.mean()),
                   allotted_system_goodput_min_bps=float(asg.min()),
                   allotted_fairness_mean=float(af.mean()), allotted_fairness_min=float(af.min()),
                   success_target_bps=target, success_x=success_x,
                   success_percentage=success_percentage(al, target, success_x))
    playback = tr.get("playback")
    if playback is not None and not playback.empty:
        # paper B7: the reads of the CBR-over-TCP flows' playback readers
        out["app_success_x"] = success_x
        out["app_success_percentage"] = playback_success(playback, start, end, success_x)
    drops = tr.get("drops")
    if drops is not None and n:
        d = drops[(drops["link"] == link) & drops["flow"].isin(tcp_ids)
                  & (drops["t"] > start) & (drops["t"] <= end)]
        le = loss_events(d["t"], d["flow"], rtt_factor * rtt)
        ce = congestion_events(le["t"], le["flow"], rtt_factor * rtt)
        corr = None
        if tcp is not None and n > 1:
            corr = window_drop_correlation(tcp, bin_s, start, end, tcp_ids)
        out.update(drops=int(len(d)), loss_events=int(len(le)),
                   flows_hit=flows_hit_distribution(ce["flows_hit"], n)[["m", "events"]]
                   .set_index("m")["events"].to_dict(),
                   synchronization=synchronization(ce["flows_hit"], n, corr))
        if tcp is not None and "cwnd" in tcp:
            pz = p_loss_given_window(tcp, d, bin_s, start, end, tcp_ids)
            out["p_loss_given_window"] = {int(r.w): round(float(r.p), 4) for r in pz.itertuples() if r.samples >= 20}
    if tcp is not None and "cwnd" in tcp and "ssthresh" in tcp:
        order, segs = _by_flow(tcp["flow"].to_numpy())
        tt, cw, ss = (tcp[k].to_numpy(dtype=float) for k in ("t", "cwnd", "ssthresh"))
        cycles = []
        for _f, a, b in segs:
            i = order[a:b]
            cycles.append(slowstart_cycles(cw[i], ss[i], t=tt[i]))
        out["slowstart_cycles"] = slowstart_phase_counts(np.concatenate(cycles) if cycles else [])
    return out


# --- topologies: each flow against its own bottleneck -----------------------------------

def max_min_fair_shares(capacity_bps, routes: list[list[int]]) -> np.ndarray:
    """The max-min fair rate of each flow (bits/s) over links of the given
    capacities (`capacity_bps[link]`), each flow crossing the links of its route:
    progressive filling (Bertsekas and Gallager, *Data Networks*, 1992, Sec. 6.5.2)
    — raise every unfrozen flow's rate together until a link is full, freeze the
    flows crossing it, repeat. A heap of the level at which each link fills keeps
    it O(E log E) in the route entries E. A flow with no route gets NaN."""
    import heapq

    cap = np.asarray(capacity_bps, dtype=float)
    users: dict[int, list[int]] = {}
    for f, route in enumerate(routes):
        for link in set(route):
            users.setdefault(link, []).append(f)
    count = {link: len(fs) for link, fs in users.items()}
    frozen_sum = dict.fromkeys(users, 0.0)
    rate = np.full(len(routes), np.nan)
    heap = [(cap[link] / c, link) for link, c in count.items()]
    heapq.heapify(heap)
    while heap:
        level, link = heapq.heappop(heap)
        if count[link] == 0 or level != (cap[link] - frozen_sum[link]) / count[link]:
            continue  # stale: the link's level moved since this entry was pushed
        for f in users[link]:
            if not np.isnan(rate[f]):
                continue
            rate[f] = level
            for other in set(routes[f]):
                count[other] -= 1
                frozen_sum[other] += level
                if count[other] > 0:
                    heapq.heappush(heap, ((cap[other] - frozen_sum[other]) / count[other], other))
    return rate


def path_metrics(plan_links: list[dict], routes: list[list[int]], bottlenecks, kind, goodput, throughput,
                 links_table: Mapping | None = None) -> tuple[dict, dict]:
    """Per-flow columns and summary entries that mean the same on every topology.

    `routes` are the flows' data routes and `bottlenecks` the link id of each one's
    bottleneck (-1: none), both from the Plan (`FlowPlan.route.forward` and
    `FlowPlan.bottleneck.forward`: the engine decides a flow's bottleneck, once).
    Returns (columns, summary): columns `bottleneck_bps` (the rate of the flow's
    bottleneck), `normalized_goodput` (goodput over it) and, for
    TCP flows, `fair_share_bps` (the max-min fair share among the TCP flows on
    their forward routes); summary `bottlenecks`, one entry per link direction that
    is some TCP flow's bottleneck (its name, direction, rate, the TCP flows that
    cross it, their goodput over its rate, and the link's utilization and
    drops from `links_table` when the engine reports them), and `warnings` for a
    goodput above its bottleneck's rate."""
    kind = np.asarray(kind, dtype=object)
    goodput = np.asarray(goodput, dtype=float)
    tcp = kind == "tcp"
    bn = np.asarray(bottlenecks, dtype=np.int64)
    rate = np.array([plan_links[k]["rate_bps"] if k >= 0 else np.nan for k in bn], dtype=float)
    tcp_routes = [r if t else [] for r, t in zip(routes, tcp)]
    fair = max_min_fair_shares([link["rate_bps"] for link in plan_links], tcp_routes)
    with np.errstate(invalid="ignore", divide="ignore"):
        columns = {"bottleneck_bps": rate, "normalized_goodput": goodput / rate, "fair_share_bps": fair}
    wanted = {(plan_links[k]["name"], plan_links[k].get("direction", "forward")) for k in set(bn[tcp].tolist()) if k >= 0}
    reported = {}
    if wanted and links_table is not None and "name" in links_table and "direction" in links_table:
        # the rows of the bottleneck links only (a table of 10^5 access links is no index)
        names = np.asarray(links_table["name"], dtype=object).tolist()
        dirs = np.asarray(links_table["direction"], dtype=object).tolist()
        reported = {(n, d): i for i, (n, d) in enumerate(zip(names, dirs)) if (n, d) in wanted}
    bottlenecks = []
    crossing: dict[int, list[int]] = {}
    for f in np.flatnonzero(tcp):
        for link in set(routes[f]):
            crossing.setdefault(link, []).append(int(f))
    for k in sorted({int(k) for k in bn[tcp] if k >= 0}):
        link = plan_links[k]
        mine = np.asarray(crossing[k], dtype=np.int64)
        gp = float(np.nansum(goodput[mine]))
        entry = {"link": link["name"], "direction": link.get("direction", "forward"),
                 "rate_bps": float(link["rate_bps"]), "flows": int(mine.size),
                 "tcp_goodput_bps": gp, "normalized_goodput": gp / float(link["rate_bps"])}
        i = reported.get((link["name"], link.get("direction", "forward")))
        if i is not None:
            for col in ("utilization", "drops"):
                if col in links_table:
                    v = np.asarray(links_table[col])[i]
                    if not pd.isna(v):
                        entry[col] = float(v) if col == "utilization" else int(v)
        bottlenecks.append(entry)
    warnings = []
    with np.errstate(invalid="ignore"):
        over = np.flatnonzero(goodput > rate * (1 + 1e-9))
    for f in over:
        warnings.append(
            f"flow {int(f)}: goodput {goodput[f] / 1e6:.4g} Mb/s exceeds its bottleneck's rate "
            f"{rate[f] / 1e6:.4g} Mb/s ({plan_links[bn[f]]['name']}); the likely cause is a warm-up "
            f"shorter than the flow's recovery, so data sent before the window was counted in it: "
            f"lengthen measure.warmup")
    return columns, {"bottlenecks": bottlenecks, "warnings": warnings}
