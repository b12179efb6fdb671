"""Paper D's runs: which scenario, which overrides, and the table every claim reads.

One scenario, `scenarios/d-tahoe-satellite.toml`; the buffer B, the duration and
the warm-up are the only overrides. The path's constants (μ, τ) are read from
the engine's Plan of that file, never restated here.
"""

from __future__ import annotations

from functools import cache

import numpy as np
import pandas as pd

from tcplab.metrics import tahoe_cycles
from tcplab.models import slowstart as ss
from tcplab.reproduce import Context, plan_of

SCENARIO = "scenarios/d-tahoe-satellite.toml"
GROUP = "tahoe"  # the scenario's one TCP group
EXAMPLES = (19, 20, 22)  # Figs. 3–5


@cache
def path() -> tuple[float, float, float]:
    """(μ in packets/s, τ in s, RTT in s) of the scenario's path, from its Plan:
    μ = the bottleneck's rate over the bits of one data packet on the wire, τ the
    round-trip propagation delay, RTT = τ + 1/μ (paper D, Sec. 7: propagation
    plus one service time)."""
    p = plan_of(SCENARIO)
    mu = p.bottleneck(GROUP)["rate_bps"] / (p.first_of(GROUP)["packet_size"] * 8)
    tau = p.base_rtt_s(GROUP)
    return mu, tau, tau + 1 / mu


def buffers(ctx: Context) -> list[int]:
    return ctx.pick(list(EXAMPLES), list(range(1, 65)), list(range(1, 65)))


def duration(ctx: Context) -> str:
    # a cycle lasts ≈ 110 s; quick sees ≈ 10 cycles, full ≈ 50
    return ctx.pick("500s", "1200s", "6000s")


def cycles(tcp: pd.DataFrame, flow=0) -> pd.DataFrame:
    """The Tahoe cycles of one flow (`metrics.tahoe_cycles`) from its cwnd trace."""
    tcp = tcp[tcp["flow"] == flow]
    return tahoe_cycles(tcp["t"], tcp["cwnd"], tcp["ssthresh"])


def runs(ctx: Context, bufs, extra=(), keep=None) -> dict[int, object]:
    """The traced run (cwnd, drops and `extra`) of every buffer B in `bufs`, cached
    (side by side on the shared workers, `Context.runs`)."""
    bufs = list(bufs)
    calls = [dict(scenario=SCENARIO, overrides=[f"topology.bottleneck.buffer={b}", f"duration={duration(ctx)}",
                                               "warmup=60s"], trace=("cwnd", "drops") + tuple(extra), keep=keep)
             for b in bufs]
    return dict(zip(bufs, ctx.runs(calls)))


def _cycles_only(r) -> dict[str, pd.DataFrame]:
    """What the table over B needs of a run: its cycles (a few dozen rows instead of
    one per ack: 1.6 MB per quick run otherwise, 64 runs)."""
    return {"cycles": cycles(r.traces["tcp"], int(r.flows["id"].iloc[0]))}


def table(ctx: Context) -> pd.DataFrame:
    """Per B: simulation (throughput, slow starts per cycle, windows) beside the model."""
    if "table" in ctx.memo:
        return ctx.memo["table"]
    mu, tau, rtt = path()
    rows = []
    for b, r in runs(ctx, buffers(ctx), keep=_cycles_only).items():
        cy = r.traces["cycles"]
        mode = int(cy["slowstarts"].mode().iloc[0]) if len(cy) else 0
        thr = float(r.metrics["normalized_throughput"]) * mu
        rows.append({
            "B": b, "throughput_pps": thr, "goodput_norm": float(r.metrics["normalized_goodput"]),
            "cycles": len(cy), "slowstarts_sim": mode,
            "share_triple": float(np.mean(cy["slowstarts"] == 3)) if len(cy) else np.nan,
            "w_s_sim": float(cy["w_s"].median()) if len(cy) else np.nan,
            "w_e_sim": float(cy["w_e"].median()) if len(cy) else np.nan,
            "w_first_sim": float(cy["w_first"].median()) if len(cy) else np.nan,
            "formula_sim_w_pps": float(((cy["w_s"] + cy["w_e"]) / (2 * rtt)).mean()) if len(cy) else np.nan,
            "slowstarts_model": int(ss.slowstarts_per_cycle(b, mu, tau)),
            "regime": str(ss.slowstart_regime(b, mu, tau)),
            "w_max_model": float(ss.max_window(b, mu, tau)), "w_b_model": float(ss.overflow_window(b)),
            "n_b": int(ss.overflow_minicycle(b)), "w_s_model": float(ss.congestion_avoidance_start(b, mu, tau)),
            "throughput_model_pps": float(ss.slowstart_cycle_throughput(b, mu, tau)),
            "normalized_buffer": float(ss.normalized_buffer(b, mu, tau)),
        })
    df = pd.DataFrame(rows)
    ctx.memo["table"] = df
    return df
