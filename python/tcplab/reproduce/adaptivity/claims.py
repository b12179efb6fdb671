"""Paper A's claims: each one's statement, its criterion, and the check that
measures it (runs from `runs`, figures from `figures`, notes from `notes.md`).

Where the paper gives no number, the criterion is stated in the claim: the "dip"
is where the mean normalized throughput falls below DIP_LEVEL = 0.85 (the
paper's plateau is 0.9–1.0, its dip 0.6–0.7).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from tcplab.metrics import loss_events
from tcplab.reproduce import Claim, Context, Outcome, load_notes
from tcplab.reproduce.adaptivity import figures
from tcplab.reproduce.adaptivity.runs import (A3_CASES, METRIC, NS2_POINTS, all_links, characteristic, freqs,
                                              mechanism_runs, ns2_points, param_characteristic, setup, summarize,
                                              two_sines_sweep, variant_run, warmup_s)

NOTES = load_notes(__package__)
BAND = (0.2, 1.0)  # Hz: "an interval around 0.4 1/sec" (Sec. III)
DIP_LEVEL = 0.85  # below it a frequency is in the dip
EPISODE_GAP = 0.5  # s: drops closer than this are one loss episode (A3)


def dip(curve: pd.DataFrame) -> dict:
    """Dip measures of one mean curve (columns f, mean): the minimum and where,
    the lowest and highest f below DIP_LEVEL, the mean at low (≤ 0.3 Hz) and
    high (≥ 1 Hz) frequencies."""
    c = curve.sort_values("f")
    f, m = c["f"].to_numpy(float), c["mean"].to_numpy(float)
    below = f[m < DIP_LEVEL]
    return {"min": float(m.min()), "f_min": float(f[m.argmin()]),
            "f_lo": float(below.min()) if below.size else None, "f_hi": float(below.max()) if below.size else None,
            "low_mean": float(m[f <= 0.3].mean()) if np.any(f <= 0.3) else None,
            "high_mean": float(m[f >= 1.0].mean()) if np.any(f >= 1.0) else None,
            "plateau": float(np.median(m))}


def _fmt(x) -> str:
    return "none" if x is None else f"{x:.3g}"


# --- A1 ------------------------------------------------------------------------------------


def check_a1(ctx: Context) -> Outcome:
    runs = characteristic(ctx)
    s = summarize(runs, ["variant", "f"])
    order = {"reno": 0, "newreno": 1}
    s = s.sort_values(["variant", "f"], key=lambda c: c.map(order) if c.name == "variant" else c)
    figs = [figures.curves(ctx, s, "variant", lambda k: {"reno": "Reno", "newreno": "NewReno"}[k],
                           "Paper A, Fig. 2: throughput characteristic", "a1-throughput-vs-frequency", DIP_LEVEL)]
    reno, new = s[s["variant"] == "reno"], s[s["variant"] == "newreno"]
    dr, dn = dip(reno), dip(new)
    share = float(np.mean(reno["mean"] >= 0.88))
    diff = (reno.set_index("f")["mean"] - new.set_index("f")["mean"]).abs()
    in_band = BAND[0] <= dr["f_min"] <= BAND[1]
    deep = dr["min"] <= dr["plateau"] - 0.1
    plateau_ok = share >= 2 / 3
    depth_ok = 0.55 <= dr["min"] <= 0.75
    same = float(diff.max()) <= 0.1
    if in_band and deep and plateau_ok and depth_ok and same:
        verdict = "reproduced"
    elif in_band and deep:
        verdict = "partly"
    else:
        verdict = "not-reproduced"
    spread = float((s["hi"] - s["lo"]).max())
    f_spread = float(s.loc[(s["hi"] - s["lo"]).idxmax(), "f"])
    measured = (f"Reno: {100 * share:.0f}% of the {len(reno)} frequencies at ≥ 0.88 (median {dr['plateau']:.3f}); "
                f"minimum {dr['min']:.3f} at f = {dr['f_min']:.3g} Hz, below {DIP_LEVEL} for f = {_fmt(dr['f_lo'])}–"
                f"{_fmt(dr['f_hi'])} Hz. NewReno: minimum {dn['min']:.3f} at {dn['f_min']:.3g} Hz; largest "
                f"|Reno − NewReno| = {diff.max():.3f} (at {diff.idxmax():.3g} Hz). Largest seed spread "
                f"{spread:.3f} (at {f_spread:.3g} Hz). Paper: 0.9–1.0 over most of the range, 0.6–0.7 around "
                f"0.4 Hz, Reno ≈ NewReno.")
    why = {v: _variant_trace(ctx, v, dr["f_min"]) for v in ("reno", "newreno")}
    parts = [NOTES["A1 dip-there"].format(level=DIP_LEVEL, f_lo=_fmt(dr["f_lo"]), f_hi=_fmt(dr["f_hi"]),
                                          plateau=dr["plateau"]) if in_band and deep else
             NOTES["A1 no-dip"].format(f_min=dr["f_min"], gap=dr["plateau"] - dr["min"]),
             NOTES["A1 depth-within"] if depth_ok else NOTES["A1 depth-outside"].format(depth=dr["min"])]
    if not same:
        parts.append(NOTES["A1 variants-differ"].format(f_min=dr["f_min"], **why))
    parts.append(NOTES["A1 seeds"])
    note = " ".join(parts)
    values = {"reno": dr, "newreno": dn, "share_reno_ge_0_88": share, "max_abs_reno_minus_newreno": float(diff.max()),
              "max_seed_spread": spread, "variants_at_reno_minimum": why}
    data = {"characteristic": s, "runs": runs[["variant", "f", "replication", "seed", METRIC, "normalized_throughput",
                                               "tcp_timeouts", "tcp_fast_retransmits"]]}
    ns2 = ns2_points(ctx)
    if ns2 is not None:
        values["ns2"] = ns2.to_dict("records")
        data["ns2-check"] = ns2
        measured += " ns-2 2.35 (mean of 2 seeds) against tcplab at the same points: " + ", ".join(
            f"{r.variant} {r.f:g} Hz {r.ns2:.3f} vs {r.packet:.3f}" for r in ns2.itertuples()) + "."
        at = ns2[ns2["f"] == NS2_POINTS[1]].set_index("variant")["ns2"]
        if at["newreno"] - at["reno"] >= 0.1:
            note += " " + NOTES["A1 ns2-same-gap"].format(f=NS2_POINTS[1], reno=at["reno"], newreno=at["newreno"])
    return Outcome(verdict, measured, note, values, figs, data)


def _variant_trace(ctx: Context, variant: str, f: float) -> dict:
    """How a variant spends a run at frequency f: timeouts, fast retransmits, time the sender
    is silent (gaps between its sends over 0.15 s, i.e. waiting for a timeout), mean cwnd."""
    r = variant_run(ctx, variant, f)
    warm = warmup_s(ctx)
    fid = int(r.flows.loc[r.flows["kind"] == "tcp", "id"].iloc[0])
    st = np.sort(r.traces["sends"].query("flow == @fid and t >= @warm")["t"].to_numpy(float))
    gaps = np.diff(st)
    idle = gaps[gaps > 0.15]
    tcp = r.traces["tcp"].query("flow == @fid and t >= @warm")
    return {"timeouts": int(r.metrics["tcp_timeouts"]), "fast_retransmits": int(r.metrics["tcp_fast_retransmits"]),
            "idle_s": float(idle.sum()), "longest_gap_s": float(idle.max(initial=0.0)),
            "mean_cwnd": float(tcp["cwnd"].mean()), "goodput": float(r.metrics[METRIC])}


# --- A2 ------------------------------------------------------------------------------------


def check_a2(ctx: Context) -> Outcome:
    fs = freqs(ctx, "a2")
    df = two_sines_sweep(ctx)
    s = summarize(df, ["f1", "f2"])
    n = len(fs)
    idx = {f: i for i, f in enumerate(fs)}
    M = np.full((n, n), np.nan)
    for r in s.itertuples():
        M[idx[r.f1], idx[r.f2]] = M[idx[r.f2], idx[r.f1]] = r.mean
    fa = np.array(fs)
    inb = (fa >= BAND[0]) & (fa <= BAND[1])
    either = inb[:, None] | inb[None, :]
    in_mean = float(np.nanmean(M[either])) if either.any() else float("nan")
    out_mean = float(np.nanmean(M[~either])) if (~either).any() else float("nan")
    i_min, j_min = np.unravel_index(np.nanargmin(M), M.shape)
    min_in = bool(either[i_min, j_min])
    # independence: an additive model (grand mean + an effect per frequency of each component)
    mu = np.nanmean(M)
    eff = np.nanmean(M, axis=1) - mu
    fit = mu + eff[:, None] + eff[None, :]
    ss_t = float(np.nansum((M - mu) ** 2))
    r2 = 1 - float(np.nansum((M - fit) ** 2)) / ss_t if ss_t > 0 else float("nan")
    figs = [figures.two_frequency_map(ctx, fs, M, BAND)]
    reduced = in_mean <= out_mean - 0.05
    indep = r2 >= 0.7
    verdict = "reproduced" if reduced and min_in and indep else ("partly" if reduced or min_in else "not-reproduced")
    measured = (f"{n}×{n} map (f1, f2 = {fs[0]:g}–{fs[-1]:g} Hz): mean {in_mean:.3f} where either component is in "
                f"{BAND[0]}–{BAND[1]} Hz vs {out_mean:.3f} where neither is; minimum {M[i_min, j_min]:.3f} at "
                f"({fa[i_min]:.3g}, {fa[j_min]:.3g}) Hz; an additive model (one effect per component frequency) "
                f"explains R² = {r2:.2f} of the variance. Paper: reduced wherever either component is near the "
                f"critical frequency, the components act independently.")
    note = NOTES["A2"].format(band_lo=BAND[0], band_hi=BAND[1])
    values = {"mean_in_band": in_mean, "mean_out_of_band": out_mean, "min": float(M[i_min, j_min]),
              "argmin_hz": [float(fa[i_min]), float(fa[j_min])], "additive_r2": r2}
    return Outcome(verdict, measured, note, values, figs, {"map": s})


# --- A3 ------------------------------------------------------------------------------------


def mechanism(r, f: float, warmup: float) -> dict:
    """Loss episodes, their recovery, window peaks and buffer occupancy of one traced run.
    An episode is the TCP flow's drops closer than EPISODE_GAP; it ended in a timeout if
    cwnd fell to 1 before the next episode (Reno's fast recovery only halves it)."""
    fid = int(r.flows.loc[r.flows["kind"] == "tcp", "id"].iloc[0])
    tcp = r.traces["tcp"]
    tcp = tcp[(tcp["flow"] == fid) & (tcp["t"] >= warmup)]
    d = r.traces["drops"]
    d = d[(d["flow"] == fid) & (d["t"] >= warmup)]
    ev = loss_events(d["t"], d["flow"], EPISODE_GAP)
    t, c, w = tcp["t"].to_numpy(float), tcp["cwnd"].to_numpy(float), tcp["inflight"].to_numpy(float)
    resets = t[np.flatnonzero((c[1:] <= 1) & (c[:-1] > 1)) + 1]
    edges = np.r_[ev["t"].to_numpy(float), np.inf]
    timeout = np.array([np.any((resets >= edges[i]) & (resets < edges[i + 1])) for i in range(len(ev))], bool)
    # the window peak of each cycle: packets in flight (the paper's "congestion window") when the
    # episode's first packet is dropped; later in the episode the count includes lost packets
    j = np.searchsorted(t, edges[:-1], side="right") - 1
    peaks = w[j[j >= 0]]
    q = r.traces["queue"]
    q = q[(q["link"] == 0) & (q["t"] >= warmup)]
    period = np.floor(q["t"].to_numpy(float) * f)
    per = q.assign(period=period, total=q["tcp"] + q["udp"]).groupby("period")
    return {"f": f, "episodes": int(len(ev)), "drops_per_episode": float(ev["drops"].mean()) if len(ev) else 0.0,
            "single_loss_share": float(np.mean(ev["drops"] == 1)) if len(ev) else 0.0,
            "timeout_share": float(timeout.mean()) if len(ev) else 0.0,
            "fast_recovery_share": float(1 - timeout.mean()) if len(ev) else 0.0,
            "window_peak_median": float(np.median(peaks)) if len(peaks) else float("nan"),
            "udp_queue_max": int(q["udp"].max()), "udp_queue_peak_median": float(per["udp"].max().median()),
            "buffer_full_share": float(np.mean(per["total"].max() >= setup().buffer)),
            "timeouts": int(r.metrics["tcp_timeouts"]), "fast_retransmits": int(r.metrics["tcp_fast_retransmits"]),
            "goodput": float(r.metrics[METRIC])}


def check_a3(ctx: Context) -> Outcome:
    warm = warmup_s(ctx)
    buffer = setup().buffer
    runs = mechanism_runs(ctx)
    stats = {name: mechanism(runs[name], f, warm) for name, f in A3_CASES}
    figs = [figures.mechanism_traces(ctx, runs, stats, warm)]

    lo_, cr, hi_ = stats["low"], stats["critical"], stats["high"]
    checks = {
        "low: TCP times out when UDP fills the buffer": lo_["timeout_share"] >= 0.5 and lo_["udp_queue_peak_median"] >= 0.9 * buffer,
        "critical: consecutive losses end in timeouts": cr["drops_per_episode"] >= 2 and cr["timeout_share"] >= 0.5,
        "critical: window peaks ≈ half the low-f peaks": cr["window_peak_median"] <= 0.7 * lo_["window_peak_median"],
        "high: UDP never fills the buffer": hi_["udp_queue_max"] < buffer,
        "high: single losses, fast recovery": hi_["fast_recovery_share"] >= 0.5 and hi_["drops_per_episode"] <= 1.5,
    }
    held = [k for k, v in checks.items() if v]
    verdict = "reproduced" if len(held) == len(checks) else ("partly" if len(held) >= len(checks) / 2 else "not-reproduced")
    measured = "; ".join(
        f"{name} f = {st['f']:g} Hz: {st['episodes']} loss episodes, {st['drops_per_episode']:.1f} drops each, "
        f"{100 * st['timeout_share']:.0f}% end in a timeout ({st['timeouts']} timeouts, {st['fast_retransmits']} "
        f"fast retransmits in all), window at the first drop (median) "
        f"{st['window_peak_median']:.0f}, UDP queue peak per period {st['udp_queue_peak_median']:.0f} "
        f"(max {st['udp_queue_max']}) of {buffer}" for name, st in stats.items())
    measured += (". Paper: low f timeouts when UDP fills the link; critical f consecutive losses, timeouts, peaks ≈ 20 "
                 "instead of ≈ 40; high f UDP never fills the buffer, single losses, fast recovery.")
    missed = [k for k, v in checks.items() if not v]
    parts = [NOTES["A3"].format(gap=EPISODE_GAP)]
    if "high: single losses, fast recovery" in missed:
        parts.append(NOTES["A3 high-recovery"].format(fast=hi_["fast_retransmits"], episodes=hi_["episodes"],
                                                      drops_per_episode=hi_["drops_per_episode"]))
    if ctx.engine != "packet":
        parts.append(NOTES["A3 other-engine"].format(engine=ctx.engine))
    note = (f"Sub-claims held: {len(held)} of {len(checks)}" + (f"; not held: {'; '.join(missed)}" if missed else "")
            + ". " + "".join(p + " " for p in parts))
    values = {"cases": stats, "sub_claims": checks}
    return Outcome(verdict, measured, note, values, figs, {"mechanism": pd.DataFrame(
        [{"case": k, **v} for k, v in stats.items()])})


# --- A4–A8: the effect of network parameters ------------------------------------------------


def _param_claim(ctx: Context, key: str, values: list, paths, label, title: str, stem: str):
    df = param_characteristic(ctx, key, values, paths)
    s = summarize(df, ["param", "f"])
    s["param"] = pd.Categorical(s["param"], categories=values, ordered=True)
    s = s.sort_values(["param", "f"])
    fig = figures.curves(ctx, s, "param", label, title, stem, DIP_LEVEL)
    dips = {v: dip(s[s["param"] == v]) for v in values}
    return s, dips, [fig], df


def _dip_text(dips: dict, label) -> str:
    return "; ".join(f"{label(v)}: min {d['min']:.2f} at {d['f_min']:.3g} Hz, below {DIP_LEVEL} for "
                     f"{_fmt(d['f_lo'])}–{_fmt(d['f_hi'])} Hz, mean ≤ 0.3 Hz {d['low_mean']:.2f}, "
                     f"≥ 1 Hz {d['high_mean']:.2f}" for v, d in dips.items())


def check_a4(ctx: Context) -> Outcome:
    rates = ctx.pick([1, 4], [1, 2, 5], [1, 2, 5, 10])

    def paths(c):
        half = f"{c / 2:g}Mbps"
        return {**all_links(rate=f"{c:g}Mbps"), "flows.background.rate.mean": half,
                "flows.background.rate.amplitude": half}

    label = lambda c: f"C = {c:g} Mb/s"  # noqa: E731
    s, dips, figs, _ = _param_claim(ctx, "a4-link-rate", rates, paths, label, "Paper A, Fig. 11: link rate", "a4-link-rate")
    a, b = dips[rates[0]], dips[rates[-1]]
    higher = b["f_hi"] is not None and (a["f_hi"] is None or b["f_hi"] > a["f_hi"])
    lower_high = b["high_mean"] <= a["high_mean"] - 0.02
    verdict = "reproduced" if higher and lower_high else ("partly" if higher or lower_high else "not-reproduced")
    return Outcome(verdict, _dip_text(dips, label) + ". Paper: a higher link rate (background scaled too) extends "
                   "the dip to higher f.", NOTES["A4"].format(level=DIP_LEVEL),
                   {"dips": {f"{k:g}": v for k, v in dips.items()}, "edge_moves_up": higher,
                    "high_f_mean_drops": lower_high}, figs, {"characteristics": s.astype({"param": float})})


def check_a5(ctx: Context) -> Outcome:
    delays = ctx.pick([5, 50], [5, 20, 50], [5, 10, 20, 50, 100])
    label = lambda d: f"delay {d:g} ms per link"  # noqa: E731
    s, dips, figs, _ = _param_claim(ctx, "a5-delay", delays, lambda d: all_links(delay=f"{d:g}ms"), label,
                                    "Paper A, Fig. 12: propagation delay", "a5-delay")
    a, b = dips[delays[0]], dips[delays[-1]]
    lower = b["f_lo"] is not None and (a["f_lo"] is None or b["f_lo"] < a["f_lo"])
    lower_low = b["low_mean"] <= a["low_mean"] - 0.02
    verdict = "reproduced" if lower and lower_low else ("partly" if lower or lower_low else "not-reproduced")
    mono = all(dips[a_]["min"] >= dips[b_]["min"] for a_, b_ in zip(delays, delays[1:]))
    extra = "" if mono else (" The change is not monotone in the delay: an intermediate delay has a shallower "
                             "minimum than 5 ms (see the measured line); the criterion compares the extremes.")
    return Outcome(verdict, _dip_text(dips, label) + ". Paper: a larger delay extends the dip to lower f." + extra,
                   NOTES["A5"].format(level=DIP_LEVEL),
                   {"dips": {f"{k:g}": v for k, v in dips.items()}, "edge_moves_down": lower,
                    "low_f_mean_drops": lower_low}, figs, {"characteristics": s.astype({"param": float})})


def _spread(s: pd.DataFrame, ref) -> float:
    """Largest |curve − reference curve| over the frequencies and parameter values."""
    wide = s.pivot_table(index="f", columns="param", values="mean", observed=True)
    return float(wide.sub(wide[ref], axis=0).abs().max().max())


def check_a6(ctx: Context) -> Outcome:
    su = setup()
    sizes = ctx.pick([500, 1500], [500, 1000, 1500], [250, 500, 1000, 1500])
    label = lambda p: f"{p} bytes"  # noqa: E731
    sized = lambda p: {"flows.tcp.packet_size": p, "flows.background.packet_size": p}  # noqa: E731
    s, dips, figs, runs = _param_claim(ctx, "a6-packet-size", sizes, sized, label,
                                       f"Paper A, Fig. 13: packet size (buffers {su.buffer} packets)", "a6-packet-size")
    # the same with the buffers fixed in bytes (the scenario's buffer of its packets): does the effect
    # come from the buffer's drain time?
    buffer_bytes = su.buffer * su.tcp_packet
    sb, dipsb, figsb, _ = _param_claim(ctx, "a6-packet-size-byte-buffer", sizes,
                                       lambda p: {**sized(p), **all_links(buffer=round(buffer_bytes / p))}, label,
                                       f"Paper A, Fig. 13 variant: buffers of {buffer_bytes / 1000:g} kB",
                                       "a6-packet-size-byte-buffer")
    ref = su.tcp_packet if su.tcp_packet in sizes else sizes[0]
    diff, diff_b = _spread(s, ref), _spread(sb, ref)
    top = float(s["mean"].max())
    top_at = s.loc[s["mean"].idxmax()]
    top_seed = float(s["hi"].max())
    top_thr = float(runs.groupby(["param", "f"])["normalized_throughput"].mean().max())
    little = diff <= 0.1
    resonance = top > 1.0
    verdict = "reproduced" if little and resonance else ("partly" if little or resonance else "not-reproduced")
    measured = (f"buffers of {su.buffer} packets: largest difference from the {ref}-byte curve {diff:.3f}; highest mean "
                f"{top:.3f} ({label(int(top_at['param']))}, f = {top_at['f']:.3g} Hz), highest single seed "
                f"{top_seed:.3f} (counting retransmissions, i.e. throughput rather than goodput: highest mean "
                f"{top_thr:.3f}). " + _dip_text(dips, label) + f". Buffers of {buffer_bytes / 1000:g} kB instead: largest difference "
                f"{diff_b:.3f}. Paper: little effect; throughput above 1 at some f (resonance).")
    return Outcome(verdict, measured, NOTES["A6"].format(diff_b=diff_b),
                   {"max_abs_diff": diff, "max_abs_diff_byte_buffer": diff_b, "max_mean": top, "max_seed": top_seed,
                    "max_mean_throughput": top_thr, "dips": {str(k): v for k, v in dips.items()},
                    "dips_byte_buffer": {str(k): v for k, v in dipsb.items()}}, figs + figsb,
                   {"characteristics": s.astype({"param": int}), "characteristics-byte-buffer": sb.astype({"param": int})})


def _compensates(s: pd.DataFrame, dips: dict, ref, best) -> tuple[str, dict]:
    """Does the curve of `best` remove the dip of the curve of `ref`? The mean over the
    frequencies where `ref` is below DIP_LEVEL, for both, and the two minima."""
    wide = s.pivot_table(index="f", columns="param", values="mean", observed=True)
    at = wide.index[wide[ref] < DIP_LEVEL]
    before = float(wide.loc[at, ref].mean()) if len(at) else float("nan")
    after = float(wide.loc[at, best].mean()) if len(at) else float("nan")
    gone = bool(len(at)) and after >= DIP_LEVEL and dips[best]["min"] >= dips[ref]["min"]
    some = bool(len(at)) and after >= before + 0.1
    verdict = "reproduced" if gone else ("partly" if some else "not-reproduced")
    return verdict, {"dip_frequencies_hz": [float(f) for f in at], "mean_there_before": before,
                     "mean_there_after": after, "min_before": dips[ref]["min"], "min_after": dips[best]["min"],
                     "f_min_after": dips[best]["f_min"]}


def _compensation_text(c: dict, ref_label: str, best_label: str) -> str:
    fs = c["dip_frequencies_hz"]
    where = f"{fs[0]:.3g}–{fs[-1]:.3g} Hz" if fs else "nowhere"
    return (f"where the {ref_label} curve dips ({where}) its mean is {c['mean_there_before']:.2f}, the "
            f"{best_label} curve's {c['mean_there_after']:.2f}; minimum {c['min_before']:.2f} → "
            f"{c['min_after']:.2f} (now at {c['f_min_after']:.3g} Hz)")


def check_a7(ctx: Context) -> Outcome:
    b0 = setup().buffer  # the scenario's, the reference curve
    bufs = ctx.pick([b0, 4 * b0], [b0, 2 * b0, 4 * b0], [b0 // 2, b0, 2 * b0, 4 * b0, 8 * b0])
    label = lambda b: f"buffer {b} packets"  # noqa: E731
    s, dips, figs, _ = _param_claim(ctx, "a7-buffer", bufs, lambda b: all_links(buffer=b), label,
                                    "Paper A, Fig. 14: buffer size", "a7-buffer")
    verdict, comp = _compensates(s, dips, b0, bufs[-1])
    measured = (_compensation_text(comp, f"{b0}-packet", f"{bufs[-1]}-packet") + ". " + _dip_text(dips, label)
                + ". Paper: a larger buffer compensates the dip.")
    note = NOTES["compensation"].format(level=DIP_LEVEL) + " " + NOTES["A7"]
    return Outcome(verdict, measured, note, {"compensation": comp, "dips": {str(k): v for k, v in dips.items()}},
                   figs, {"characteristics": s.astype({"param": int})})


def check_a8(ctx: Context) -> Outcome:
    rtos = ctx.pick([60, 0.3], [60, 0.5, 0.3], [60, 2, 1, 0.5, 0.4, 0.3])
    label = lambda r: f"max RTO {r:g} s"  # noqa: E731
    s, dips, figs, _ = _param_claim(ctx, "a8-max-rto", rtos, lambda r: {"flows.tcp.max_rto": f"{r:g}s"}, label,
                                    "Paper A, Fig. 15: maximum RTO", "a8-max-rto")
    verdict, comp = _compensates(s, dips, rtos[0], rtos[-1])
    measured = (_compensation_text(comp, "60 s", f"{rtos[-1]:g} s") + ". " + _dip_text(dips, label)
                + ". Paper: a smaller maximum RTO compensates the dip.")
    note = NOTES["compensation"].format(level=DIP_LEVEL) + " " + NOTES["A8"]
    return Outcome(verdict, measured, note, {"compensation": comp, "dips": {f"{k:g}": v for k, v in dips.items()}},
                   figs, {"characteristics": s.astype({"param": float})})


CLAIMS = [
    Claim("A1", "Throughput characteristic: a dip around 0.4 Hz",
          "Normalized throughput vs f in [0.05, 10] Hz, Reno and NewReno: 0.9–1.0 over most of the range, a dip "
          "to 0.6–0.7 around f ≈ 0.4 Hz; Reno ≈ NewReno.",
          "Reproduced if (Reno) at least 2/3 of the frequencies are ≥ 0.88, the minimum lies in 0.2–1 Hz at "
          "least 0.1 below the median, its depth is 0.55–0.75, and |Reno − NewReno| ≤ 0.1 everywhere; partly "
          "if the dip is there (place and 0.1 below the median) but depth, plateau or the variants differ.",
          check_a1, "Fig. 2"),
    Claim("A2", "Two-frequency background: the components act independently",
          "Over f1, f2 in [0.05, 10] Hz the throughput is reduced wherever either component is near the critical "
          "frequency (the components act independently).",
          "Cells with a component in 0.2–1 Hz at least 0.05 lower on average, the minimum in such a cell, and "
          "an additive model in the two components with R² ≥ 0.7; partly: one of the first two.",
          check_a2, "Fig. 3"),
    Claim("A3", "Mechanism at low, critical and high f",
          "Low f: TCP follows the background, times out when UDP fills the link. Critical f: consecutive "
          "losses, timeouts, cwnd peaks ≈ 20 instead of ≈ 40, periodic buffer trace. High f: UDP never fills "
          "the buffer, single losses, fast recovery.",
          "Five sub-claims measured on traced runs at 0.1, 0.4 and 5 Hz (see the note): all hold → reproduced, "
          "at least half → partly.",
          check_a3, "Figs. 4–10"),
    Claim("A4", "Higher link rate extends the dip to higher f",
          "A higher link rate (background scaled too) extends the dip to higher frequencies.",
          f"Dip's upper edge (highest f below {DIP_LEVEL}) higher and mean over f ≥ 1 Hz ≥ 0.02 lower at the "
          "highest rate than at 1 Mb/s; partly: one of the two.",
          check_a4, "Fig. 11"),
    Claim("A5", "Larger delay extends the dip to lower f",
          "A larger propagation delay extends the dip to lower frequencies.",
          f"Dip's lower edge (lowest f below {DIP_LEVEL}) lower and mean over f ≤ 0.3 Hz ≥ 0.02 lower at the "
          "largest delay than at 5 ms; partly: one of the two.",
          check_a5, "Fig. 12"),
    Claim("A6", "Packet size has little effect; resonance above 1",
          "Packet size has little effect on the characteristic; at some f the throughput exceeds 1 "
          "('resonance').",
          "Every curve within 0.1 of the 1000-byte curve, and some mean above 1; partly: one of the two.",
          check_a6, "Fig. 13"),
    Claim("A7", "A larger buffer compensates the dip",
          "A larger buffer compensates the throughput reduction.",
          f"Over the 40-packet curve's dip (f below {DIP_LEVEL}) the largest buffer's mean reaches {DIP_LEVEL} "
          "and its minimum is no lower; partly: the mean there rises by ≥ 0.1.",
          check_a7, "Fig. 14"),
    Claim("A8", "A smaller maximum RTO compensates the dip",
          "A smaller maximum RTO compensates the throughput reduction.",
          f"Over the 60 s curve's dip (f below {DIP_LEVEL}) the smallest maximum RTO's mean reaches "
          f"{DIP_LEVEL} and its minimum is no lower; partly: the mean there rises by ≥ 0.1.",
          check_a8, "Fig. 15"),
]
