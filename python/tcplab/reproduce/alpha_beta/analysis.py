"""Paper B's measurements on traced runs: congestion epochs from cwnd traces (B1),
handoffs and the recovery after them (B4), fairness and goodput summaries around
joins and departures (B5, B6), the CBR application's success (B7). Functions of
the traces alone (tests feed them synthetic ones), apart from the claims."""

from __future__ import annotations

import numpy as np
import pandas as pd

from tcplab.models import gaimd
from tcplab.reproduce.alpha_beta.model import chiu_jain_seconds, refill_seconds
from tcplab.reproduce.alpha_beta.runs import label


def epochs(tcp: pd.DataFrame, flows, alpha: float, beta: float, start: float = 0.0, gap_s: float = 0.2) -> pd.DataFrame:
    """Congestion epochs of each flow from its cwnd trace (rows at every change).

    Outside loss recovery cwnd never falls, so a loss event is a run of cwnd
    decreases less than `gap_s` apart (Reno's fast-retransmit cut, its inflation
    and deflation; give about one RTT). ssthresh alone would miss cuts that leave
    it unchanged: ns-2 sets ssthresh = int(β·cwnd), the same integer again at
    small windows. An event is a timeout when cwnd falls to 1 in it. An epoch runs
    from one fast-retransmit event to the next, neither a timeout; each flow's
    first event is skipped (ns-2 halves there whatever β is). Per epoch: `t0`,
    `t1` (the events' first decreases), `seconds`, `w_start` (the lowest cwnd of
    the opening event, βW), `w_end` (cwnd just before the closing event: paper
    B's W) and `eq4_rtts` = (1 − β)·W/α + 1 with that W.
    """
    rows = []
    for fid in flows:
        d = tcp[tcp["flow"] == fid]
        t = d["t"].to_numpy(float)
        c = d["cwnd"].to_numpy(float)
        if t.size < 3:
            continue
        down = np.flatnonzero(c[1:] < c[:-1]) + 1
        if down.size < 3:
            continue
        new = np.r_[True, np.diff(t[down]) >= gap_s]
        first = down[new]  # each event's first decrease
        grp = np.cumsum(new) - 1
        low = np.minimum.reduceat(c[down], np.flatnonzero(new))
        timeout = np.zeros(first.size, dtype=bool)
        timeout[np.unique(grp[c[down] <= 1.0])] = True
        for k in range(1, first.size - 1):
            i, j = first[k], first[k + 1]
            if timeout[k] or timeout[k + 1] or t[i] < start:
                continue
            w = c[j - 1]
            rows.append({"flow": fid, "t0": t[i], "t1": t[j], "seconds": t[j] - t[i], "w_start": low[k], "w_end": w,
                         "eq4_rtts": float(gaimd.congestion_epoch_rtts(max(w, 1e-9), alpha, beta))})
    return pd.DataFrame(rows, columns=["flow", "t0", "t1", "seconds", "w_start", "w_end", "eq4_rtts"])


def mean_queue(queue: pd.DataFrame, link: int, t0: float, t1: float) -> float:
    """Time-weighted mean occupancy (packets) of `link` over [t0, t1]."""
    q = queue[queue["link"] == link]
    t = q["t"].to_numpy(float)
    v = q["packets"].to_numpy(float)
    if t.size == 0:
        return 0.0
    edges = np.clip(np.r_[t, t1], t0, t1)
    return float(np.sum(v * np.diff(edges)) / (t1 - t0))


def handoffs(tcp: pd.DataFrame, drops: pd.DataFrame, flow: int, gap_s: float = 2.5) -> pd.DataFrame:
    """Handoff outages seen by one flow, from its drops with cause "outage": drops
    closer than `gap_s` form one handoff. Per handoff: `t_first` (first drop),
    `t_last` (last drop: the last retransmission lost in it) and `t_resume`, the
    first ack advance after `t_last` (the flow delivers again; NaN if never)."""
    d = drops[(drops["flow"] == flow) & (drops["cause"].astype(str) == "outage")]["t"].to_numpy(float)
    if d.size == 0:
        return pd.DataFrame(columns=["t_first", "t_last", "t_resume"])
    d = np.sort(d)
    cut = np.r_[True, np.diff(d) > gap_s]
    firsts = d[cut]
    lasts = np.r_[d[np.flatnonzero(cut)[1:] - 1], d[-1]]
    f = tcp[tcp["flow"] == flow]
    t = f["t"].to_numpy(float)
    a = f["ack"].to_numpy(float)
    resume = []
    for tl in lasts:
        i = np.searchsorted(t, tl, side="right")
        if i >= t.size:
            resume.append(np.nan)
            continue
        base = a[i - 1] if i > 0 else -1
        j = np.flatnonzero(a[i:] > base)
        resume.append(t[i + j[0]] if j.size else np.nan)
    return pd.DataFrame({"t_first": firsts, "t_last": lasts, "t_resume": resume})


def recovery_curve(tcp: pd.DataFrame, flow: int, resumes, next_starts, payload: float, bin_s: float = 0.25,
                   horizon_s: float = 4.0) -> pd.DataFrame:
    """Mean goodput (bit/s) in bins of `bin_s` after each handoff's resume time, up to
    `horizon_s` (a bin past the next handoff's first drop is left out)."""
    from tcplab.metrics import delivered_packets_at

    f = tcp[tcp["flow"] == flow]
    edges = np.arange(0, horizon_s + 1e-9, bin_s)
    rows = []
    for tr, tn in zip(resumes, next_starts):
        if not np.isfinite(tr):
            continue
        cum = delivered_packets_at(f["t"], f["flow"], f["ack"], tr + edges, [flow])[0]
        g = np.diff(cum) * payload * 8 / bin_s
        valid = (tr + edges[1:]) <= tn
        rows.append(np.where(valid, g, np.nan))
    m = np.nanmean(np.vstack(rows), axis=0) if rows else np.full(edges.size - 1, np.nan)
    return pd.DataFrame({"tau": edges[:-1], "goodput_bps": m})


def first_at_or_above(series: pd.Series, t0: float, level: float, until: float) -> float:
    """Seconds after t0 until the first interval (index = interval start) ending after
    t0 whose value is ≥ level; NaN if none before `until`."""
    s = series[(series.index >= t0) & (series.index < until)]
    hit = s[s >= level]
    return float(hit.index[0] + 1 - t0) if len(hit) else np.nan


def join_summary(al: dict, steps, n_end: int, rate_bps: float, dur: float) -> pd.DataFrame:
    """B5's numbers per protocol from the allotted goodput tables: mean fairness before
    the joins, its minimum after, its mean from 20 s after the first join, seconds
    after the last join to fairness ≥ 0.9, and the Chiu–Jain estimate of that time."""
    from tcplab.metrics import allotted_fairness

    later = (min(steps[0] + 20, dur - 5), min(steps[0] + 30, dur))
    rows = []
    for p, a in al.items():
        f = allotted_fairness(a)
        rows.append({"protocol": label(p), "pre_join": float(f[(f.index >= 5) & (f.index < steps[0])].mean()),
                     "min_after": float(f[f.index >= steps[0]].min()),
                     "later_mean": float(f[(f.index >= later[0]) & (f.index < later[1])].mean()),
                     "recover_0.9_s": first_at_or_above(f, steps[-1], 0.9, dur),
                     "chiu_jain_s": chiu_jain_seconds(p, rate_bps, n_end), "later_from": later[0],
                     "later_to": later[1]})
    return pd.DataFrame(rows).set_index("protocol")


def leave_summary(al: dict, steps, n_start: int, rate_bps: float, dur: float) -> tuple[pd.DataFrame, pd.DataFrame]:
    """B6's numbers: per protocol the mean allotted system goodput before and after the
    first departure and the mean recovery time; per step the measured recovery (seconds
    until the per-second goodput is back at 95% of its mean over the 3 s before the
    step, censored at the next step: 5 s in the mean) beside the refill model."""
    from tcplab.metrics import allotted_system_goodput

    rows, rec_rows = [], []
    for p, a in al.items():
        asg = allotted_system_goodput(a) / 1e6
        recs = []
        for k, (t, n) in enumerate(zip(steps, remaining(n_start, steps))):
            before = float(asg[(asg.index >= t - 3) & (asg.index < t)].mean())
            until = steps[k + 1] if k + 1 < len(steps) else dur
            r_s = first_at_or_above(asg, t + 1, 0.95 * before, until)  # from the first whole second after t
            r_s = r_s + 1 if np.isfinite(r_s) else np.nan
            recs.append(r_s)
            rec_rows.append({"protocol": label(p), "step_s": t, "remaining": n, "recover_s": r_s,
                             "model_s": refill_seconds(p, rate_bps, n)})
        few = next((st for st, r in zip(steps, remaining(n_start, steps)) if r < 10), dur)
        rows.append({"protocol": label(p), "pre": float(asg[(asg.index >= 5) & (asg.index < steps[0])].mean()),
                     "after": float(asg[asg.index >= steps[0]].mean()),
                     "after_many": float(asg[(asg.index >= steps[0]) & (asg.index < few)].mean()), "many_until": few,
                     "recover_s": float(np.mean(np.where(np.isfinite(recs), recs, 5.0)))})
    return pd.DataFrame(rows).set_index("protocol"), pd.DataFrame(rec_rows)


def remaining(n: int, steps) -> list[int]:
    """Flows left after each step of leave_groups (half of those present, rounded down, leave)."""
    out = []
    for _ in steps:
        n -= n // 2
        out.append(n)
    return out


def app_success(run):
    """The engine's 70% success figure of the CBR application's playback reads (share
    of the one-second reads that got ≥ 70% of 125 KB), when the run reports one."""
    v = run.metrics.get("app_success_percentage")
    if v is None:
        v = next((x for k, x in run.metrics.items() if "success" in str(k).lower() and isinstance(x, (int, float))),
                 None)
    return None if v is None else float(v)
