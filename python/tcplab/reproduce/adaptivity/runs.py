"""Paper A's runs: which scenarios, which overrides, and the sweeps every claim reads.

`scenarios/a-sine-background.toml` (A1, A3–A8) and `scenarios/a-two-sines.toml`
(A2); the overrides are the background's frequency, the TCP variant, the
parameter a claim varies, the duration and warm-up per mode. The buffer and the
packet sizes are read from the scenario's Plan (`setup`), the two-sine
background's amplitudes from its file: nothing here restates them.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from functools import cache

import numpy as np
import pandas as pd

from tcplab.reproduce import Context, _repo_path, plan_of
from tcplab.units import parse_freq

SCENARIO = "scenarios/a-sine-background.toml"
TWO_SINES = "scenarios/a-two-sines.toml"
METRIC = "normalized_goodput"  # TCP goodput / (C − mean background) = goodput / (C/2)
FREQ = "flows.background.rate.frequency"
VARIANT = "flows.tcp.variant"
NS2_POINTS = (0.1, 0.35, 2.0)  # Hz: below, at and above the dip
A3_CASES = (("low", 0.1), ("critical", 0.4), ("high", 5.0))


@dataclass(frozen=True)
class Setup:
    """What the claims read of a-sine-background.toml's Plan."""

    buffer: int  # packets: the bottleneck's buffer (every link has the same)
    tcp_packet: int  # bytes on the wire of a TCP data packet
    udp_packet: int  # bytes of a background packet


@cache
def setup() -> Setup:
    p = plan_of(SCENARIO)
    return Setup(int(p.bottleneck()["buffer_pkts"]), int(p.first_of("tcp")["packet_size"]),
                 int(p.first_of("background")["packet_size"]))


# --- settings per mode ---------------------------------------------------------------------


def hz(f: float) -> str:
    return f"{float(f):.3g}Hz"


def _grid(n: int) -> list[float]:
    return [float(f"{f:.3g}") for f in np.geomspace(0.05, 10, n)]


def freqs(ctx: Context, kind: str = "a1") -> list[float]:
    """Frequencies of a characteristic: A1 the finest, A4–A8 coarser, A2 per axis."""
    if kind == "a1":
        return ctx.pick([0.1, 0.5, 5.0], _grid(20), _grid(30))
    if kind == "a2":
        return ctx.pick([0.5, 5.0], _grid(8), _grid(15))
    return ctx.pick([0.1, 0.5, 5.0], _grid(12), _grid(20))


def times(ctx: Context) -> dict:
    # quick: 300 s (≈ 0.1 s of CPU per run); full: 30 min, the paper's "tens of minutes"
    return ctx.pick({"duration": "60s", "warmup": "10s"}, {"duration": "300s", "warmup": "30s"},
                    {"duration": "1800s", "warmup": "100s"})


def warmup_s(ctx: Context) -> float:
    """The end of this mode's warm-up, in seconds, as the engine reads `times`."""
    return plan_of(SCENARIO, times(ctx)).warmup_s


def reps(ctx: Context, kind: str = "a1") -> int:
    if kind == "a1":
        return ctx.pick(1, 5, 10)
    if kind == "a2":
        return ctx.pick(1, 2, 3)
    return ctx.pick(1, 3, 5)


# --- characteristics: normalized throughput against f ----------------------------------------


def summarize(df: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    g = df.groupby(by, sort=True)[METRIC]
    out = g.agg(mean="mean", std="std", lo="min", hi="max", seeds="count").reset_index()
    return out


def _with_f(df: pd.DataFrame) -> pd.DataFrame:
    df = df.copy()
    df["f"] = df[FREQ].astype(str).str.replace("Hz", "", regex=False).astype(float)
    return df


def characteristic(ctx: Context) -> pd.DataFrame:
    """A1's sweep: f × {reno, newreno} × seeds, one row per run (memoized)."""
    if "a1" not in ctx.memo:
        df = ctx.sweep("a1-frequency", SCENARIO, {FREQ: [hz(f) for f in freqs(ctx)], VARIANT: ["reno", "newreno"]},
                       set=times(ctx), replications=reps(ctx))
        ctx.memo["a1"] = _with_f(df).rename(columns={VARIANT: "variant"})
    return ctx.memo["a1"]


def param_characteristic(ctx: Context, name: str, values: list, paths) -> pd.DataFrame:
    """Reno's characteristic for each parameter value `v` (paths(v) → {key path: value},
    zipped into one axis): one row per run with `param` = v and `f`."""
    sets = [paths(v) for v in values]
    keys = list(sets[0])
    axes = {"param": {"zip": {k: [s[k] for s in sets] for k in keys}}, FREQ: [hz(f) for f in freqs(ctx, "param")]}
    df = _with_f(ctx.sweep(name, SCENARIO, axes, set=times(ctx), replications=reps(ctx, "param")))
    back = {str(s[keys[0]]): v for s, v in zip(sets, values)}
    df["param"] = df[keys[0]].astype(str).map(back)
    return df


def all_links(rate: str | None = None, delay: str | None = None, buffer: int | None = None) -> dict:
    """Overrides setting every link of the path (the paper: 'the buffers are identical')."""
    out = {}
    for link in ("bottleneck", "access", "sink_access"):
        if rate is not None:
            out[f"topology.{link}.rate"] = rate
        if delay is not None:
            out[f"topology.{link}.delay"] = delay
        if buffer is not None:
            out[f"topology.{link}.buffer"] = buffer
    return out


# --- A1's traced runs and the ns-2 cross-check -------------------------------------------------


def variant_run(ctx: Context, variant: str, f: float):
    """One traced packet-engine run of `variant` at frequency f (cwnd, sends)."""
    tm = times(ctx)
    return ctx.run(SCENARIO, [f"{FREQ}={hz(f)}", f"{VARIANT}={variant}", f"duration={tm['duration']}",
                              f"warmup={tm['warmup']}"], trace=("cwnd", "seq"), engine="packet")


def ns2_points(ctx: Context) -> pd.DataFrame | None:
    """A1 cross-checked on ns-2 2.35 at three frequencies, both variants, two seeds (the quick/full
    durations), beside the packet engine at the same points; when the packet engine produced A1 and
    `ns` is installed."""
    if ctx.engine != "packet" or ctx.mode == "tiny" or shutil.which("ns") is None:
        return None
    axes = {FREQ: [hz(f) for f in NS2_POINTS], VARIANT: ["reno", "newreno"]}
    frames = []
    try:
        for eng in ("ns2", "packet"):
            d = _with_f(ctx.sweep(f"a1-check-{eng}", SCENARIO, axes, set=times(ctx), replications=2, engine=eng))
            frames.append(d.rename(columns={VARIANT: "variant"}).assign(engine=eng))
    except Exception:  # ns-2 is an optional cross-check: a failure must not cost A1
        return None
    df = pd.concat(frames)
    return df.groupby(["engine", "variant", "f"])[METRIC].mean().unstack("engine").reset_index()


# --- A2: two sines -----------------------------------------------------------------------------


def two_sines(f1: float, f2: float) -> dict:
    """a-two-sines.toml's background with its two components at f1 and f2 (their
    amplitudes and the offset as the file states them: C1 = C2 = C/4)."""
    from tcplab.scenario import read_toml

    rate = read_toml(_repo_path(TWO_SINES))["flows"]["background"]["rate"]
    comps = [dict(c, frequency=hz(f)) for c, f in zip(rate["components"], (f1, f2))]
    return dict(rate, components=comps)


def two_sines_sweep(ctx: Context) -> pd.DataFrame:
    """A2's sweep over f1 ≤ f2 (the map is symmetric in f1, f2), with columns f1, f2."""
    fs = freqs(ctx, "a2")
    pairs = [(a, b) for i, a in enumerate(fs) for b in fs[i:]]
    df = ctx.sweep("a2-two-sines", TWO_SINES, {"flows.background.rate": [two_sines(a, b) for a, b in pairs]},
                   set=times(ctx), replications=reps(ctx, "a2"))
    comp = df["flows.background.rate"].map(lambda r: sorted(parse_freq(c["frequency"]) for c in r["components"]))
    return df.assign(f1=comp.str[0], f2=comp.str[1])


# --- A3: traced runs ---------------------------------------------------------------------------


def mechanism_runs(ctx: Context) -> dict:
    """The traced runs of A3's three cases (cwnd, seq, queue, drops, udp), packet engine."""
    tm = times(ctx)
    return {name: ctx.run(SCENARIO, [f"{FREQ}={hz(f)}", f"duration={tm['duration']}", f"warmup={tm['warmup']}"],
                          trace=("cwnd", "seq", "queue", "drops", "udp"), engine="packet") for name, f in A3_CASES}
