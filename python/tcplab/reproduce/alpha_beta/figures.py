"""Paper B's figures: the same axes and series as the paper's, each written through
`Context.save_figure`; every function returns the stem."""

from __future__ import annotations

import numpy as np
import pandas as pd

from tcplab.models import gaimd
from tcplab.reproduce import Context
from tcplab.reproduce.alpha_beta.model import eq1_goodput_bps, payload_capacity_bps, regrowth_model, rtt_min
from tcplab.reproduce.alpha_beta.runs import PROTOCOLS, STANDARD, bps, label


def color(p) -> str:
    return f"C{PROTOCOLS.index(tuple(p))}"


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _log_axes(ax, xs) -> None:
    """Log-log axes with the x values themselves as ticks and plain numbers on y."""
    from matplotlib.ticker import LogLocator, ScalarFormatter

    ticks = sorted(set(int(x) for x in xs))
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xticks(ticks, [str(x) for x in ticks])
    ax.yaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
    ax.yaxis.set_major_formatter(ScalarFormatter())
    ax.minorticks_off()


def friendliness_epochs(ctx: Context, df: pd.DataFrame) -> str:
    """B1: eq. 3 with the four protocols, eq. 1 under eq. 3, and the epoch length against N."""
    plt = _plt()
    fig, axes = plt.subplots(1, 3, figsize=(13.5, 4))
    bb = np.linspace(0.02, 0.98, 200)
    ax = axes[0]
    ax.plot(bb, gaimd.friendly_alpha(bb), "k-", lw=1, label="eq. 3: α = 4(1 − β²)/3")
    for p in PROTOCOLS:
        ax.plot(p[1], p[0], "o", color=color(p), label=label(p))
    ax.set_xlabel("β (decrease ratio)")
    ax.set_ylabel("α (increase, packets/RTT)")
    ax.set_title("Eq. 3 and the paper's four protocols", fontsize=9)
    ax.legend(fontsize=7)
    ax = axes[1]
    pp = np.logspace(-4, -0.7, 100)
    for p in PROTOCOLS:
        r0 = gaimd.gaimd_throughput(pp, 0.1, 0.0, alpha=p[0], beta=p[1]) / gaimd.gaimd_throughput(pp, 0.1, 0.0)
        r1 = gaimd.gaimd_throughput(pp, 0.1, 0.2, alpha=p[0], beta=p[1]) / gaimd.gaimd_throughput(pp, 0.1, 0.2)
        ax.semilogx(pp, r0, "--", color=color(p), lw=1)
        ax.semilogx(pp, r1, "-", color=color(p), lw=1.2, label=label(p))
    ax.set_xlabel("loss rate p")
    ax.set_ylabel("eq. 1 rate / TCP(1, 0.5)'s")
    ax.set_title("Eq. 1 under eq. 3: RTT 0.1 s, T0 = 0.2 s (solid), T0 = 0 (dashed)", fontsize=8)
    ax.legend(fontsize=7)
    ax = axes[2]
    for p in PROTOCOLS:
        d = df[df["protocol"] == label(p)].sort_values("N")
        if not len(d):
            continue
        ax.plot(d["N"], d["epoch_rtts"], "o", color=color(p), ms=5, label=f"{label(p)}: measured (median)")
        ax.plot(d["N"], d["eq4_measured_w"], "x", color=color(p), ms=6)
        ax.plot(d["N"], d["eq45_rtts"], "-", color=color(p), lw=0.9)
    ax.plot([], [], "kx", label="eq. 4 with the measured W")
    ax.plot([], [], "k-", lw=0.9, label="eq. 4 with W = B·RTT/N (eq. 5)")
    _log_axes(ax, df["N"])
    ax.set_xlabel("N (flows), 10 Mb/s")
    ax.set_ylabel("congestion epoch (RTTs)")
    ax.set_title("Epoch length vs N (eqs. 4, 5) and cwnd traces", fontsize=9)
    ax.legend(fontsize=6)
    fig.tight_layout()
    return ctx.save_figure(fig, "b1-friendliness-epochs")


def system_goodput(ctx: Context, df: pd.DataFrame) -> str:
    """B2 (Figs. 2, 3): system goodput against N at the two rates, eq. 1 dashed."""
    plt = _plt()
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    for i, (ax, (rate, d)) in enumerate(zip(axes, sorted(df.groupby("rate"), key=lambda x: bps(x[0])))):
        for p in PROTOCOLS:
            e = d[d["protocol"] == label(p)].sort_values("N")
            ax.plot(e["N"], e["goodput_mbps"], "o-", ms=4, color=color(p), label=label(p))
            ax.plot(e["N"], e["eq1_mid"], "--", lw=0.9, color=color(p))
        ax.plot([], [], "k--", lw=0.9, label="eq. 1 at the measured loss rate (× N, capped)")
        cap = payload_capacity_bps(bps(rate)) / 1e6
        ax.axhline(cap, color="grey", lw=0.7, ls=":")
        ax.set_xlabel("N (flows)")
        ax.set_ylabel("system goodput (Mb/s)")
        ax.set_title(f"Paper B, Fig. {2 + i}: {rate} bottleneck", fontsize=9)
        ax.set_ylim(0, cap * 1.08)
        ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    return ctx.save_figure(fig, "b2-system-goodput-vs-n")


def goodput_vs_per(ctx: Context, df: pd.DataFrame, pers, rate: str, n: int) -> str:
    """B3 (Fig. 4): system goodput against the PER, eq. 1 dashed."""
    rate_bps = bps(rate)
    cap = payload_capacity_bps(rate_bps)
    plt = _plt()
    fig, ax = plt.subplots(figsize=(6.6, 4.3))
    grid = np.linspace(0.0025, max(pers), 60)
    for p in PROTOCOLS:
        d = df[df["protocol"] == label(p)].sort_values("PER")
        ax.plot(d["PER"], d["goodput_mbps"], "o-", ms=4, color=color(p), label=label(p))
        model = np.minimum(eq1_goodput_bps(grid, rtt_min(rate_bps), p[0], p[1]) * n, cap) / 1e6
        ax.plot(grid, model, "--", lw=0.9, color=color(p))
    ax.plot([], [], "k--", lw=0.9, label=f"eq. 1, p = PER, RTT {1e3 * rtt_min(rate_bps):.0f} ms, × {n} flows")
    ax.set_xlabel("packet error rate on the sink links (PER)")
    ax.set_ylabel("system goodput (Mb/s)")
    ax.set_yscale("log")
    ax.set_title(f"Paper B, Fig. 4: {rate} bottleneck, {n} flows, Bernoulli errors", fontsize=9)
    ax.legend(fontsize=7)
    return ctx.save_figure(fig, "b3-goodput-vs-per")


def handoffs(ctx: Context, rate: str, dur: float, allotted: dict, curves: dict) -> str:
    """B4 (Fig. 5): each protocol's allotted goodput through the handoffs, and the mean
    recovery after a handoff beside the regrowth model."""
    rate_bps = bps(rate)
    tau_edges = np.arange(0, 4.0 + 1e-9, 0.25)
    plt = _plt()
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(12, 4))
    for p in allotted:
        al, cur = allotted[p], curves[p]
        ax.plot(al.index + 1, al.to_numpy() / 1e6, "-", lw=1, color=color(p), label=label(p))
        ax2.plot(cur["tau"] + 0.125, cur["goodput_bps"] / 1e6, "o-", ms=3, color=color(p), label=label(p))
        ax2.plot(tau_edges, regrowth_model(p[0], rate_bps, tau_edges) / 1e6, "--", lw=0.9, color=color(p))
    ax.set_xlim(0, min(dur, 40))
    ax.set_xlabel("time (s)")
    ax.set_ylabel("allotted goodput (Mb/s)")
    ax.set_title("Paper B, Fig. 5: one flow, 10 Mb/s, a handoff every 5 s (Exp(1 s) long)", fontsize=9)
    ax.legend(fontsize=7)
    ax2.plot([], [], "k--", lw=0.9, label="window 2 + α per RTT (Obs. 2)")
    ax2.set_xlabel("time since the flow delivers again (s)")
    ax2.set_ylabel("goodput (Mb/s), mean over handoffs")
    ax2.set_title("Recovery after a handoff", fontsize=9)
    ax2.legend(fontsize=7)
    fig.tight_layout()
    return ctx.save_figure(fig, "b4-handoffs")


def fairness_joins(ctx: Context, al: dict, t: pd.DataFrame, rate: str, n0: int, steps, dur: float) -> str:
    """B5 (Fig. 6): allotted fairness through the joins, the Chiu–Jain estimate dotted."""
    from tcplab.metrics import allotted_fairness

    last = steps[-1]
    n_end = n0 * 2 ** len(steps)
    plt = _plt()
    fig, ax = plt.subplots(figsize=(7.5, 4.3))
    for p, a in al.items():
        f = allotted_fairness(a)
        ax.plot(f.index + 1, f.to_numpy(), "-", lw=1.1, color=color(p), label=label(p))
        cj = t.at[label(p), "chiu_jain_s"]
        if last + cj < dur:
            ax.axvline(last + cj, color=color(p), lw=0.8, ls=":")
    for s_ in steps:
        ax.axvline(s_, color="grey", lw=0.6)
    ax.plot([], [], "k:", lw=0.8, label="last join + Chiu–Jain time (eqs. 4, 5)")
    ax.set_xlabel("time (s)")
    ax.set_ylabel("allotted fairness (Jain, 1 s)")
    ax.set_title(f"Paper B, Fig. 6: {rate}, N = {n0} doubling every 5 s after {steps[0]:g} s (to {n_end})", fontsize=9)
    ax.set_ylim(0, 1.02)
    ax.legend(fontsize=7, loc="lower left")
    return ctx.save_figure(fig, "b5-fairness-joins")


def goodput_departures(ctx: Context, al: dict, rec: pd.DataFrame, rate: str, n_start: int, steps) -> str:
    """B6 (Fig. 7): allotted system goodput through the departures, and the recovery
    after each step beside the refill model."""
    from tcplab.metrics import allotted_system_goodput

    plt = _plt()
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(12, 4.2), gridspec_kw={"width_ratios": [1.6, 1]})
    for p, a in al.items():
        asg = allotted_system_goodput(a) / 1e6
        ax.plot(asg.index + 1, asg.to_numpy(), "-", lw=1.1, color=color(p), label=label(p))
    for k, s_ in enumerate(steps):
        ax.axvline(s_, color="grey", lw=0.6, label="a departure step: N halves" if k == 0 else None)
    ax.axhline(payload_capacity_bps(bps(rate)) / 1e6, color="grey", lw=0.6, ls=":",
               label="the link's payload capacity")
    ax.set_xlabel("time (s)")
    ax.set_ylabel("allotted system goodput (Mb/s)")
    ax.set_title(f"Paper B, Fig. 7: {rate}, N = {n_start} halving every 5 s after {steps[0]:g} s", fontsize=9)
    ax.legend(fontsize=8, loc="lower left")
    for p in PROTOCOLS:
        d = rec[rec["protocol"] == label(p)]
        ax2.plot(d["remaining"], d["recover_s"], "o", color=color(p), label=label(p))
        ax2.plot(d["remaining"], d["model_s"], "x--", lw=0.8, color=color(p))
    # what the two marks mean, in grey (each protocol keeps its colour); a 5 pt
    # legend with one entry per protocol and mark was unreadable
    ax2.plot([], [], "o", color="grey", label="measured")
    ax2.plot([], [], "x--", color="grey", lw=0.8, label="refill time (B·RTT + buffer)/2 ÷ (n·α) RTTs")
    _log_axes(ax2, rec["remaining"])
    ax2.set_xlabel("flows remaining after the step")
    ax2.set_ylabel("seconds to regain 95% of the pre-step goodput")
    ax2.set_title("Recovery after each departure", fontsize=9)
    ax2.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))  # beside, not over the points
    fig.tight_layout()
    return ctx.save_figure(fig, "b6-goodput-departures")


def success_vs_per(ctx: Context, df: pd.DataFrame, main: str, n: int, rate: str) -> str:
    """B7 (Fig. 8): 70% application success against the PER — the paper's whole range
    on the left, and on the right the low PERs where the protocols differ (above 0.1
    every protocol is at 0, which left most of a single panel empty)."""
    plt = _plt()
    fig, axes = plt.subplots(1, 2, figsize=(10, 4.2), sharey=True, gridspec_kw={"width_ratios": [1, 1.3]})
    low = df[df["PER"] <= 0.1]
    for ax, part in zip(axes, (df, low)):
        for p in PROTOCOLS:
            d = part[part["protocol"] == label(p)].sort_values("PER")
            ax.plot(d["PER"], d[main], "o-", ms=4, color=color(p), label=label(p))
            if main == "success_reads":
                ax.plot(d["PER"], d["success_allotted"], "--", lw=0.9, color=color(p))
        ax.set_xlabel("packet error rate on the sink links (PER)")
        ax.set_ylim(-2, 102)
    if main == "success_reads":
        # what the two line styles mean, in grey: each protocol keeps its colour
        axes[1].plot([], [], "-", color="grey", label="solid: reads that got ≥ 70% (playback)")
        axes[1].plot([], [], "--", color="grey", lw=0.9, label="dashed: allotted goodput ≥ 70% of 1 Mb/s")
    axes[0].set_ylabel("70% application success percentage")
    axes[0].set_title("the paper's range of PER", fontsize=9)
    axes[1].set_title("PER ≤ 0.1, where the protocols differ", fontsize=9)
    axes[1].legend(fontsize=7.5)
    fig.suptitle(f"Paper B, Fig. 8: {n} × 1 Mb/s CBR over TCP(α,β), {rate} bottleneck", fontsize=10)
    fig.tight_layout()
    return ctx.save_figure(fig, "b7-success-vs-per")


def friendliness(ctx: Context, lo: pd.DataFrame, hi: pd.DataFrame) -> str:
    """B8 (Figs. 9–11): each protocol's group against TCP(1, 0.5)'s, at the two rates."""
    plt = _plt()
    others = [p for p in PROTOCOLS if p != STANDARD]
    fig, axes = plt.subplots(2, 3, figsize=(13, 7), sharex=True)
    for row, df in enumerate((lo, hi)):
        rate = df["rate"].iloc[0]
        for ax, p in zip(axes[row], others):
            d = df[df["protocol"] == label(p)].sort_values("N")
            tot = d["ab_mbps"] + d["std_mbps"]
            ax.plot(d["N"], d["ab_mbps"], "o-", ms=4, color=color(p), label=f"{label(p)} group")
            ax.plot(d["N"], d["std_mbps"], "s-", ms=4, color=color(STANDARD), label="TCP(1, 0.5) group")
            ax.plot(d["N"], tot / 2, ":", color="grey", lw=0.8, label="half of the total")
            ax.plot(d["N"], d["share_eq1"] * tot, "--", lw=0.9, color=color(p), label="eq. 1 share × total")
            ax.set_title(f"{rate}: {label(p)} vs TCP(1, 0.5)" + (f" (Fig. {9 + others.index(p)})" if row == 0 else ""),
                         fontsize=9)
            ax.set_ylabel("aggregated goodput (Mb/s)")
            ax.set_ylim(0, None)
            if row == 1:
                ax.set_xlabel("N (flows, half of each protocol)")
            ax.legend(fontsize=6)
    fig.tight_layout()
    return ctx.save_figure(fig, "b8-friendliness")
