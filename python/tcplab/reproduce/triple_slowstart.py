"""Paper D (Barakat, Altman): TCP Tahoe with a small buffer and a large bandwidth-delay product.

One Tahoe source, 1.5 Mb/s bottleneck, 512-byte packets (μ ≈ 366 packets/s),
τ = 560 ms, FIFO buffer of B waiting slots (`scenarios/d-tahoe-satellite.toml`).
Every claim reads the same traced runs (cwnd, ssthresh, drops) over B, cached.

Slow starts per cycle are counted from the drops, not from cwnd alone: a
slow-start phase (cwnd reset to 1 → next reset) belongs to the *loss* that
ended it, and that loss happened in slow start when the sender's cwnd was
still below ssthresh at the instant of the drop. Paper D counts it that way
(its triple case "gets shortly in congestion avoidance before detecting the
loss occurring in the second slow-start"); see `metrics.tahoe_cycles`. Asking
only whether cwnd ever reached ssthresh counts such a phase as a cycle of its
own.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from tcplab.metrics import tahoe_cycles
from tcplab.models import slowstart as ss
from tcplab.plan import plan, wire_bytes
from tcplab.reproduce import Claim, Context, Outcome, Paper, scenario_of
from tcplab.traces import base_rtt_s

SCENARIO = "scenarios/d-tahoe-satellite.toml"
_SETUP = scenario_of(SCENARIO)
MU = plan(_SETUP).bottleneck("tahoe")["rate_bps"] / (wire_bytes(_SETUP, "tahoe") * 8)  # packets/s
TAU = base_rtt_s(_SETUP)  # s, round-trip propagation
RTT = TAU + 1 / MU  # paper D, Sec. 7: propagation plus one service time
EXAMPLES = (19, 20, 22)  # Figs. 3–5


def _buffers(ctx: Context) -> list[int]:
    return ctx.pick(list(EXAMPLES), list(range(1, 65)), list(range(1, 65)))


def _duration(ctx: Context) -> str:
    # a cycle lasts ≈ 110 s; quick sees ≈ 10 cycles, full ≈ 50
    return ctx.pick("500s", "1200s", "6000s")


def cycles(tcp: pd.DataFrame, drops: pd.DataFrame, flow=0) -> pd.DataFrame:
    """The Tahoe cycles of one flow (`metrics.tahoe_cycles`) from its traces."""
    tcp = tcp[tcp["flow"] == flow]
    return tahoe_cycles(tcp["t"], tcp["cwnd"], tcp["ssthresh"], drops.loc[drops["flow"] == flow, "t"])


def _runs(ctx: Context, buffers, extra=(), keep=None) -> dict[int, object]:
    out = {}
    for b in buffers:
        out[b] = ctx.run(SCENARIO, [f"topology.bottleneck.buffer={b}", f"duration={_duration(ctx)}", "warmup=60s"],
                         trace=("cwnd", "drops") + tuple(extra), keep=keep)
    return out


def _cycles_only(r) -> dict[str, pd.DataFrame]:
    """What the table over B needs of a run: its cycles (a few dozen rows instead of
    one per ack: 1.6 MB per quick run otherwise, 64 runs)."""
    return {"cycles": cycles(r.traces["tcp"], r.traces["drops"], int(r.flows["id"].iloc[0]))}


def _table(ctx: Context) -> pd.DataFrame:
    """Per B: simulation (throughput, slow starts per cycle, windows) beside the model."""
    if "table" in ctx.memo:
        return ctx.memo["table"]
    rows = []
    for b, r in _runs(ctx, _buffers(ctx), keep=_cycles_only).items():
        cy = r.traces["cycles"]
        mode = int(cy["slowstarts"].mode().iloc[0]) if len(cy) else 0
        thr = float(r.metrics["normalized_throughput"]) * MU
        rows.append({
            "B": b, "throughput_pps": thr, "goodput_norm": float(r.metrics["normalized_goodput"]),
            "cycles": len(cy), "slowstarts_sim": mode,
            "share_triple": float(np.mean(cy["slowstarts"] == 3)) if len(cy) else np.nan,
            "w_s_sim": float(cy["w_s"].median()) if len(cy) else np.nan,
            "w_e_sim": float(cy["w_e"].median()) if len(cy) else np.nan,
            "w_first_sim": float(cy["w_first"].median()) if len(cy) else np.nan,
            "formula_sim_w_pps": float(((cy["w_s"] + cy["w_e"]) / (2 * RTT)).mean()) if len(cy) else np.nan,
            "slowstarts_model": int(ss.slowstarts_per_cycle(b, MU, TAU)),
            "regime": str(ss.slowstart_regime(b, MU, TAU)),
            "w_max_model": float(ss.max_window(b, MU, TAU)), "w_b_model": float(ss.overflow_window(b)),
            "n_b": int(ss.overflow_minicycle(b)), "w_s_model": float(ss.congestion_avoidance_start(b, MU, TAU)),
            "throughput_model_pps": float(ss.slowstart_cycle_throughput(b, MU, TAU)),
            "normalized_buffer": float(ss.normalized_buffer(b, MU, TAU)),
        })
    df = pd.DataFrame(rows)
    ctx.memo["table"] = df
    return df


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


# --- D1 ------------------------------------------------------------------------------------


def check_d1(ctx: Context) -> Outcome:
    df = _table(ctx)
    plt = _plt()
    fig, ax = plt.subplots(figsize=(6.4, 4))
    bb = np.arange(1, 65)
    ax.plot(bb, ss.max_window(bb, MU, TAU), "-", color="C0", label="W_max = B + μτ + 1 (eq. 1)")
    ax.step(bb, ss.overflow_window(bb), where="mid", color="C1", label="W_B = 2^(n_B−1) + B (eq. 5)")
    ax.plot(bb, ss.max_window(bb, MU, TAU) / 2, ":", color="C2", label="W_th = W_max/2")
    ax.plot(df["B"], df["w_e_sim"], "o", ms=3.5, color="C0", mfc="none", label=f"{ctx.engine}: window at the CA loss")
    ax.plot(df["B"], df["w_first_sim"], "s", ms=3.5, color="C1", mfc="none",
            label=f"{ctx.engine}: threshold after the 1st slow start's loss")
    ax.axvline(25.5, color="grey", lw=0.8, ls="--")
    ax.text(26, 10, "W_th < 2W_B →", fontsize=7, color="grey")
    ax.set_xlabel("buffer B (packets)")
    ax.set_ylabel("window (packets)")
    ax.set_title("Paper D, eqs. 1, 5: W_max and W_B", fontsize=9)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1))  # beside the axes: inside it hid W_B
    figs = [ctx.save_figure(fig, "d1-windows")]

    t1 = df[df["regime"] == ss.REGIME_THEOREM_1]
    err_max = ((df["w_e_sim"] - df["w_max_model"]) / df["w_max_model"]).abs()
    share_max = float(np.mean(err_max <= 0.03))
    off_max = df.loc[err_max > 0.03, "B"].tolist()
    err_b = (t1["w_first_sim"] - t1["w_b_model"]).abs()
    off_b = t1.loc[err_b > 2, "B"].tolist()
    off_b_text = ", ".join(f"B = {int(r.B)}: {r.w_first_sim:.0f} vs {r.w_b_model:.0f}"
                           for r in t1[err_b > 2].itertuples())
    trip_model = df.loc[df["slowstarts_model"] == 3, "B"].tolist()
    trip_sim = df.loc[df["slowstarts_sim"] == 3, "B"].tolist()
    necessary_ok = bool(np.all(df.loc[df["slowstarts_sim"] == 3, "normalized_buffer"] < 1 / 7))
    ok_max = share_max >= 0.9
    ok_b = not off_b
    verdict = "reproduced" if ok_max and ok_b and necessary_ok else ("partly" if ok_max or ok_b else "not-reproduced")
    measured = (f"window at the congestion-avoidance loss within 3% of W_max = B + μτ + 1 for "
                f"{100 * share_max:.0f}% of B = {df['B'].min()}..{df['B'].max()} (off: B = {off_max or 'none'}); "
                f"threshold after the first slow start's loss = W_B (eq. 5) ± 2 packets for "
                f"{len(t1) - len(off_b)} of {len(t1)} B with W_th > 2 W_B, off at {off_b_text or 'none'}. "
                f"Triple slow starts seen at B = {trip_sim or 'none'}, all with B/(μτ+1) < 1/7: "
                f"{'yes' if necessary_ok else 'no'}.")
    note = ("eq. (1) holds. eq. (5) holds except exactly at powers of two: at B = 2^k the simulated first slow "
            "start overflows one mini-cycle later than eq. (6) (2^(n_B−2) < B ≤ 2^(n_B−1)) says, so W_B = 3B "
            "instead of 2B — the boundary B = 2^(n_B−1) falls on the other side in the simulator (and in "
            "ns-2 2.35, which gives the same cycles). The odd B = 1 (timeouts, window 3) and B = 21 "
            "(alternating cycle types) are the W_max outliers. The necessary condition B/(μτ+1) < 1/7 holds "
            "wherever a triple slow start is seen. Conditions (9)/(10) "
            f"predict triples at B = {trip_model}; where they actually appear is D2's subject.")
    return Outcome(verdict, measured, note, {
        "share_w_max_within_3pct": share_max, "w_max_off": off_max, "w_b_off": off_b,
        "triple_model": trip_model, "triple_sim": trip_sim, "necessary_condition_holds": necessary_ok},
        figs, {"table": df})


# --- D2 ------------------------------------------------------------------------------------


def _dips(df: pd.DataFrame, col: str, at: list[int]) -> dict[int, float]:
    """Relative throughput loss at B against the mean of its neighbours B−1, B+1."""
    s = df.set_index("B")[col]
    out = {}
    for b in at:
        nb = [s[x] for x in (b - 1, b + 1) if x in s.index]
        if nb:
            out[b] = float(1 - s[b] / np.mean(nb))
    return out


def check_d2(ctx: Context) -> Outcome:
    df = _table(ctx)
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
    figs = [ctx.save_figure(fig, "d2-throughput-vs-buffer")]

    trip_model = tm["B"].tolist()
    trip_sim = ts["B"].tolist()
    dips = _dips(df, "throughput_pps", trip_sim)
    none_above = bool(all(b <= 26 for b in trip_sim))
    recurs = len(trip_sim) >= 2
    dip_ok = bool(dips) and all(v >= 0.02 for v in dips.values())
    same_b = set(trip_sim) == set(trip_model)
    if ctx.mode == "tiny":
        verdict = "partly" if trip_sim else "not-reproduced"
    elif none_above and recurs and dip_ok and same_b:
        verdict = "reproduced"
    elif none_above and recurs and dip_ok:
        verdict = "partly"
    else:
        verdict = "not-reproduced"
    worst = max(dips.values()) if dips else float("nan")
    measured = (f"triple slow starts in the simulation at B = {trip_sim or 'none'} (model: {trip_model}); "
                f"none above 26: {'yes' if none_above else 'no'}; throughput dips there by "
                + ", ".join(f"{100 * v:.1f}% (B = {b})" for b, v in dips.items())
                + f"; largest dip {100 * worst:.1f}% (paper: up to ≈ 10%, R = (α+2)/(2α+2) ≥ 0.9).")
    note = ("The phenomenon is there: cyclic triple slow starts, only for B well below 26, each costing several "
            "per cent of throughput, so throughput is not monotone in B. But they appear at other buffers than "
            "conditions (9)/(10) predict: in the simulation at B = 4 and 16, powers of two, exactly where the "
            "simulated first slow start overflows one mini-cycle later than eq. (6) says (W_B = 3B, see D1), "
            "not at the model's B = 17, 18, 20, 25 …. ns-2 2.35 gives the same cycles "
            "(`--engine ns2`; checked for B = 4, 16, 20, 21): the second slow start's burst S = 2^(n_B−1) − B + 2 "
            "does not overflow the buffer where the model's mini-cycle arithmetic says it does. The model "
            "throughput line (Sec. 7) lies above the simulation because it ignores slow-start time and caps "
            "nothing at μ (see D4).")
    return Outcome(verdict, measured, note, {"triple_sim": trip_sim, "triple_model": trip_model,
                                             "dips": {str(k): v for k, v in dips.items()},
                                             "none_above_26": none_above}, figs, {"table": df})


# --- D3 ------------------------------------------------------------------------------------


def check_d3(ctx: Context) -> Outcome:
    plt = _plt()
    runs = _runs(ctx, EXAMPLES, extra=("queue",))
    fig, axes = plt.subplots(3, 1, figsize=(6.4, 7), sharex=True)
    found, expected = {}, {}
    qmax = {}
    for ax, b in zip(axes, EXAMPLES):
        r = runs[b]
        tcp = r.traces["tcp"]
        fid = int(r.flows["id"].iloc[0])
        cy = cycles(tcp, r.traces["drops"], fid)
        found[b] = int(cy["slowstarts"].mode().iloc[0]) if len(cy) else 0
        expected[b] = int(ss.slowstarts_per_cycle(b, MU, TAU))
        # one cycle, as the paper's figures: from the second cycle's start to the third's
        lo = float(cy["t_start"].iloc[0]) - 5 if len(cy) else 0.0
        hi = float(cy["t_end"].iloc[0]) + 15 if len(cy) else 300.0
        w = tcp[(tcp["t"] >= lo) & (tcp["t"] <= hi)]
        ax.plot(w["t"], w["cwnd"], lw=0.9, color="C0", label="cwnd")
        ax.plot(w["t"], w["ssthresh"].clip(upper=300), lw=0.8, ls="--", color="C1", label="ssthresh")
        ax.set_ylabel("window (packets)")
        ax.set_title(f"B = {b}: {found[b]} slow starts per cycle (model: {expected[b]})", fontsize=9)
        # queue peak in each slow-start phase of the shown cycle (why B = 20 gets no third one)
        q = r.traces.get("queue")
        if q is not None and len(cy):
            q = q[q["link"] == 0]
            qmax[b] = int(q.loc[(q["t"] >= lo) & (q["t"] <= lo + 12), "packets"].max())
    axes[0].legend(fontsize=7)
    axes[-1].set_xlabel("time (s)")
    fig.suptitle("Paper D, Figs. 3–5: Tahoe cwnd for B = 19, 20, 22", fontsize=10)
    figs = [ctx.save_figure(fig, "d3-cwnd-19-20-22")]
    match = [b for b in EXAMPLES if found[b] == expected[b]]
    verdict = "reproduced" if len(match) == 3 else ("partly" if match else "not-reproduced")
    measured = ", ".join(f"B = {b}: {found[b]}" for b in EXAMPLES) + " slow starts per cycle (paper: 2, 3, 2)."
    note = ("B = 19 and B = 22 go through two slow starts per cycle as in the paper's Figs. 3 and 5. At B = 20 the "
            "second slow start (threshold W_B = 52) reaches its threshold without overflowing the buffer, so the "
            "cycle has two slow starts, not three; ns-2 2.35 with the same scenario (`--engine ns2`) does the "
            "same, so this is not an artefact of tcplab's engine. Both readings of B (waiting slots, or ns-2 "
            "queue-limit B) give two. Triple slow starts do occur on this path, at B = 4 and 16 (see D2).")
    return Outcome(verdict, measured, note, {"found": found, "expected": expected, "queue_peak_first_12s": qmax},
                   figs, {"cycles": pd.DataFrame([{"B": b, "found": found[b], "expected": expected[b]}
                                                  for b in EXAMPLES])})


# --- D4 ------------------------------------------------------------------------------------


def check_d4(ctx: Context) -> Outcome:
    df = _table(ctx)
    plt = _plt()
    fig, ax = plt.subplots(figsize=(6.4, 4))
    ax.plot(df["B"], df["throughput_pps"], "o-", ms=3, color="C0", label=f"{ctx.engine} simulation")
    ax.plot(df["B"], df["formula_sim_w_pps"], "s", ms=3.5, mfc="none", color="C2",
            label="(W_S + W_E)/(2 RTT), W_S, W_E measured")
    ax.plot(df["B"], df["throughput_model_pps"], "-", color="C1", label="(W_S + W_E)/(2 RTT), W_S, W_E from the model")
    ax.axhline(MU, color="grey", lw=0.8, ls=":")
    ax.text(1, MU * 0.98, "μ", va="top", fontsize=8, color="grey")
    ax.set_xlabel("buffer B (packets)")
    ax.set_ylabel("throughput (packets/s)")
    ax.set_title("Paper D, Sec. 7: throughput approximation against the simulation", fontsize=9)
    ax.legend(fontsize=7)
    figs = [ctx.save_figure(fig, "d4-throughput-approximation")]
    rel = (df["throughput_model_pps"] - df["throughput_pps"]) / df["throughput_pps"]
    rel_w = (df["formula_sim_w_pps"] - df["throughput_pps"]) / df["throughput_pps"]
    within = float(np.mean(np.abs(rel) <= 0.10))
    verdict = "reproduced" if within >= 0.8 else ("partly" if within >= 0.3 or np.nanmedian(np.abs(rel_w)) <= 0.15
                                                  else "not-reproduced")
    measured = (f"the formula with the model's W_S, W_E is within 10% of the simulated throughput for "
                f"{100 * within:.0f}% of B (median error {100 * np.nanmedian(rel):+.1f}%, range "
                f"{100 * np.nanmin(rel):+.1f}% … {100 * np.nanmax(rel):+.1f}%); with the measured W_S, W_E: "
                f"median {100 * np.nanmedian(rel_w):+.1f}%.")
    note = ("Criterion (the paper gives no number): within 10% for at least 80% of B. The formula overestimates: "
            "it ignores the time spent in slow start and recovery (a few RTTs per ≈ 110 s cycle), and counts "
            "W/RTT even where the window exceeds μτ + 1 and the link is already full; the simulated "
            "throughput counts every packet on the bottleneck, retransmissions included, as the formula's "
            "window does. The order of the B values (what the paper uses it for) is kept.")
    return Outcome(verdict, measured, note, {"share_within_10pct": within, "median_rel_error": float(np.nanmedian(rel)),
                                             "median_rel_error_measured_w": float(np.nanmedian(rel_w))},
                   figs, {"table": df[["B", "throughput_pps", "formula_sim_w_pps", "throughput_model_pps"]]})


PAPER = Paper(
    slug="triple-slowstart",
    letter="D",
    title="TCP with small buffers and a large bandwidth-delay product (Barakat, Altman)",
    setup=[
        ("scenario", f"`{SCENARIO}`"),
        ("TCP", "one Tahoe source (ns-2 `Agent/TCP` semantics), receiver acks every packet, keeps out-of-order data"),
        ("path", "10 Mb/s access, 1.5 Mb/s bottleneck, round-trip propagation τ = 560 ms"),
        ("packets", "512 bytes on the wire: μ = 366 packets/s, μτ + 1 = 206"),
        ("buffer", "B = 1..64 waiting slots (ns-2 queue-limit B+1), FIFO DropTail"),
        ("runs", "quick: 1200 s per B (≈ 10 cycles), full: 6000 s; the start-up cycle is left out"),
        ("model", "`tcplab.models.slowstart` (eqs. 1–16, Sec. 7)"),
    ],
    claims=[
        Claim("D1", "Windows and conditions of the analysis",
              "W_max = B + μτ + 1; W_B = 2^(n_B−1) + B with 2^(n_B−2) < B ≤ 2^(n_B−1); conditions (9), (10), "
              "(16) for three slow starts per cycle; necessary condition B/(μτ+1) < 1/7 (1/11 lower bound).",
              "Simulated window at the congestion-avoidance loss within 3% of W_max for every B; threshold set "
              "after the first slow start's loss within 2 packets of W_B where W_th > 2W_B; every simulated "
              "triple slow start has B/(μτ+1) < 1/7.",
              check_d1, "eqs. 1–10, 16; Thms. 1, 2"),
        Claim("D2", "Throughput vs buffer: triple slow start recurs up to B ≈ 26",
              "Throughput vs B = 1..64 oscillates; triple slow start appears cyclically for B up to ≈ 26 and "
              "never above; up to ≈ 10% throughput loss (R = (α+2)/(2α+2)).",
              "Reproduced if triple slow starts occur at ≥ 2 values of B, none above 26, each with a throughput "
              "dip ≥ 2% against its neighbours, at the B values conditions (9)/(10) give; partly if all but the "
              "last hold.",
              check_d2, "Fig. 2"),
        Claim("D3", "cwnd traces for B = 19, 20, 22",
              "B = 19: two slow starts per cycle; B = 20: three; B = 22: two.",
              "The most frequent number of slow starts per cycle equals the paper's for each B.",
              check_d3, "Figs. 3–5"),
        Claim("D4", "Throughput ≈ (W_S + W_E)/(2·RTT)",
              "Throughput ≈ (W_S + W_E)/(2·RTT) against the simulation.",
              "Within 10% of the simulated throughput for at least 80% of B = 1..64.",
              check_d4, "Sec. 7"),
    ],
)
