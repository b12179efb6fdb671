"""Paper A's figures: the same axes and series as the paper's, each written through
`Context.save_figure`; every function returns the stem."""

from __future__ import annotations

import numpy as np
import pandas as pd

from tcplab.reproduce import Context
from tcplab.reproduce.adaptivity.runs import A3_CASES, setup


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def curves(ctx: Context, s: pd.DataFrame, series: str, label, title: str, stem: str, level: float,
           band=True) -> str:
    """Normalized throughput against f (log-x, 0.05–10 Hz): the mean over seeds with
    markers, the min–max over seeds shaded, the dip's `level` dashed (A1, A4–A8)."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(6.4, 4))
    for i, (key, d) in enumerate(s.groupby(series, sort=False, observed=True)):
        d = d.sort_values("f")
        ax.plot(d["f"], d["mean"], "o-", ms=3.5, lw=1.1, color=f"C{i}", label=label(key))
        ax.fill_between(d["f"], d["lo"], d["hi"], color=f"C{i}", alpha=0.15, lw=0)
    ax.axhline(1.0, color="grey", lw=0.8, ls=":", label="1.0: all the free capacity")
    if band:
        ax.axhspan(0.6, 0.7, color="C3", alpha=0.07, lw=0, label="paper's dip depth 0.6–0.7")
    ax.axhline(level, color="grey", lw=0.6, ls="--", label=f"{level:g}: criterion, a dip below it")
    ax.set_xscale("log")
    ax.set_xlim(0.045, 11)
    ax.set_xlabel("frequency of the background f (1/s)")
    ax.set_ylabel("normalized throughput\n(goodput / free capacity)")
    seeds = int(s["seeds"].max())
    # two lines: one line of this length ran past the figure's edges (A6's was clipped)
    ax.set_title(f"{title}\n{ctx.engine}; mean of {seeds} seed(s), band = min–max", fontsize=9)
    ax.legend(fontsize=7, loc="best")  # not over the curves (a fixed corner hid A5's 50 ms line)
    fig.tight_layout()
    return ctx.save_figure(fig, stem)


def two_frequency_map(ctx: Context, fs: list[float], M: np.ndarray, band: tuple[float, float]) -> str:
    """A2 (Fig. 3): the (f1, f2) map (the critical `band` dashed) and sections of it."""
    n = len(fs)
    fa = np.array(fs)
    plt = _plt()
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(10, 4.2), gridspec_kw={"width_ratios": [1.25, 1]})
    edges = np.geomspace(fa[0] / np.sqrt(fa[1] / fa[0]), fa[-1] * np.sqrt(fa[1] / fa[0]), n + 1) if n > 1 else \
        np.array([fa[0] / 1.5, fa[0] * 1.5])
    im = ax.pcolormesh(edges, edges, M.T, cmap="viridis", vmin=min(0.5, np.nanmin(M)), vmax=max(1.0, np.nanmax(M)))
    fig.colorbar(im, ax=ax, label="normalized throughput")
    for b in band:
        ax.axvline(b, color="w", lw=0.7, ls="--")
        ax.axhline(b, color="w", lw=0.7, ls="--")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("f1 (1/s)")
    ax.set_ylabel("f2 (1/s)")
    ax.set_title(f"Paper A, Fig. 3: two-sine background ({ctx.engine})", fontsize=9)
    for i, f in enumerate(fs):
        if i % max(1, n // 4) == 0:
            ax2.plot(fa, M[i], "o-", ms=3, label=f"f2 = {f:.3g} Hz")
    ax2.plot(fa, np.nanmean(M, axis=1), "k--", lw=1.2, label="mean over f2")
    ax2.set_xscale("log")
    ax2.set_xlabel("f1 (1/s)")
    ax2.set_ylabel("normalized throughput")
    ax2.set_title("sections of the map", fontsize=9)
    ax2.legend(fontsize=6)
    fig.tight_layout()
    return ctx.save_figure(fig, "a2-two-frequencies")


def _rate(times: np.ndarray, lo: float, hi: float, bin_s: float, bytes_: int) -> tuple[np.ndarray, np.ndarray]:
    edges = np.arange(lo, hi + bin_s, bin_s)
    n, _ = np.histogram(times, edges)
    return edges[:-1] + bin_s / 2, n * bytes_ * 8 / bin_s / 1e3


def mechanism_traces(ctx: Context, runs: dict, stats: dict, warm: float) -> str:
    """A3 (Figs. 4–10): sending rates, window, sequence numbers and the queue by class
    at the low, critical and high frequency."""
    from tcplab.plots import COLORS

    su = setup()
    plt = _plt()
    fig, axes = plt.subplots(4, 3, figsize=(12, 9.5))
    for j, (name, f) in enumerate(A3_CASES):
        r = runs[name]
        span = max(10.0, 3 / f)
        lo = warm + ctx.pick(5.0, 60.0, 300.0)
        hi = lo + span
        fid = int(r.flows.loc[r.flows["kind"] == "tcp", "id"].iloc[0])
        sends = r.traces["sends"]
        sends = sends[(sends["flow"] == fid) & (sends["t"] >= lo) & (sends["t"] < hi)]
        bin_s = min(0.5, 0.1 / f) if f < 1 else 0.05
        x, y = _rate(sends["t"].to_numpy(), lo, hi, bin_s, su.tcp_packet)
        axes[0, j].plot(x, y, color=COLORS["tcp"], lw=1, label="TCP")
        udp = r.traces["udp"]
        x, y = _rate(udp.loc[(udp["t"] >= lo) & (udp["t"] < hi), "t"].to_numpy(), lo, hi, bin_s, su.udp_packet)
        axes[0, j].plot(x, y, color=COLORS["udp"], lw=1, label="UDP")
        axes[0, j].set_title(f"{name} f = {f:g} Hz (Figs. {['4, 5', '6–8', '9, 10'][j]})", fontsize=9)
        tcp = r.traces["tcp"]
        tcp = tcp[(tcp["flow"] == fid) & (tcp["t"] >= lo) & (tcp["t"] < hi)]
        axes[1, j].step(tcp["t"], tcp["inflight"], where="post", lw=0.9, color="C0", label="packets in flight")
        axes[1, j].step(tcp["t"], tcp["cwnd"], where="post", lw=0.7, color="C2", alpha=0.7, label="cwnd")
        new, rtx = sends[sends["rtx"] == 0], sends[sends["rtx"] != 0]
        axes[2, j].plot(new["t"], new["seq"], ".", ms=1.5, color="C0", label="sent")
        axes[2, j].plot(rtx["t"], rtx["seq"], "x", ms=4, color="C3", label="retransmitted")
        drops = r.traces["drops"]
        drops = drops[(drops["flow"] == fid) & (drops["t"] >= lo) & (drops["t"] < hi)]
        axes[2, j].plot(drops["t"], drops["seq"], "o", ms=3, mfc="none", color="k", label="dropped")
        q = r.traces["queue"]
        q = q[(q["link"] == 0) & (q["t"] >= lo) & (q["t"] < hi)]
        # the occupancy sampled on a fine grid (a step function; keeps the SVG small)
        grid = np.linspace(lo, hi, 2000)
        k = np.clip(np.searchsorted(q["t"].to_numpy(), grid, side="right") - 1, 0, None)
        qu, qt = (q["udp"].to_numpy()[k], q["tcp"].to_numpy()[k]) if len(q) else (grid * 0, grid * 0)
        axes[3, j].stackplot(grid, qu, qt, step="post", colors=[COLORS["udp"], COLORS["tcp"]], labels=["UDP", "TCP"], alpha=0.8)
        axes[3, j].axhline(su.buffer, color="k", lw=0.7, ls=":")
        axes[3, j].set_xlabel("time (s)")
        st = stats[name]
        axes[1, j].text(0.01, 0.97, f"median window at a loss: {st['window_peak_median']:.0f}",
                        transform=axes[1, j].transAxes, va="top", fontsize=7)
        axes[2, j].text(0.01, 0.97, f"{st['drops_per_episode']:.1f} drops/episode, "
                        f"{100 * st['timeout_share']:.0f}% end in a timeout",
                        transform=axes[2, j].transAxes, va="top", fontsize=7)
    for i, lab in enumerate(["sending rate (kb/s)", "window (packets)", "sequence number", "bottleneck queue (packets)"]):
        axes[i, 0].set_ylabel(lab)
        axes[i, 0].legend(fontsize=6, loc="upper right")
    fig.suptitle("Paper A, Figs. 4–10: the mechanism at low, critical and high f (Reno, packet)", fontsize=10)
    fig.tight_layout()
    return ctx.save_figure(fig, "a3-mechanism-traces")
