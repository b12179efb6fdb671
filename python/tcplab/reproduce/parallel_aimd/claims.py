"""Paper C's claims: each one's statement, its criterion, and the check that
measures it (runs from `runs`, figures from `figures`, notes from `notes.md`)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from tcplab.models import aimd
from tcplab.reproduce import NOT_RUN, Claim, Context, Outcome, load_notes
from tcplab.reproduce.parallel_aimd import figures, runs
from tcplab.reproduce.parallel_aimd.figures import thm1
from tcplab.reproduce.parallel_aimd.runs import C11_BUFFER, C11_NS, path

NOTES = load_notes(__package__)


def _with_theorem1(df: pd.DataFrame) -> pd.DataFrame:
    """The sweep with Theorem 1 at each row's N beside it."""
    return df.assign(theorem1=thm1(df["N"].to_numpy()))


# --- C1 ------------------------------------------------------------------------------------


def check_c1(ctx: Context) -> Outcome:
    ns = runs.model_ns(ctx)
    df = runs.one_policies(ctx)
    df["theorem1"] = thm1(df["N"].to_numpy())
    df["rel_error"] = (df["fluid"] - df["theorem1"]) / df["theorem1"]
    packet = None
    if ctx.mode != "tiny":
        packet = _with_theorem1(runs.droptail_sweep(ctx))
    figs = [figures.theorem1(ctx, df, ns, packet)]
    worst = float(df["rel_error"].abs().max())
    at = {n: float(thm1(n)) for n in (1, 3, 6)}
    verdict = "reproduced" if worst <= 0.01 else ("partly" if worst <= 0.03 else "not-reproduced")
    measured = (f"hybrid model under the four ONE policies, N = {ns[0]}..{ns[-1]}: within {100 * worst:.2f}% of "
                f"Theorem 1 ({at[1]:.3f} at N = 1, {at[3]:.3f} at N = 3, {at[6]:.3f} at N = 6).")
    data = {"fluid": df}
    if packet is not None:
        data["packet"] = packet
    return Outcome(verdict, measured, NOTES["C1"], {"max_rel_error": worst, "theorem1": at}, figs, data)


# --- C2 ------------------------------------------------------------------------------------


def check_c2(ctx: Context) -> Outcome:
    sigmas = ctx.pick([0.125, 0.5, 0.875], list(np.round(np.linspace(0.05, 0.95, 10), 3)),
                      list(np.round(np.linspace(0.05, 0.95, 19), 3)))
    df = runs.biased(ctx, sigmas)
    pred = float(thm1(4))
    figs = [figures.biased(ctx, df, pred, runs.biased_paths(ctx))]
    agg_err = float(((df["aggregate"] - pred) / pred).abs().max())
    c1 = df.sort_values("sigma")["class1"].to_numpy()
    c2 = df.sort_values("sigma")["class2"].to_numpy()
    moves = bool(np.all(np.diff(c1) < 0) and np.all(np.diff(c2) > 0) and (c1[0] - c1[-1]) > 0.1)
    verdict = "reproduced" if agg_err <= 0.01 and moves else ("partly" if agg_err <= 0.01 or moves else "not-reproduced")
    measured = (f"aggregate within {100 * agg_err:.2f}% of 12/13 = {pred:.4f} for σ = {sigmas[0]}..{sigmas[-1]}; "
                f"class 1 goes from {c1[0]:.3f} to {c1[-1]:.3f} of c per connection, class 2 from {c2[0]:.3f} to {c2[-1]:.3f}.")
    return Outcome(verdict, measured, NOTES["C2"], {"aggregate_max_rel_error": agg_err, "classes_move": moves}, figs,
                   {"sigma": df})


# --- C3 ------------------------------------------------------------------------------------


def check_c3(ctx: Context) -> Outcome:
    ns = runs.model_ns(ctx)
    df = runs.all_and_multtcp(ctx)
    df["one_theorem1"] = [float(thm1(n)) for n in df["N"]]
    figs = [figures.all_multtcp(ctx, df, ns)]
    e_all = float((df["all"] - 0.75).abs().max() / 0.75)
    e_mult = float(((df["multtcp"] - df["multtcp_formula"]) / df["multtcp_formula"]).abs().max())
    ratio = float((df["multtcp_formula"] / df["one_theorem1"]).max())
    ok = e_all <= 0.01 and e_mult <= 0.01
    verdict = "reproduced" if ok else "partly"
    measured = (f"ALL: within {100 * e_all:.2f}% of 0.75 for every N; MultTCP: within {100 * e_mult:.2f}% of "
                f"1 − 1/(4N); MultTCP / ONE ≤ {ratio:.4f} (paper: < 1.025).")
    return Outcome(verdict, measured, NOTES["C3"], {"all_max_rel_error": e_all, "multtcp_max_rel_error": e_mult,
                                                    "multtcp_over_one_max": ratio}, figs, {"table": df})


# --- C4 ------------------------------------------------------------------------------------


def check_c4(ctx: Context) -> Outcome:
    rows = []
    for p, m2, ci in runs.two_flow_moments(ctx):
        paper = aimd.second_moment_two_flows(p)
        rows.append({"policy": p, "measured": m2, "ci95": ci, "paper": float(paper), "paper_fraction": str(paper)})
    df = pd.DataFrame(rows)
    figs = [figures.second_moments(ctx, df, runs.beatdown_path(ctx))]
    df["match"] = (df["measured"] - df["paper"]).abs() <= np.maximum(3 * df["ci95"], 0.002)
    bd = df[df["policy"] == "beatdown"].iloc[0]
    others_ok = bool(df.loc[df["policy"] != "beatdown", "match"].all())
    bd_exact = abs(bd["measured"] - 28 / 111) <= max(3 * bd["ci95"], 0.002)
    verdict = "reproduced" if bool(df["match"].all()) else ("partly" if others_ok else "not-reproduced")
    measured = "; ".join(f"{r.policy} {r.measured:.4f} ± {r.ci95:.4f} (paper {r.paper_fraction} = {r.paper:.4f})"
                         for r in df.itertuples())
    note = NOTES["C4"].format(measured=bd["measured"], exact=28 / 111, qualifier="" if bd_exact else " (not even that)")
    return Outcome(verdict, measured, note, {"moments": {r.policy: r.measured for r in df.itertuples()},
                                             "beatdown_28_111": bool(bd_exact)}, figs, {"moments": df})


# --- C5 ------------------------------------------------------------------------------------


def check_c5(ctx: Context) -> Outcome:
    n = 4
    tr, trb = runs.fixed_point_paths(ctx, n)
    x = tr[[f"x{i}" for i in range(n)]].to_numpy()
    before = x[np.isclose(x.sum(axis=1), 1.0, atol=1e-9)]
    lr = np.sort(before[-1])[::-1]
    lr_pred = aimd.largest_rate_fixed_point(n)
    xb = trb[[f"x{i}" for i in range(n)]].to_numpy()
    tagged = xb[(xb.min(axis=1) < 1e-9) & np.isclose(xb.sum(axis=1), 1.0, atol=1e-6)]
    bd = np.sort(tagged[-1])[::-1] if len(tagged) else np.full(n, np.nan)
    bd_pred = aimd.beatdown_stationary_point(n)
    figs = [figures.fixed_points(ctx, n, lr, lr_pred, bd, bd_pred)]
    e1 = float(np.max(np.abs(lr - lr_pred)))
    e2 = float(np.nanmax(np.abs(bd - bd_pred)))
    verdict = "reproduced" if e1 <= 1e-3 and e2 <= 1e-3 else ("partly" if min(e1, e2) <= 1e-3 else "not-reproduced")
    measured = (f"N = {n}: largest-rate converges to eq. 9's point {np.round(lr_pred, 4).tolist()} (max error "
                f"{e1:.1e}); beatdown to {np.round(bd_pred, 4).tolist()} (max error {e2:.1e}).")
    k = np.arange(1, n + 1)
    return Outcome(verdict, measured, NOTES["C5"], {"largest_rate_error": e1, "beatdown_error": e2}, figs,
                   {"points": pd.DataFrame({"k": k, "largest_rate": lr, "largest_rate_eq9": lr_pred,
                                            "beatdown": bd, "beatdown_paper": bd_pred})})


# --- C6 ------------------------------------------------------------------------------------


def _at(df, n, b) -> str:
    d = df[(df["N"] == n) & (df["buffer"] == b)]
    return f"{float(d['normalized_throughput'].iloc[0]):.3f}" if len(d) else "—"


def check_c6(ctx: Context) -> Outcome:
    from tcplab.metrics import window_drop_correlation

    df = _with_theorem1(runs.droptail_sweep(ctx))
    figs = [figures.droptail_vs_n(ctx, df)]

    # Figs. 8 and 9: sum of windows (N = 5, 10) and individual windows (N = 10, b = 5)
    t0, _ = runs.window_s(ctx)
    small, large = min(df["buffer"]), max(df["buffer"])
    traced, corr = {}, {}
    for n in (5, 10):
        for b in (small, large):
            r = traced[(n, b)] = runs.droptail_run(ctx, n, b)
            corr[(n, b)] = window_drop_correlation(r.traces["tcp"], path().rtt_s, t0,
                                                   t0 + 200 if ctx.mode != "tiny" else t0 + 30)
    figs.append(figures.sum_of_windows_figure(ctx, traced, t0, small))

    multi = df[df["N"] >= 2]
    below = multi[multi["buffer"] == small]
    above = df[df["buffer"] == large]
    share_below = float(np.mean(below["normalized_throughput"] < below["theorem1"]))
    share_above = float(np.mean(above["normalized_throughput"] > above["theorem1"]))
    by_b = df.groupby("buffer")["normalized_throughput"].mean()
    rises = bool(np.all(np.diff(by_b.to_numpy()) > 0))
    ok = share_below >= 0.7 and share_above >= 0.7 and rises
    verdict = "reproduced" if ok else ("partly" if share_below >= 0.7 or share_above >= 0.7 else "not-reproduced")
    cs = ", ".join(f"N = {n}, b = {b}: {v:.2f}" for (n, b), v in corr.items())
    measured = (f"b = {small}: below Theorem 1 for {100 * share_below:.0f}% of N ≥ 2 "
                f"(N = 10: {_at(df, 10, small)} vs {float(thm1(10)):.3f}); b = {large}: above for "
                f"{100 * share_above:.0f}% of N; mean over N rises with b: {'yes' if rises else 'no'} "
                f"({', '.join(f'{b}: {v:.3f}' for b, v in by_b.items())}). Window-drop correlation {cs}.")
    note = NOTES["C6"] + " " + NOTES["C6 full" if ctx.mode == "full" else "C6 quick"]
    return Outcome(verdict, measured, note, {"share_below_small_b": share_below, "share_above_large_b": share_above,
                                             "rises_with_b": rises,
                                             "window_drop_correlation": {f"N{n}-b{b}": v for (n, b), v in corr.items()}},
                   figs, {"sweep": df})


# --- C7, C8: RED and the threshold-dropper ------------------------------------------------


def check_c7(ctx: Context) -> Outcome:
    df = runs.red_sweep(ctx).copy()
    df["theorem1"] = thm1(df["N"].to_numpy())
    df["rel_error"] = (df["normalized_throughput"] - df["theorem1"]) / df["theorem1"]
    fig = figures.red_vs_n(ctx, df)
    multi = df[df["N"] >= 2]
    med = multi.groupby("buffer")["rel_error"].median()
    err = float(multi["rel_error"].abs().median())
    per_b = ", ".join(f"b = {b}: {100 * v:+.1f}%" for b, v in med.items())
    verdict = "reproduced" if err <= 0.03 else ("partly" if err <= 0.06 else "not-reproduced")
    at10 = multi[multi["N"] == multi["N"].max()]
    measured = (f"median |relative error| against Theorem 1 over N ≥ 2 and every buffer: {100 * err:.1f}% "
                f"(median signed error {per_b}); N = {int(at10['N'].iloc[0])}: "
                + ", ".join(f"b = {r.buffer}: {r.normalized_throughput:.3f}" for r in at10.itertuples())
                + f" vs {float(thm1(int(at10['N'].iloc[0]))):.3f}.")
    note = NOTES["C7"] + " " + NOTES["C7 full" if ctx.mode == "full" else "C7 quick"]
    return Outcome(verdict, measured, note, {"median_abs_rel_error": err,
                                             "median_rel_error_by_buffer": {int(k): float(v) for k, v in med.items()}},
                   [fig], {"sweep": df[["series", "buffer", "N", "normalized_throughput", "theorem1", "rel_error",
                                        "bottleneck_drops"]]})


def check_c8(ctx: Context) -> Outcome:
    from tcplab.metrics import window_drop_correlation

    df = runs.dropper_sweep(ctx)
    df["theorem1"] = thm1(df["N"].to_numpy())
    df["rel_error"] = (df["normalized_throughput"] - df["theorem1"]) / df["theorem1"]
    figs = [figures.dropper_vs_n(ctx, df)]

    # Fig. 12: windows of N = 10 connections (Th = 3, b = 100), and their sum
    t0, t1 = runs.window_s(ctx)
    n_sync = 10
    r = runs.dropper_run(ctx, n_sync)
    tcp = r.traces["tcp"]
    corr = window_drop_correlation(tcp, path().rtt_s, t0, t1)
    drops = r.traces["drops"]
    drops = drops[(drops["link"] == 0) & (drops["t"] > t0)]
    figs.append(figures.dropper_windows(ctx, tcp, t0, n_sync))

    def series_ok(d, tol):
        small = d[d["N"] <= 6]
        return bool(small["rel_error"].abs().max() <= tol and d["rel_error"].min() >= -tol)

    per_series = {}
    for key, d in df.groupby("series", sort=False):
        small = d[d["N"] <= 6]
        per_series[key] = {"max_abs_rel_error_n_le_6": float(small["rel_error"].abs().max()),
                           "min_rel_error": float(d["rel_error"].min()), "ok": series_ok(d, 0.03)}
    piv = df.pivot_table(index=["series", "N"], columns="selection", values="normalized_throughput")
    insens = float((piv["rate-independent"] - piv["largest-rate"]).abs().max())
    main = "Th = 3, b = 100"
    all_ok = all(v["ok"] for v in per_series.values()) and insens <= 0.03 and corr < 0.2
    main_ok = per_series.get(main, {"ok": False})["ok"] and corr < 0.2
    verdict = "reproduced" if all_ok else ("partly" if main_ok else "not-reproduced")
    kinds = drops["cause"].astype(str).value_counts()
    by_dropper = float(kinds.get("threshold", 0) / max(1, len(drops)))
    big = df[df["N"] == df["N"].max()]
    measured = ("; ".join(f"{k}: N ≤ 6 within {100 * v['max_abs_rel_error_n_le_6']:.1f}% of Theorem 1, lowest "
                          f"{100 * v['min_rel_error']:+.1f}%" for k, v in per_series.items())
                + f" (both policies); rate-independent vs largest-rate differ by ≤ {100 * insens:.1f}% of c; "
                f"N = {int(big['N'].iloc[0])}: {float(big['normalized_throughput'].min()):.3f}–"
                f"{float(big['normalized_throughput'].max()):.3f} (Theorem 1 {float(thm1(int(big['N'].iloc[0]))):.3f}). "
                f"N = {n_sync}, Th = 3, b = 100: window-drop correlation {corr:.3f}, {100 * by_dropper:.0f}% of "
                f"{len(drops)} drops by the dropper (the rest: full buffer).")
    return Outcome(verdict, measured, NOTES["C8"].format(tau=path().dropper_tau),
                   {"series": per_series, "policy_difference": insens, "window_drop_correlation": corr,
                    "share_of_drops_by_dropper": by_dropper},
                   figs, {"sweep": df[["selection", "series", "threshold", "buffer", "N", "normalized_throughput",
                                       "theorem1", "rel_error"]]})


# --- C9 ------------------------------------------------------------------------------------


def check_c9(ctx: Context) -> Outcome:
    from tcplab.metrics import p_loss_given_window

    t0, t1 = runs.window_s(ctx)
    rtt = path().rtt_s
    # Fig. 13's buffers for both; RED with paper C's thresholds drops nothing early on buffers
    # that small (it is DropTail there), so the RED row adds buffers where it acts
    buffers = {"DropTail": ctx.pick([5, 20], [5, 10, 15, 20], [5, 10, 15, 20]),
               "RED": ctx.pick([5, 100], [5, 20, 50, 100], [5, 10, 15, 20, 50, 100])}
    queues = {"DropTail": [], "RED": ["topology.bottleneck.queue=red", "topology.bottleneck.red.preset=paper-c"]}
    frames, slopes, early, seen, panels = [], {}, {}, {}, {}
    for qname, extra in queues.items():
        for b in buffers[qname]:
            r = runs.droptail_run(ctx, 10, b, extra)
            drops = r.traces["drops"]
            drops = drops[drops["link"] == 0]
            seen[(qname, b)] = drops[["t", "flow"]].reset_index(drop=True)
            if qname == "RED":
                d = drops[drops["t"] > t0]
                early[b] = float((d["cause"].astype(str) == "red").mean()) if len(d) else 0.0
            pz = p_loss_given_window(r.traces["tcp"], drops, rtt, t0, t1)
            pz = pz[pz["samples"] >= 30]
            frames.append(pz.assign(queue=qname, buffer=b))
            panels[(qname, b)] = pz
            if len(pz) >= 3:
                slopes[(qname, b)] = float(np.corrcoef(pz["w"], pz["p"])[0, 1])
    # where RED made no early drop its run is DropTail's, drop for drop
    same = [b for b in buffers["RED"] if ("DropTail", b) in seen and early.get(b) == 0.0
            and seen[("DropTail", b)].equals(seen[("RED", b)])]
    figs = [figures.p_loss_given_window(ctx, buffers, panels, same)]
    rising = {q: [b for b in buffers[q] if slopes.get((q, b), float("nan")) > 0.5] for q in queues}
    halves = [q for q in queues if len(rising[q]) == len(buffers[q])]
    verdict = "reproduced" if len(halves) == 2 else ("partly" if halves else "not-reproduced")
    measured = ("correlation of P(z=1|w) with w (windows seen in ≥ 30 bins): "
                + "; ".join(f"{q}: " + ", ".join(f"b = {b}: {slopes[(q, b)]:+.2f}" for b in buffers[q] if (q, b) in slopes)
                            for q in queues)
                + ". RED's early drops: " + ", ".join(f"b = {b}: {100 * v:.0f}%" for b, v in early.items()) + " of drops.")
    parts = [NOTES["C9"], NOTES["C9 red"]]
    if same:
        parts.append(NOTES["C9 same-run"].format(buffers=", ".join(map(str, same))))
    for q in queues:
        if len(rising[q]) < len(buffers[q]):
            parts.append(NOTES["C9 not-rising"].format(queue=q, buffers=sorted(set(buffers[q]) - set(rising[q]))))
    if len(rising["DropTail"]) < len(buffers["DropTail"]):
        parts.append(NOTES["C9 phase-lock"])
    return Outcome(verdict, measured, " ".join(parts), {"correlation": {f"{q}-b{b}": v for (q, b), v in slopes.items()},
                                                        "red_early_share": early},
                   figs, {"p_loss_given_window": pd.concat(frames)})


# --- C10 -----------------------------------------------------------------------------------


def check_c10(ctx: Context) -> Outcome:
    from tcplab.metrics import congestion_events, flows_hit_distribution, loss_events

    t0, t1 = runs.window_s(ctx)
    rtt = path().rtt_s
    buffers = ctx.pick([5, 100], [5, 20, 100], [5, 20, 50, 100])
    frames, mean_frac, dists, events = [], {}, {}, {}
    for b in buffers:
        r = runs.droptail_run(ctx, 10, b)
        d = r.traces["drops"]
        d = d[(d["link"] == 0) & (d["t"] > t0) & (d["t"] <= t1)]
        le = events[b] = loss_events(d["t"], d["flow"], rtt)
        ce = congestion_events(le["t"], le["flow"], rtt)
        dist = dists[b] = flows_hit_distribution(ce["flows_hit"], 10)
        frames.append(dist.assign(buffer=b))
        mean_frac[b] = float(ce["flows_hit"].mean() / 10) if len(ce) else float("nan")
    figs = [figures.congestion_events(ctx, buffers, dists, events, t0)]
    small = min(buffers)
    large = max(buffers)
    measured = ("mean fraction of the 10 connections hit per congestion event: "
                + ", ".join(f"b = {b}: {v:.2f}" for b, v in mean_frac.items()))
    verdict = "partly"
    note = NOTES["C10"].format(large=large, large_fraction=mean_frac[large], small=small)
    return Outcome(verdict, measured, note, {"mean_fraction_hit": mean_frac}, figs, {"flows_hit": pd.concat(frames)})


# --- C11 -----------------------------------------------------------------------------------


def check_c11(ctx: Context) -> Outcome:
    if ctx.engine != "linux":
        return Outcome("not-run", NOT_RUN, NOTES["C11 not-run"].format(minutes=len(C11_NS)))
    dur, warm = runs.parallel_times(ctx)
    rows = []
    for n, real, sim in runs.parallel_runs(ctx):
        rows.append({"N": n, "linux": real.metrics["normalized_throughput"],
                     "linux_jain": real.metrics["jain_index"], "linux_drops": real.metrics["bottleneck_drops"],
                     "packet": sim.metrics["normalized_throughput"], "theorem1": float(thm1(n))})
    df = pd.DataFrame(rows)
    figs = [figures.linux_parallel(ctx, df)]
    x = df["linux"].to_numpy()
    # Spearman's rank correlation (Pearson's on the ranks; no scipy needed)
    rank = float(pd.Series(x).rank().corr(df["N"].astype(float).rank()))
    rises = rank >= 0.8 and x[-1] - x[0] >= 0.03
    worst = float((df["linux"] - df["theorem1"]).abs().max())
    verdict = ("reproduced" if rises and worst <= 0.1 else "partly") if rises else "not-reproduced"
    measured = ("real Linux TCP, N = " + "/".join(str(n) for n in C11_NS) + ": "
                + "/".join(f"{v:.3f}" for v in x) + " of capacity (Theorem 1: "
                + "/".join(f"{v:.3f}" for v in df["theorem1"]) + f"); rank correlation with N {rank:.2f}.")
    note = NOTES["C11"].format(duration=dur, warmup=warm, rises="rises" if rises else "does not rise clearly",
                               worst=worst, buffer=C11_BUFFER)
    return Outcome(verdict, measured, note, {"N": list(C11_NS), "linux": x.tolist(),
                                             "packet": df["packet"].tolist(), "rank": rank, "worst": worst},
                   figs, {"parallel": df})


CLAIMS = [
    Claim("C1", "Theorem 1: E[X]/c = 1 − 1/(1 + N(1+β)/(1−β)) for every ONE policy",
          "0.75 at N = 1, ≥ 0.9 at N = 3, ≈ 0.95 at N = 6, for every ONE policy (insensitivity).",
          "The hybrid model's mean under each of the four ONE policies within 1% of Theorem 1 for every N "
          "(partly: 3%).", check_c1, "Thm. 1, Fig. 2"),
    Claim("C2", "Example 1: biased rate-independent losses",
          "N = 4, rate-independent with bias σ: class throughputs move with σ, the aggregate does not.",
          "Aggregate within 1% of 12/13 for every σ; class 1 strictly falls and class 2 strictly rises with σ, "
          "by more than 0.1 c per connection over the range.", check_c2, "Example 1, Figs. 3, 4"),
    Claim("C3", "ALL gives (1+β)/2; MultTCP gives 1 − 1/(4N)",
          "ALL gives (1+β)/2 for every N; MultTCP gives 1 − 1/(4N).",
          "The hybrid model within 1% of both formulas for every N.", check_c3, "eq. 6, Sec. II.B.4"),
    Claim("C4", "Theorem 2: second moments differ between policies",
          "N = 2, β = 1/2, E[X₁²]/c²: beatdown 1/3, rate-independent 5/24, rate-proportional 679/3396, "
          "largest-rate 4/21.",
          "Each within 3 batch-means 95% half-widths (at least 0.002) of the paper's value.",
          check_c4, "Thm. 2, Fig. 5"),
    Claim("C5", "Largest-rate fixed point and beatdown stationary point",
          "Largest-rate fixed point (round-robin, eq. 9); beatdown stationary point (Sec. IV.B).",
          "The model's rates after 2000 events within 10⁻³ of both points (N = 4).", check_c5,
          "Prop. 1, eq. 9; Sec. IV.B"),
    Claim("C6", "TCP-SACK over DropTail: small buffers below Theorem 1, large above",
          "N TCP-SACK over DropTail, b from small to large, RTT 120 ms: small buffers fall below C1 (window "
          "synchronization — sum of cwnd looks like one flow), large buffers rise above it.",
          "Smallest b below Theorem 1 for ≥ 70% of N ≥ 2; largest b above it for ≥ 70% of N; the mean over N "
          "rises with b.", check_c6, "Figs. 7–9"),
    Claim("C7", "RED: close to Theorem 1",
          "RED (thresholds 0.6/0.8 of the buffer, max p 0.1, q weight 0.001, wait on): close to C1.",
          "Median |relative error| against Theorem 1 over N ≥ 2 and the buffers within 3% (partly: 6%).",
          check_c7, "Fig. 10"),
    Claim("C8", "Threshold-dropper: close to Theorem 1, no synchronization",
          "Threshold-dropper (huge buffer, threshold Th, first arrival above Th dropped, its connection then "
          "immune for τ), rate-independent and largest-rate, Th = 2, 3, b = 30, 100: close to C1, no "
          "synchronization.",
          "Within 3% of Theorem 1 for N ≤ 6 and never more than 3% below it, for both policies and every "
          "(Th, b); the two policies within 3% of each other; window-drop correlation (N = 10) below 0.2 "
          "(partly: 6%). For larger N the paper itself finds throughput ≈ capacity.",
          check_c8, "Figs. 11, 12"),
    Claim("C9", "P(z = 1 | w) rises with w",
          "Empirical P(z = 1 | w) with time bins: rises with w under DropTail and RED.",
          "Pearson correlation of P(z=1|w) with w above 0.5 for every buffer, under DropTail and under RED "
          "(partly: one of the two).",
          check_c9, "Figs. 13, 14"),
    Claim("C10", "Congestion events: connections hit per event",
          "Loss events clumped into congestion events by a time threshold; distribution of the number of "
          "connections hit per event (on Internet paths a small fraction of N).",
          "The measurement (method and figure) on simulated DropTail: partly at best, since the paper's "
          "numbers come from Internet paths, which cannot be re-measured here.",
          check_c10, "Figs. 15, 17"),
    Claim("C11", "Parallel transfers on real paths",
          "Parallel transfers measured on real paths (iperf -P N): throughput rises with N as C1 predicts "
          "where losses are not synchronized.",
          "Needs real paths; with --engine linux: real Linux TCP over the emulated bottleneck (10 Mb/s, RTT "
          "120 ms, 5-packet buffer, N = 1, 2, 3, 5, 10): reproduced if the aggregate rises with N (rank "
          "correlation ≥ 0.8, N = 10 at least 0.03 above N = 1) and stays within 0.1 of Theorem 1; partly "
          "if it rises but departs further.", check_c11, "Figs. 16, 18",
          engines=("packet", "ns2", "linux")),
]
