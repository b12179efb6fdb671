"""Paper C's runs: the hybrid model's runs, which scenarios, which overrides.

Model claims (C1–C5) run `tcplab.fluid` (milliseconds, not cached). Simulation
claims run `scenarios/c-parallel-sack.toml` (DropTail; RED through the engine's
"paper-c" preset as overrides) and `scenarios/c-threshold-dropper.toml`; the
overrides are N, the buffer b, the queue's parameters and the duration per mode.
The round-trip time and the dropper's immunity τ are read from the scenarios'
Plans (`path`), never restated here.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import pandas as pd

from tcplab.reproduce import Context, plan_of

SCENARIO = "scenarios/c-parallel-sack.toml"
DROPPER_SCENARIO = "scenarios/c-threshold-dropper.toml"
ONE_POLICIES = ("rate-proportional", "largest-rate", "rate-independent", "beatdown")
#: paper C's Fig. 11 series: (Th, b)
DROPPER_SERIES = ((3, 100), (2, 100), (3, 30))
C11_NS = (1, 2, 3, 5, 10)
C11_BUFFER = 5


@dataclass(frozen=True)
class Path:
    """What the claims read of the scenarios' Plans."""

    rtt_s: float  # round-trip propagation delay of c-parallel-sack.toml
    rate_bps: float  # its bottleneck's rate
    dropper_tau: str  # the threshold dropper's immunity τ as c-threshold-dropper.toml has it ("120ms")


@cache
def path() -> Path:
    p = plan_of(SCENARIO)
    tau_ns = plan_of(DROPPER_SCENARIO).bottleneck()["queue"]["immunity_ns"]
    return Path(p.base_rtt_s(), p.bottleneck()["rate_bps"], f"{tau_ns / 1e6:g}ms")


# --- settings per mode ---------------------------------------------------------------------


def events(ctx: Context) -> int:
    return ctx.pick(5_000, 100_000, 1_000_000)


def model_ns(ctx: Context) -> list[int]:
    return ctx.pick([1, 3, 6], list(range(1, 11)), list(range(1, 16)))


def sim_time(ctx: Context) -> dict:
    return ctx.pick({"duration": "60s", "warmup": "20s"}, {"duration": "300s", "warmup": "100s"},
                    {"duration": "2000s", "warmup": "1000s"})


def window_s(ctx: Context) -> tuple[float, float]:
    """The measurement window (warm-up end, run end) in seconds, from the Plan."""
    p = plan_of(SCENARIO, sim_time(ctx))
    return p.warmup_s, p.end_s


def nested(flat: dict) -> dict:
    """{"a.b": v} → {"a": {"b": v}} (a sweep's [set] table)."""
    out: dict = {}
    for k, v in flat.items():
        node = out
        parts = k.split(".")
        for p in parts[:-1]:
            node = node.setdefault(p, {})
        node[parts[-1]] = v
    return out


def red_overrides(b: int) -> dict:
    """Paper C's RED (Sec. V.A) on buffer b: the engine's "paper-c" preset — thresholds
    0.6 b and 0.8 b, max p 0.1, weight 0.001, wait on (gentle, packet mode: ns-2 2.35)."""
    return {"topology.bottleneck.queue": "red", "topology.bottleneck.red": {"preset": "paper-c"},
            "topology.bottleneck.buffer": b}


# --- the hybrid model's runs ---------------------------------------------------------------


def one_policies(ctx: Context) -> pd.DataFrame:
    """C1: the mean aggregate under each ONE policy for every N."""
    cells = [(p, n) for p in ONE_POLICIES for n in model_ns(ctx)]
    runs = ctx.fluids([dict(n=n, beta=0.5, policy=p, events=events(ctx), seed=n) for p, n in cells])
    return pd.DataFrame([{"policy": p, "N": n, "fluid": r.metrics["mean_aggregate"]} for (p, n), r in zip(cells, runs)])


def biased(ctx: Context, sigmas) -> pd.DataFrame:
    """C2: N = 4, rate-independent with bias σ: the two classes' and the aggregate's means."""
    rows = []
    for s in sigmas:
        r = ctx.fluid(n=4, beta=0.5, policy="rate-independent", sigma=float(s), events=events(ctx), seed=7)
        m = r.flows["mean"].to_numpy()
        rows.append({"sigma": s, "class1": m[:2].mean(), "class2": m[2:].mean(), "aggregate": r.metrics["mean_aggregate"]})
    return pd.DataFrame(rows)


def biased_paths(ctx: Context, sigmas=(0.5, 0.125)) -> dict:
    """C2 (Fig. 4): a sample path of the rates for each σ."""
    return {s: ctx.fluid(n=4, beta=0.5, policy="rate-independent", sigma=s, events=2000, seed=3,
                         trace=40).traces["rates"] for s in sigmas}


def all_and_multtcp(ctx: Context) -> pd.DataFrame:
    """C3: ALL and MultTCP (one connection with increase Nη, decrease 1 − (1−β)/N) for every N."""
    rows = []
    for n in model_ns(ctx):
        all_ = ctx.fluid(n=n, beta=0.5, policy="all", events=events(ctx), seed=n).metrics["mean_aggregate"]
        bn = 1 - 0.5 / n
        mult = ctx.fluid(n=1, beta=bn, eta=float(n), policy="all", events=events(ctx), seed=n).metrics["mean_aggregate"]
        rows.append({"N": n, "all": all_, "all_eq6": 0.75, "multtcp": mult, "multtcp_formula": 1 - 1 / (4 * n)})
    return pd.DataFrame(rows)


def two_flow_moments(ctx: Context):
    """C4: (policy, second moment, its 95% half-width) for N = 2 under each ONE policy."""
    for p in ONE_POLICIES:
        r = ctx.fluid(n=2, beta=0.5, policy=p, events=events(ctx) * 2, seed=11)
        yield p, float(r.flows["second_moment"].mean()), float(r.flows["second_moment_ci95"].max())


def beatdown_path(ctx: Context) -> pd.DataFrame:
    """C4 (Fig. 5): a short beatdown sample path, N = 2."""
    return ctx.fluid(n=2, beta=0.5, policy="beatdown", events=40, seed=1, trace=4).traces["rates"]


def fixed_point_paths(ctx: Context, n: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """C5: traced paths under largest-rate (2000 events) and beatdown (400 events)."""
    lr = ctx.fluid(n=n, beta=0.5, policy="largest-rate", events=2000, seed=5, trace=2000).traces["rates"]
    bd = ctx.fluid(n=n, beta=0.5, policy="beatdown", events=400, seed=5, trace=400).traces["rates"]
    return lr, bd


# --- simulation: sweeps and traced runs ---------------------------------------------------------


def droptail_sweep(ctx: Context) -> pd.DataFrame:
    """C6 (and C1's context series): N × b over DropTail (memoized)."""
    if "c6" in ctx.memo:
        return ctx.memo["c6"]
    ns = ctx.pick([2, 6], [1, 2, 3, 4, 6, 8, 10, 12, 15], list(range(1, 16)))
    bs = ctx.pick([5, 100], [5, 20, 50, 100], [5, 10, 20, 50, 100, 200])
    df = ctx.sweep("c6-droptail", SCENARIO, {"flows.sack.count": ns, "topology.bottleneck.buffer": bs},
                   set=sim_time(ctx))
    df = df.rename(columns={"flows.sack.count": "N", "topology.bottleneck.buffer": "buffer"})
    keep = ["N", "buffer", "normalized_throughput", "normalized_goodput", "bottleneck_utilization", "jain_index",
            "bottleneck_drops", "tcp_timeouts"]
    df = df[[c for c in keep if c in df.columns]].sort_values(["buffer", "N"]).reset_index(drop=True)
    ctx.memo["c6"] = df
    return df


def droptail_run(ctx: Context, n: int, b: int, extra=()):
    """One traced run (cwnd, drops) of N = n flows over buffer b (`extra`: more overrides)."""
    t = sim_time(ctx)
    return ctx.run(SCENARIO, [f"flows.sack.count={n}", f"topology.bottleneck.buffer={b}",
                              f"duration={t['duration']}", f"warmup={t['warmup']}", *extra], trace=("cwnd", "drops"))


def red_sweep(ctx: Context) -> pd.DataFrame:
    """C7: N for each buffer under paper C's RED (memoized)."""
    if "c7" in ctx.memo:
        return ctx.memo["c7"]
    ns = ctx.pick([2, 6], [1, 2, 3, 4, 6, 8, 10, 15], list(range(1, 16)))
    frames = []
    for b in ctx.pick([50], [20, 50, 100], [10, 20, 50, 100, 200]):
        s = dict(sim_time(ctx))
        s.update(red_overrides(b))
        d = ctx.sweep(f"c7-red-b{b}", SCENARIO, {"flows.sack.count": ns}, set=nested(s))
        frames.append(d.rename(columns={"flows.sack.count": "N"}).assign(buffer=b, series=f"RED, b = {b}"))
    df = pd.concat(frames, ignore_index=True)
    ctx.memo["c7"] = df
    return df


def dropper_sweep(ctx: Context) -> pd.DataFrame:
    """C8: N for each (Th, b) series and both selections, the scenario's immunity τ."""
    ns = ctx.pick([2, 6], [1, 2, 3, 4, 6, 8, 10, 15], list(range(1, 16)))
    series = ctx.pick(DROPPER_SERIES[:1], DROPPER_SERIES, DROPPER_SERIES)
    frames = []
    for sel in ("rate-independent", "largest-rate"):
        for th, b in series:
            s = dict(sim_time(ctx))
            s.update({"topology.bottleneck.buffer": b,
                      "topology.bottleneck.threshold": {"threshold": th, "selection": sel}})
            d = ctx.sweep(f"c8-{sel}-th{th}-b{b}", DROPPER_SCENARIO, {"flows.sack.count": ns}, set=nested(s))
            frames.append(d.rename(columns={"flows.sack.count": "N"}).assign(
                selection=sel, threshold=th, buffer=b, series=f"Th = {th}, b = {b}"))
    return pd.concat(frames, ignore_index=True)


def dropper_run(ctx: Context, n: int):
    """C8 (Fig. 12): one traced run of the dropper scenario (Th = 3, b = 100, its τ) with N = n."""
    t = sim_time(ctx)
    return ctx.run(DROPPER_SCENARIO, [f"flows.sack.count={n}", f"duration={t['duration']}", f"warmup={t['warmup']}"],
                   trace=("cwnd", "drops"))


def parallel_runs(ctx: Context) -> list[tuple[int, object, object]]:
    """C11: (N, linux run, packet run) for each N, C11_BUFFER packets, untraced."""
    dur, warm = parallel_times(ctx)
    out = []
    for n in C11_NS:
        ov = [f"flows.sack.count={n}", f"topology.bottleneck.buffer={C11_BUFFER}", f"duration={dur}s",
              f"warmup={warm}s"]
        out.append((n, ctx.run(SCENARIO, ov, trace=(), engine="linux"), ctx.run(SCENARIO, ov, trace=(), engine="packet")))
    return out


def parallel_times(ctx: Context) -> tuple[int, int]:
    """C11's (duration, warm-up) in seconds."""
    return ctx.pick((20, 5), (60, 20), (300, 100))
