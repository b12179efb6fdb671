"""Paper B's runs: which scenario, which flow groups and overrides, the sweeps and
traced runs every claim reads.

Every run starts from `scenarios/b-dumbbell.toml` (the paper's Fig. 1): a claim
sets the rates of its links, its flow groups (protocol, count, start and stop
times, the CBR application), errors, outages and the duration. The path's
constants (packet and payload sizes, propagation RTT, buffer, minimum RTO) are
read from that file's Plan (`setup`), never restated here.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import pandas as pd

from tcplab.reproduce import Context, _repo_path, plan_of

SCENARIO = "scenarios/b-dumbbell.toml"
#: (α, β): smooth … responsive; TCP(1, 0.5) is standard TCP
PROTOCOLS = ((0.31, 0.875), (0.583, 0.75), (1.0, 0.5), (1.25, 0.25))
SMOOTH, STANDARD, RESPONSIVE = PROTOCOLS[0], PROTOCOLS[2], PROTOCOLS[3]
LINKS = ("bottleneck", "access", "sink_access")
#: bytes: the engine's (and ns-2's) ack, a bare TCP/IP header; fixed in the engine
#: (crates/engine/src/tcp/sink.rs), not a scenario key
ACK = 40


@dataclass(frozen=True)
class Setup:
    """What the models and claims read of b-dumbbell.toml's Plan."""

    packet: int  # bytes on the wire of a data packet
    payload: int  # packet_size − header_size
    prop_rtt: float  # s: 2 × (access + bottleneck + sink access delay)
    buffer: int  # waiting slots of the bottleneck = ns-2 queue-limit 50 (its default)
    min_rto: float  # s, ns-2 minrto_


@cache
def setup() -> Setup:
    p = plan_of(SCENARIO)
    tcp = p.first_of("tcp")
    return Setup(packet=int(tcp["packet_size"]), payload=int(tcp["tcp"]["payload_bytes"]), prop_rtt=p.base_rtt_s("tcp"),
                 buffer=int(p.bottleneck("tcp")["buffer_pkts"]), min_rto=tcp["tcp"]["min_rto_ns"] / 1e9)


def label(p) -> str:
    return f"TCP({p[0]:g}, {p[1]:g})"


def bps(rate: str) -> float:
    """bit/s of a rate a claim sets (`"10Mbps"`)."""
    from tcplab.units import parse_rate

    return parse_rate(rate)


# --- scenarios --------------------------------------------------------------------------------


def proto_axis(protocols=PROTOCOLS, group: str = "tcp") -> dict:
    """A sweep axis over the protocols: α and β of flow group `group`, zipped."""
    return {"zip": {f"flows.{group}.alpha": [p[0] for p in protocols],
                    f"flows.{group}.beta": [p[1] for p in protocols]}}


def rates(rate: str) -> dict:
    """A sweep's [set] table putting every link at `rate` (paper B: bw_src = bw_dst = bw_bottleneck)."""
    return {l: {"rate": rate} for l in LINKS}


def with_protocol(df: pd.DataFrame, group: str = "tcp") -> pd.DataFrame:
    """A sweep's rows with `alpha`, `beta` and `protocol` (its label) columns."""
    df = df.copy()
    df["alpha"] = df[f"flows.{group}.alpha"].astype(float)
    df["beta"] = df[f"flows.{group}.beta"].astype(float)
    df["protocol"] = [label((a, b)) for a, b in zip(df["alpha"], df["beta"])]
    return df


def base() -> dict:
    """b-dumbbell.toml as written."""
    from tcplab.scenario import read_toml

    return read_toml(_repo_path(SCENARIO))


def scenario(rate: str, groups: dict, duration: str, warmup: str = "10s", seed: int = 1) -> dict:
    """b-dumbbell.toml at `rate` on every link, with these flow groups."""
    sc = base()
    for l in LINKS:
        sc["topology"][l] = dict(sc["topology"][l], rate=rate)
    sc["flows"] = groups
    sc["duration"] = duration
    sc["warmup"] = warmup
    sc["seed"] = seed
    return sc


def tcp_group(p, count: int, start: str = "0s", stop: str | None = None, jitter: str = "1s", **extra) -> dict:
    g = {"kind": "tcp", "variant": "reno", "count": int(count), "alpha": p[0], "beta": p[1],
         "start": start, "start_jitter": jitter}
    if stop is not None:
        g["stop"] = stop
    g.update(extra)
    return g


def join_groups(p, initial: int, steps, jitter: str = "0.5s") -> dict:
    """N doubles at each step: a group of `initial` flows from 0 s, then one group per
    step as large as all flows before it."""
    groups = {"g0": tcp_group(p, initial, jitter=jitter)}
    n = initial
    for k, t in enumerate(steps, 1):
        groups[f"g{k}"] = tcp_group(p, n, start=f"{t:g}s", jitter=jitter)
        n *= 2
    return groups


def leave_groups(p, initial: int, steps, jitter: str = "0.5s") -> dict:
    """N halves at each step: half of the flows present stop at each step time."""
    groups = {}
    n = initial
    for k, t in enumerate(steps):
        groups[f"g{k}"] = tcp_group(p, n // 2, stop=f"{t:g}s", jitter=jitter)
        n -= n // 2
    groups[f"g{len(steps)}"] = tcp_group(p, n, jitter=jitter)
    return groups


def allotted(run, start: float, end: float) -> pd.DataFrame:
    """Per-second goodput (bit/s) of every TCP flow, NaN outside its (start, stop]."""
    from tcplab.metrics import allotted_goodput
    from tcplab.plan import first_data_seq
    from tcplab.traces import payload_bytes

    tcp = run.traces["tcp"]
    ids = run.flows.loc[run.flows["kind"] == "tcp", "id"].tolist()
    pay = payload_bytes(run.flows, run.scenario).loc[ids]
    first = first_data_seq(run.scenario)
    return allotted_goodput(tcp[tcp["flow"].isin(ids)], pay, 1.0, start, end, run.flows, first)


# --- B1: traced runs for the epochs --------------------------------------------------------------


def epoch_cells(ctx: Context) -> tuple[str, list, list, float]:
    """B1's (rate, protocols, N values, duration in s)."""
    ns = ctx.pick([10], [2, 5, 10, 20], [2, 5, 10, 20, 40])
    protos = ctx.pick((SMOOTH, STANDARD), PROTOCOLS, PROTOCOLS)
    dur = ctx.pick(20.0, 100.0, 100.0)
    return "10Mbps", protos, ns, dur


def epoch_call(rate: str, p, n: int, dur: float) -> dict:
    """`Context.run`'s arguments of the traced run (cwnd, queue) of N flows of protocol p."""
    sc = scenario(rate, {"tcp": tcp_group(p, n)}, f"{dur:g}s")
    return dict(scenario=sc, trace=("cwnd", "queue"))


def epoch_run(ctx: Context, rate: str, p, n: int, dur: float):
    """One traced run (cwnd, queue) of N flows of protocol p."""
    return ctx.run(**epoch_call(rate, p, n, dur))


# --- B2, B3, B8: sweeps ----------------------------------------------------------------------------


def goodput_sweeps(ctx: Context) -> pd.DataFrame:
    """B2: the four protocols × N at the low and the high rate, one row per point, with
    `rate`, `protocol`, `alpha`, `beta` and `N`."""
    frames = []
    for rate, ns, dur in (("10Mbps", ctx.pick([10, 40], list(range(10, 101, 10)), list(range(10, 101, 10))),
                           ctx.pick("15s", "100s", "100s")),
                          (ctx.pick("20Mbps", "100Mbps", "100Mbps"),
                           ctx.pick([10, 40], [10, 20, 40, 60, 80, 100], list(range(10, 101, 10))),
                           ctx.pick("15s", "60s", "100s"))):
        df = ctx.sweep(f"b2-{rate}", SCENARIO, {"protocol": proto_axis(), "flows.tcp.count": ns},
                       set={"duration": dur, "warmup": ctx.pick("5s", "10s", "10s"), "topology": rates(rate)},
                       replications=ctx.pick(1, 1, 3))
        frames.append(df.assign(rate=rate))
    df = with_protocol(pd.concat(frames, ignore_index=True))
    df["N"] = df["flows.tcp.count"].astype(int)
    return df


def error_cells(ctx: Context) -> tuple[list, str, int]:
    """B3's (PER values, rate, N)."""
    pers = ctx.pick([0.0, 0.05], [0.0, 0.005, 0.01, 0.02, 0.03, 0.05], [round(0.005 * i, 3) for i in range(11)])
    return pers, ctx.pick("10Mbps", "100Mbps", "100Mbps"), 10


def error_sweep(ctx: Context) -> pd.DataFrame:
    """B3: the four protocols × PER on the sink links, N flows, one row per point."""
    pers, rate, n = error_cells(ctx)
    df = ctx.sweep("b3-per", SCENARIO, {"protocol": proto_axis(), "topology.sink_access.errors.per": pers},
                   set={"duration": ctx.pick("15s", "100s", "100s"), "warmup": ctx.pick("5s", "10s", "10s"),
                        "flows": {"tcp": {"count": n}},
                        "topology": {"bottleneck": {"rate": rate}, "access": {"rate": rate},
                                     "sink_access": {"rate": rate, "errors": {"model": "bernoulli", "per": 0.0}}}},
                   replications=ctx.pick(1, 1, 3))
    return with_protocol(df)


def friendliness_sweep(ctx: Context, rate: str, ns, protocols=None, buffer: int | None = None) -> pd.DataFrame:
    """B8: half the flows of a protocol (group `ab`), half TCP(1, 0.5) (group `std`), for each
    N, every link's buffer `buffer` (default: the scenario's); one row per point."""
    default = setup().buffer
    buffer = default if buffer is None else buffer
    others = protocols or [p for p in PROTOCOLS if p != STANDARD]
    sc = base()
    sc["flows"] = {"ab": tcp_group(SMOOTH, 5), "std": tcp_group(STANDARD, 5)}
    halves = [n // 2 for n in ns]
    links = {l: dict(v, buffer=buffer) for l, v in rates(rate).items()}
    df = ctx.sweep(f"b8-{rate}" + ("" if buffer == default else f"-buffer{buffer}"), sc,
                   {"protocol": proto_axis(others, "ab"),
                    "N": {"zip": {"flows.ab.count": halves, "flows.std.count": halves}}},
                   set={"duration": ctx.pick("15s", "100s", "100s"), "warmup": ctx.pick("5s", "10s", "10s"),
                        "topology": links},
                   replications=ctx.pick(1, 1, 3))
    df = with_protocol(df, "ab")
    df["N"] = df["flows.ab.count"].astype(int) * 2
    return df


# --- B4: handoffs -----------------------------------------------------------------------------------


def handoff_runs(ctx: Context) -> tuple[str, float, dict]:
    """B4: one flow of each protocol on the 10 Mb/s path, outages on its sink (wireless)
    link every 5 s lasting Exp(1 s); (rate, duration, {protocol: traced run})."""
    if ctx.engine == "ns2":
        from tcplab.errors import EngineCannotRun

        raise EngineCannotRun("B4 finds the handoffs in the drops on the sink link; the ns-2 export "
                              "traces drops at the bottleneck only")
    rate = "10Mbps"
    dur = ctx.pick(30.0, 100.0, 100.0)
    outages = {"start": "5s", "every": "5s", "duration": "1s", "distribution": "exponential"}
    out = {}
    for p in PROTOCOLS:
        sc = scenario(rate, {"tcp": tcp_group(p, 1, jitter="0s")}, f"{dur:g}s", warmup="5s")
        sc["topology"]["sink_access"] = dict(sc["topology"]["sink_access"], outages=dict(outages))
        # "seq": the acks that goodput is counted from (the packet engine's cwnd table
        # carries them anyway; ns-2 traces ack_ only for seq)
        out[p] = ctx.run(sc, trace=("cwnd", "seq", "drops"))
    return rate, dur, out


# --- B5, B6: joins and departures ----------------------------------------------------------------


def steps(ctx: Context, kind: str):
    """(rate, N at the start, step times) for B5/B6 at 100 Mb/s, steps 5 s apart after
    15 s. Joins: N = 10 doubles three times, to 80 (the paper's N range is 10–100).
    Leaves: N = 80 halves until one flow is left (80, 40, 20, 10, 5, 3, 2, 1).
    Tiny: 10 Mb/s, 2 → 8 and 8 → 1."""
    tiny = ctx.mode == "tiny"
    if kind == "join":
        return ("10Mbps", 2, [15.0, 20.0]) if tiny else ("100Mbps", 10, [15.0, 20.0, 25.0])
    n = 8 if tiny else 80
    out, m = [], n
    while m > 1:  # as leave_groups: half of the flows present (rounded down) leave at each step
        out.append(15.0 + 5 * len(out))
        m -= m // 2
    return ("10Mbps" if tiny else "100Mbps"), n, out


def dynamic_runs(ctx: Context, kind: str, buffer: int | None = None):
    """B5 (`kind` "join") or B6 ("leave"): per protocol the allotted goodput table of a
    run with the schedule of `steps`, every link's buffer `buffer` (default: the
    scenario's); (rate, N at the start, step times, duration, {protocol: table})."""
    buffer = setup().buffer if buffer is None else buffer
    rate, n0, st = steps(ctx, kind)
    dur = ctx.pick(35.0, 60.0, 100.0)
    out = {}
    for p in PROTOCOLS:
        groups = join_groups(p, n0, st) if kind == "join" else leave_groups(p, n0, st)
        sc = scenario(rate, groups, f"{dur:g}s", warmup="0s")
        for l in LINKS:
            sc["topology"][l]["buffer"] = buffer
        sc["trace"] = {"series": ["cwnd"], "interval": "0.1s"}
        r = ctx.run(sc, trace=("cwnd", "seq"))
        out[p] = allotted(r, 0.0, dur)
    return rate, n0, st, dur, out


# --- B7: CBR over TCP(α,β) ----------------------------------------------------------------------------


def cbr_cells(ctx: Context) -> tuple[int, list, float]:
    """B7's (N, PER values, duration in s)."""
    n = ctx.pick(10, 100, 100)
    pers = ctx.pick([0.0, 0.2], [0.0, 0.05, 0.1, 0.2, 0.3, 0.4], [round(0.05 * i, 2) for i in range(9)])
    dur = ctx.pick(20.0, 50.0, 100.0)
    return n, pers, dur


def cbr_run(ctx: Context, p, n: int, per: float, dur: float):
    """N flows of protocol p each carrying 1 Mb/s CBR with a playback reader, over an
    N Mb/s path with Bernoulli errors `per` on the sink links."""
    return ctx.run(**cbr_call(p, n, per, dur))


def cbr_call(p, n: int, per: float, dur: float) -> dict:
    """`Context.run`'s arguments of `cbr_run`."""
    from tcplab.scenario import apply_overrides

    # ns-2's CBR over a TCP agent: every write is queued in the sender (no send-buffer bound)
    app = {"kind": "cbr", "rate": "1Mbps", "read": "125KB", "interval": "1s"}
    sc = scenario(f"{n}Mbps", {"tcp": tcp_group(p, n, app=dict(app))}, f"{dur:g}s", warmup="10s")
    sc["topology"]["sink_access"] = dict(sc["topology"]["sink_access"], errors={"model": "bernoulli", "per": per})
    sc = apply_overrides(sc, [("trace.interval", "0.1s")])
    return dict(scenario=sc, trace=("cwnd", "seq"))
