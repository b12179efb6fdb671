"""Paper D's figures: the same axes and series as the paper's, one function per
claim, each writing its figure through `Context.save_figure` and returning the stem."""

from __future__ import annotations

import numpy as np
import pandas as pd

from tcplab.models import slowstart as ss
from tcplab.reproduce import Context
from tcplab.reproduce.triple_slowstart.runs import EXAMPLES, path


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def windows(ctx: Context, df: pd.DataFrame) -> str:
    """D1: W_max and W_B of eqs. 1 and 5 against B, with the simulated windows."""
    mu, tau, _ = path()
    plt = _plt()
    fig, ax = plt.subplots(figsize=(6.4, 4))
    bb = np.arange(1, 65)
    ax.plot(bb, ss.max_window(bb, mu, tau), "-", color="C0", label="W_max = B + μτ + 1 (eq. 1)")
    ax.step(bb, ss.overflow_window(bb), where="mid", color="C1", label="W_B = 2^(n_B−1) + B (eq. 5)")
    ax.plot(bb, ss.max_window(bb, mu, tau) / 2, ":", color="C2", label="W_th = W_max/2")
    ax.plot(df["B"], df["w_e_sim"], "o", ms=3.5, color="C0", mfc="none", label=f"{ctx.engine}: window at the CA loss")
    ax.plot(df["B"], df["w_first_sim"], "s", ms=3.5, color="C1", mfc="none",
            label=f"{ctx.engine}: threshold after the 1st slow start's loss")
    ax.axvline(25.5, color="grey", lw=0.8, ls="--")
    ax.text(26, 10, "W_th < 2W_B →", fontsize=7, color="grey")
    ax.set_xlabel("buffer B (packets)")
    ax.set_ylabel("window (packets)")
    ax.set_title("Paper D, eqs. 1, 5: W_max and W_B", fontsize=9)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1))  # beside the axes: inside it hid W_B
    return ctx.save_figure(fig, "d1-windows")


def throughput_vs_buffer(ctx: Context, df: pd.DataFrame) -> str:
    """D2 (Fig. 2): throughput and slow starts per cycle against B, simulation and model."""
    plt = _plt()
    fig, (ax, ax2) = plt.subplots(2, 1, figsize=(6.4, 5.4), sharex=True, gridspec_kw={"height_ratios": [3, 1.3]})
    ax.plot(df["B"], df["throughput_pps"], "o-", ms=3, color="C0", label=f"{ctx.engine} simulation (Tahoe)")
    ax.plot(df["B"], df["throughput_model_pps"], "-", color="C1", lw=1, label="model (W_S + W_E)/(2 RTT), Sec. 7")
    tm = df[df["slowstarts_model"] == 3]
    ts = df[df["slowstarts_sim"] == 3]
    ax.plot(tm["B"], tm["throughput_model_pps"], "x", color="C1", ms=7, label="model: triple slow start (9)/(10)")
    ax.plot(ts["B"], ts["throughput_pps"], "o", color="C3", ms=7, mfc="none", mew=1.5, label="simulation: triple slow start")
    ax.set_ylabel("throughput (packets/s)")
    ax.set_title("Paper D, Fig. 2: the cyclic occurrence of triple slow start", fontsize=9)
    ax.legend(fontsize=7)
    ax2.step(df["B"], df["slowstarts_model"], where="mid", color="C1", label="model")
    ax2.plot(df["B"], df["slowstarts_sim"], "o", ms=3, color="C0", label="simulation (most cycles)")
    ax2.set_ylabel("slow starts\nper cycle")
    ax2.set_yticks([1, 2, 3])
    ax2.set_xlabel("buffer B (packets)")
    ax2.legend(fontsize=7, ncol=2)
    return ctx.save_figure(fig, "d2-throughput-vs-buffer")


def cwnd_examples(ctx: Context, shown: dict) -> str:
    """D3 (Figs. 3–5): cwnd and ssthresh over one cycle for each example B;
    `shown[B]` = (trace rows of the window, slow starts found, model's)."""
    plt = _plt()
    fig, axes = plt.subplots(3, 1, figsize=(6.4, 7), sharex=True)
    for ax, b in zip(axes, EXAMPLES):
        w, found, expected = shown[b]
        ax.plot(w["t"], w["cwnd"], lw=0.9, color="C0", label="cwnd")
        ax.plot(w["t"], w["ssthresh"].clip(upper=300), lw=0.8, ls="--", color="C1", label="ssthresh")
        ax.set_ylabel("window (packets)")
        ax.set_title(f"B = {b}: {found} slow starts per cycle (model: {expected})", fontsize=9)
    axes[0].legend(fontsize=7)
    axes[-1].set_xlabel("time (s)")
    fig.suptitle("Paper D, Figs. 3–5: Tahoe cwnd for B = 19, 20, 22", fontsize=10)
    return ctx.save_figure(fig, "d3-cwnd-19-20-22")


def throughput_approximation(ctx: Context, df: pd.DataFrame) -> str:
    """D4 (Sec. 7): (W_S + W_E)/(2 RTT), with measured and with model windows, against
    the simulated throughput."""
    mu, _, _ = path()
    plt = _plt()
    fig, ax = plt.subplots(figsize=(6.4, 4))
    ax.plot(df["B"], df["throughput_pps"], "o-", ms=3, color="C0", label=f"{ctx.engine} simulation")
    ax.plot(df["B"], df["formula_sim_w_pps"], "s", ms=3.5, mfc="none", color="C2",
            label="(W_S + W_E)/(2 RTT), W_S, W_E measured")
    ax.plot(df["B"], df["throughput_model_pps"], "-", color="C1", label="(W_S + W_E)/(2 RTT), W_S, W_E from the model")
    ax.axhline(mu, color="grey", lw=0.8, ls=":")
    ax.text(1, mu * 0.98, "μ", va="top", fontsize=8, color="grey")
    ax.set_xlabel("buffer B (packets)")
    ax.set_ylabel("throughput (packets/s)")
    ax.set_title("Paper D, Sec. 7: throughput approximation against the simulation", fontsize=9)
    ax.legend(fontsize=7)
    return ctx.save_figure(fig, "d4-throughput-approximation")
