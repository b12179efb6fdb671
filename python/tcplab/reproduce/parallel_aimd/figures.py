"""Paper C's figures: the same axes and series as the paper's, each written through
`Context.save_figure`; every function returns the stem."""

from __future__ import annotations

import numpy as np
import pandas as pd

from tcplab.models import aimd
from tcplab.plots import sum_of_windows, window
from tcplab.reproduce import Context
from tcplab.reproduce.parallel_aimd.runs import C11_BUFFER, C11_NS, ONE_POLICIES, path

#: one colour per bottleneck buffer b in every figure of paper C (C6, C7, C10)
BUFFER_COLORS = {5: "C0", 10: "C4", 15: "C5", 20: "C1", 30: "C6", 50: "C2", 100: "C3", 200: "C7"}


#: the hybrid model's time axis: its unit is c/η, the time one connection's rate takes to
#: grow by the link's capacity c at its additive increase η (rates are in units of c)
MODEL_TIME = "time (units of c/η)"
#: one name for what C1, C6, C7 and C8 plot against N
AGGREGATE = "aggregate throughput / capacity, E[X]/c"


def buffer_color(b) -> str:
    return BUFFER_COLORS.get(int(b), "C8")


def thm1(n, beta=0.5):
    """Theorem 1: E[X]/c = 1 − 1/(1 + N(1+β)/(1−β))."""
    return aimd.aimd_one_utilization(np.asarray(n), beta)


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _path_label() -> str:
    """"10 Mb/s, RTT 120 ms" of c-parallel-sack.toml's Plan."""
    p = path()
    return f"{p.rate_bps / 1e6:g} Mb/s, RTT {p.rtt_s * 1e3:.0f} ms"


def theorem1(ctx: Context, df: pd.DataFrame, ns, packet: pd.DataFrame | None) -> str:
    """C1 (Fig. 2): the hybrid model under the ONE policies against Theorem 1."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    nn = np.arange(1, max(ns) + 1)
    ax.plot(nn, thm1(nn), "-", color="k", lw=1.2, label="Theorem 1: 1 − 1/(1 + 3N)")
    for i, p in enumerate(ONE_POLICIES):
        d = df[df["policy"] == p]
        ax.plot(d["N"] + (i - 1.5) * 0.06, d["fluid"], "o", ms=4, mfc="none", color=f"C{i}", label=f"hybrid model, {p}")
    if packet is not None:
        for b, style in ((20, "s--"),):
            d = packet[packet["buffer"] == b].sort_values("N")
            if len(d):
                ax.plot(d["N"], d["normalized_throughput"], style, ms=3.5, color="C5", lw=0.8,
                        label=f"{ctx.engine}: TCP-SACK, DropTail b = {b}")
    ax.set_xlabel("N (connections)")
    ax.set_ylabel(AGGREGATE)
    ax.set_ylim(0.6, 1.02)
    ax.set_title("Paper C, Fig. 2 / Theorem 1: aggregate throughput of N AIMD connections", fontsize=9)
    ax.legend(fontsize=7, loc="lower right")
    return ctx.save_figure(fig, "c1-theorem1")


def biased(ctx: Context, df: pd.DataFrame, pred: float, paths: dict) -> str:
    """C2 (Figs. 3, 4): class and aggregate throughput against σ, and sample paths."""
    plt = _plt()
    fig = plt.figure(figsize=(9.6, 3.8))
    ax = fig.add_subplot(1, 3, 1)
    ax.plot(df["sigma"], df["aggregate"], "o", color="k", label="aggregate")
    ax.axhline(pred, color="k", lw=1, label="Theorem 1 (12/13)")
    ax.plot(df["sigma"], df["class1"], "s-", color="C0", ms=4, label="class 1 (conn. 1, 2)")
    ax.plot(df["sigma"], df["class2"], "^-", color="C1", ms=4, label="class 2 (conn. 3, 4)")
    ax.set_xlabel("σ")
    ax.set_ylabel(AGGREGATE)
    ax.set_title("Fig. 3", fontsize=9)
    ax.legend(fontsize=6)
    for k, (s, tr) in enumerate(paths.items()):
        a = fig.add_subplot(1, 3, 2 + k)
        for i in range(4):
            a.plot(tr["time"], tr[f"x{i}"], lw=0.9, label=f"conn. {i + 1}")
        a.set_xlabel(MODEL_TIME)
        a.set_title(f"Fig. 4: σ = {s}", fontsize=9)
        if k == 0:
            a.set_ylabel("rate / c")
            a.legend(fontsize=6)
    fig.tight_layout()
    return ctx.save_figure(fig, "c2-biased-rate-independent")


def all_multtcp(ctx: Context, df: pd.DataFrame, ns) -> str:
    """C3: eq. 6 (ALL) and MultTCP against Theorem 1."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(6.4, 4))
    nn = np.arange(1, max(ns) + 1)
    ax.plot(nn, thm1(nn), "-", color="k", label="ONE, Theorem 1: 1 − 1/(1+3N)")
    ax.plot(nn, 1 - 1 / (4 * nn), "--", color="C2", label="MultTCP: 1 − 1/(4N)")
    ax.plot(nn, np.full(nn.size, 0.75), ":", color="C3", label="ALL, eq. 6: (1+β)/2")
    ax.plot(df["N"], df["multtcp"], "o", mfc="none", color="C2", label="hybrid model, MultTCP (Nη, 1 − (1−β)/N)")
    ax.plot(df["N"], df["all"], "s", mfc="none", color="C3", label="hybrid model, ALL")
    ax.set_xlabel("N")
    ax.set_ylabel(AGGREGATE)
    ax.set_title("Paper C, eq. 6 and MultTCP against Theorem 1", fontsize=9)
    ax.legend(fontsize=7)
    return ctx.save_figure(fig, "c3-all-multtcp")


def second_moments(ctx: Context, df: pd.DataFrame, tr: pd.DataFrame) -> str:
    """C4 (Theorem 2, Fig. 5): second moments per policy, and a beatdown sample path."""
    plt = _plt()
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(9.6, 3.8), gridspec_kw={"width_ratios": [1.2, 1]})
    x = np.arange(len(df))
    ax.bar(x - 0.18, df["paper"], 0.36, color="C7", label="Theorem 2 (as printed)")
    ax.bar(x + 0.18, df["measured"], 0.36, yerr=df["ci95"], color="C0", label="hybrid model (exact events)")
    bx = ONE_POLICIES.index("beatdown")
    ax.hlines(28 / 111, bx - 0.45, bx + 0.45, color="C3", lw=1.5, ls="--", label="28/111 (beatdown, exact)")
    ax.set_xticks(x, df["policy"], fontsize=7)
    ax.set_ylabel("E[X₁²]/c²")
    ax.set_ylim(0.15, 0.36)
    ax.set_title("Theorem 2: N = 2, β = ½", fontsize=9)
    ax.legend(fontsize=7)
    ax2.plot(tr["time"], tr["x0"], lw=0.9, label="connection 1")
    ax2.plot(tr["time"], tr["x1"], lw=0.9, label="connection 2")
    ax2.set_xlabel(MODEL_TIME)
    ax2.set_ylabel("rate / c")
    ax2.set_title("Fig. 5: beatdown sample path", fontsize=9)
    ax2.legend(fontsize=7)
    fig.tight_layout()
    return ctx.save_figure(fig, "c4-second-moments")


def fixed_points(ctx: Context, n: int, lr, lr_pred, bd, bd_pred) -> str:
    """C5: largest-rate's fixed point (eq. 9) and beatdown's stationary point."""
    plt = _plt()
    fig, axes = plt.subplots(1, 2, figsize=(8.4, 3.4))
    k = np.arange(1, n + 1)
    for ax, got, want, title in ((axes[0], lr, lr_pred, "largest-rate: rates before a congestion event (eq. 9)"),
                                 (axes[1], bd, bd_pred, "beatdown: rates at a tagging time (Sec. IV.B)")):
        ax.bar(k - 0.18, want, 0.36, color="C7", label="paper")
        ax.bar(k + 0.18, got, 0.36, color="C0", label="hybrid model, after 2000 events")
        ax.set_xlabel("k (sorted)")
        ax.set_title(title, fontsize=8)
        ax.legend(fontsize=7)
    axes[0].set_ylabel("rate / c")
    fig.tight_layout()
    return ctx.save_figure(fig, "c5-fixed-points")


def droptail_vs_n(ctx: Context, df: pd.DataFrame) -> str:
    """C6 (Fig. 7): throughput against N for each DropTail buffer."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    nn = np.arange(1, df["N"].max() + 1)
    ax.plot(nn, thm1(nn), "-", color="k", lw=1.3, label="Theorem 1")
    for b, d in df.groupby("buffer"):
        ax.plot(d["N"], d["normalized_throughput"], "o-", ms=3.5, lw=0.9, color=buffer_color(b), label=f"b = {b}")
    ax.set_xlabel("N (TCP-SACK connections)")
    ax.set_ylabel(AGGREGATE)
    ax.set_title(f"Paper C, Fig. 7: DropTail, RTT {path().rtt_s * 1e3:.0f} ms ({ctx.engine})", fontsize=9)
    ax.legend(fontsize=7)
    return ctx.save_figure(fig, "c6-droptail-vs-n")


def sum_of_windows_figure(ctx: Context, runs: dict, t0: float, small: int) -> str:
    """C6 (Figs. 8, 9): Σ cwnd for N = 5, 10 at the smallest and largest buffer
    (`runs[(n, b)]`), and the individual windows at N = 10, the smallest buffer."""
    plt = _plt()
    fig, axes = plt.subplots(3, 1, figsize=(6.4, 7.4))
    for ax, n in zip(axes[:2], (5, 10)):
        for (m, b), r in runs.items():
            if m != n:
                continue
            tcp = r.traces["tcp"]
            total = sum_of_windows(tcp, t0, t0 + 30)
            ax.plot(total.index, total.values, drawstyle="steps-post", lw=0.9, color=buffer_color(b), label=f"b = {b}")
            if n == 10 and b == small:
                win = window(tcp, t0, t0 + 5).assign(t=lambda d: d["t"].clip(lower=t0))
                for fid, d in win.groupby("flow"):
                    axes[2].step(d["t"], d["cwnd"], where="post", lw=0.7)
        ax.set_ylabel("Σ cwnd (packets)")
        ax.set_title(f"Fig. 8: N = {n}", fontsize=9)
        ax.legend(fontsize=7)
    axes[2].set_title(f"Fig. 9: N = 10, b = {small}, individual windows", fontsize=9)
    axes[2].set_ylabel("cwnd (packets)")
    axes[2].set_xlabel("time (s)")
    fig.tight_layout()
    return ctx.save_figure(fig, "c6-sum-of-windows")


def vs_n(ctx, df, title, stem, series_col, ax=None, color_by_buffer=False):
    """Throughput against N, one line per `series_col`, Theorem 1 beside (C7, C8); on
    `ax` when given (nothing saved), else a figure of its own saved as `stem`."""
    plt = _plt()
    own = ax is None
    if own:
        fig, ax = plt.subplots(figsize=(6.4, 4))
    nn = np.arange(1, df["N"].max() + 1)
    ax.plot(nn, thm1(nn), "-", color="k", label="Theorem 1")
    for i, (key, d) in enumerate(df.groupby(series_col, sort=False)):
        d = d.sort_values("N")
        color = buffer_color(d["buffer"].iloc[0]) if color_by_buffer else f"C{i}"
        ax.plot(d["N"], d["normalized_throughput"], "o-", ms=3.5, lw=0.9, color=color, label=str(key))
    ax.set_xlabel("N")
    ax.set_ylabel(AGGREGATE)
    # every curve inside the axes (a fixed floor of 0.7 cut C8's Th = 2 curve)
    low = float(np.nanmin(df["normalized_throughput"])) if len(df) else 0.7
    ax.set_ylim(min(0.7, np.floor((low - 0.02) * 20) / 20), 1.02)
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=7)
    return ctx.save_figure(fig, stem) if own else None


def red_vs_n(ctx: Context, df: pd.DataFrame) -> str:
    """C7 (Fig. 10)."""
    return vs_n(ctx, df, f"Paper C, Fig. 10: RED (paper C's settings), RTT {path().rtt_s * 1e3:.0f} ms ({ctx.engine})",
                "c7-red-vs-n", "series", color_by_buffer=True)


def dropper_vs_n(ctx: Context, df: pd.DataFrame) -> str:
    """C8 (Fig. 11): one panel per selection policy."""
    plt = _plt()
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.9), sharey=True)
    for ax, sel in zip(axes, ("rate-independent", "largest-rate")):
        vs_n(ctx, df[df["selection"] == sel], f"Fig. 11: threshold-dropper, {sel}", None, "series", ax=ax)
    fig.tight_layout()
    return ctx.save_figure(fig, "c8-threshold-dropper-vs-n")


def dropper_windows(ctx: Context, tcp: pd.DataFrame, t0: float, n: int) -> str:
    """C8 (Fig. 12): the windows of N connections under the dropper, and their sum."""
    plt = _plt()
    fig, (a1, a2) = plt.subplots(2, 1, figsize=(6.4, 5.6), sharex=True)
    w = window(tcp, t0, t0 + 30).assign(t=lambda d: d["t"].clip(lower=t0))
    for fid, d in w.groupby("flow"):
        a1.step(d["t"], d["cwnd"], where="post", lw=0.7)
    total = sum_of_windows(tcp, t0, t0 + 30)
    a2.plot(total.index, total.values, drawstyle="steps-post", lw=0.9, color="k")
    a1.set_ylabel("cwnd (packets)")
    a2.set_ylabel("Σ cwnd (packets)")
    a2.set_xlabel("time (s)")
    a1.set_title(f"Fig. 12: N = {n}, threshold-dropper (rate-independent, Th = 3, b = 100, τ = {path().dropper_tau})",
                 fontsize=9)
    fig.tight_layout()
    return ctx.save_figure(fig, "c8-windows")


def p_loss_given_window(ctx: Context, buffers: dict, panels: dict, same: list) -> str:
    """C9 (Figs. 13, 14): P(z = 1 | w) per queue (row) and buffer (panel); `panels[(q, b)]`
    the table (w, p); `same` the RED buffers whose run is DropTail's, drop for drop."""
    plt = _plt()
    cols = max(len(v) for v in buffers.values())
    fig, axes = plt.subplots(2, cols, figsize=(2.6 * cols, 5.8), sharey=True, squeeze=False)
    for row, qname in enumerate(buffers):
        for ax, b in zip(axes[row], buffers[qname]):
            pz = panels[(qname, b)]
            ax.plot(pz["w"], pz["p"], "o-", ms=3, color="C0" if row == 0 else "C3")
            ax.set_title(f"{qname}, b = {b}", fontsize=9)
            if row == 1:
                ax.set_xlabel("w (packets)")
            if qname == "RED" and b in same:  # where RED made no early drop its run is DropTail's: say so
                ax.text(0.03, 0.97, f"= DropTail, b = {b}: RED\nmade no early drop, so\nevery drop is DropTail's\n"
                        "(same run, drop for drop)", transform=ax.transAxes, fontsize=7, va="top", color="0.3")
        axes[row][0].set_ylabel("P(z = 1 | w)")
    fig.suptitle("Paper C, Figs. 13 (DropTail) and 14 (RED): empirical P(z = 1 | w), N = 10, bins of one RTT",
                 fontsize=9)
    fig.tight_layout()
    return ctx.save_figure(fig, "c9-p-loss-given-window")


def congestion_events(ctx: Context, buffers: list, dists: dict, events: dict, t0: float) -> str:
    """C10 (Figs. 15, 17): CCDF of the connections hit per congestion event per buffer
    (`dists[b]`), and the loss events of the smallest and largest buffer (`events[b]`)."""
    plt = _plt()
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(9.6, 3.8))
    for i, b in enumerate(buffers):
        dist = dists[b]
        ax.step(dist["m"], dist["ccdf"], where="post", color=buffer_color(b), label=f"DropTail b = {b}")
        if i == 0 or b == buffers[-1]:
            le = events[b]
            w = le[le["t"] <= t0 + 20]
            ax2.plot(w["t"], w["flow"] + 1 + (0.15 if i else -0.15), "|" if i else "x", ms=6, color=buffer_color(b),
                     label=f"b = {b}")
    ax.set_xlabel("m (connections hit)")
    ax.set_ylabel("P(M > m)")
    ax.set_title("Fig. 15: CCDF of connections per congestion event (threshold 1 RTT)", fontsize=8)
    ax.legend(fontsize=7)
    ax2.set_xlabel("time (s)")
    ax2.set_ylabel("connection")
    ax2.set_title(f"Fig. 17: loss events, the first 20 s measured (t = {t0:g}–{t0 + 20:g} s)", fontsize=8)
    ax2.legend(fontsize=7)
    fig.tight_layout()
    return ctx.save_figure(fig, "c10-congestion-events")


def linux_parallel(ctx: Context, df: pd.DataFrame) -> str:
    """C11: real Linux TCP and the packet engine against Theorem 1."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    nn = np.arange(1, max(C11_NS) + 1)
    ax.plot(nn, thm1(nn), "-", color="k", lw=1.2, label="Theorem 1: 1 − 1/(1 + 3N)")
    ax.plot(df["N"], df["linux"], "o-", color="C3", ms=5, label="real Linux TCP (reno, SACK, kernel defaults)")
    ax.plot(df["N"], df["packet"], "s--", color="C0", ms=4, lw=0.8, label="packet engine, TCP-SACK (ns-2 agents)")
    ax.set_xlabel("N (parallel connections)")
    ax.set_ylabel(AGGREGATE)
    ax.set_ylim(0.5, 1.02)
    ax.set_title(f"Paper C, Figs. 16/18 counterpart: N parallel transfers, {_path_label()}, b = {C11_BUFFER}",
                 fontsize=9)
    ax.legend(fontsize=7, loc="lower right")
    return ctx.save_figure(fig, "c11-linux-parallel")
