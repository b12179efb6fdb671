"""The export's view of the engine's Plan (`_plan`): the links, flows, sample
instants and traces the Tcl script and the parser read, every number from the
Plan and every feature ns-2 cannot run refused first (`refuse._Refusals`)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from tcplab.backends.ns2.errors import Ns2Error
from tcplab.backends.ns2.refuse import _Refusals
from tcplab.errors import UserError

#: Counters ns-2 keeps in C `int`s wrap at 2^32; checkpoints are placed so
#: that no counter can grow by more than 2^30 between two samples.
_COUNTER_MODULUS = 2**32
_COUNTER_SAFE_STEP = 2**30

#: Queue/RED variables pinned to ns-2 2.35's defaults (ns-default.tcl) that
#: the packet engine's RED assumes: not adaptive, not cautious, the arriving
#: packet is the one dropped or marked, and ns-2's default use_mark_p_ (an
#: average above maxthresh drops through the early-drop path with probability 1).
_RED_PINNED = (("adaptive_", "0"), ("cautious_", "0"), ("feng_adaptive_", "0"),
               ("drop_tail_", "true"), ("drop_front_", "false"), ("drop_rand_", "false"),
               ("ns1_compat_", "false"), ("doubleq_", "false"), ("summarystats_", "false"))


def _tcl_num(x: float) -> str:
    """A float as Tcl/ns-2 reads it back exactly (shortest round-trip repr)."""
    x = float(x)
    return str(int(x)) if x.is_integer() and abs(x) < 1e15 else repr(x)


@dataclass(frozen=True)
class _Link:
    """One duplex link of the Plan (its forward direction's numbers)."""
    name: str
    #: The engine's id of the forward direction (`_errors_seed`'s stream).
    id: int
    rate_bps: float
    delay_s: float
    buffer_pkts: int
    queue: str
    #: Bernoulli packet error rate on the forward direction (0 = none).
    per: float = 0.0
    #: Gilbert-Elliott (p_gb, p_bg, per_good, per_bad) on the forward direction.
    ge: tuple | None = None
    #: Arrival numbers lost on the forward direction (errors model "list").
    drops: tuple | None = None
    #: [(start_ns, end_ns)] when the link is down (the Plan's schedule).
    outages: tuple = ()
    #: Queue/RED variables (name, value) when queue == "red".
    red: tuple[tuple[str, str], ...] = ()
    #: An asymmetric link's reverse direction (its own rate, delay, buffer and
    #: so RED's parameters); None when both directions are the same.
    reverse: "_Link | None" = None

    @property
    def ns2_limit(self) -> int:
        """ns-2 queue-limit for B waiting slots: B + 1 for DropTail, which drops
        when limit - 1 packets wait (docs/ns2.md); B for RED, which drops an
        arrival that finds limit packets waiting (red.cc: qlen >= qlim)."""
        return self.buffer_pkts if self.queue == "red" else self.buffer_pkts + 1

    @property
    def ns2_queue(self) -> str:
        return "RED" if self.queue == "red" else "DropTail"


def _red_vars(q: dict) -> tuple[tuple[str, str], ...]:
    """Queue/RED variables for the Plan's RED parameters."""
    bytes_ = "true" if q["mode"] == "byte" else "false"
    flag = lambda v: "true" if v else "false"  # noqa: E731
    return (
        ("bytes_", bytes_),
        ("queue_in_bytes_", bytes_),
        # thresholds > 0 (the engine checks): ns-2 reads 0 as "configure automatically"
        ("thresh_", _tcl_num(q["min_thresh"])),
        ("maxthresh_", _tcl_num(q["max_thresh"])),
        ("q_weight_", _tcl_num(q["weight"])),
        ("linterm_", _tcl_num(1.0 / q["max_p"])),
        ("wait_", flag(q["wait"])),
        ("gentle_", flag(q["gentle"])),
        ("mean_pktsize_", str(int(q["mean_packet_size"]))),
        # red.ecn marks an ECN-capable packet at every early drop of it (RFC 3168
        # §5): ns-2's setbit_, with mark_p_ above any probability (with its
        # default 0.1 ns-2 drops instead once the probability reaches 0.1)
        ("setbit_", flag(q["ecn"])),
        ("use_mark_p_", "true"),
        ("mark_p_", "2" if q["ecn"] else "0.1"),
    ) + _RED_PINNED


def _link(l: dict, end_ns: int) -> _Link:
    e = l["errors"] or {}
    model = e.get("model")
    return _Link(
        name=l["name"], id=int(l["id"]),
        rate_bps=float(l["rate_bps"]), delay_s=l["delay_ns"] / 1e9, buffer_pkts=int(l["buffer_pkts"]),
        queue=l["queue"]["kind"],
        per=float(e.get("per") or 0.0) if model == "bernoulli" else 0.0,
        ge=tuple(float(e.get(k) or 0.0) for k in ("p_gb", "p_bg", "per_good", "per_bad"))
        if model == "gilbert-elliott" else None,
        drops=tuple(int(k) for k in e.get("packets") or ()) if model == "list" else None,
        # the Plan's list ends with the first outage at or after the end (the
        # packet engine needs it for packets in flight); ns-2 needs those before
        outages=tuple((int(a), int(b)) for a, b in l["outages"] if a < end_ns),
        red=_red_vars(l["queue"]) if l["queue"]["kind"] == "red" else (),
    )


@dataclass(frozen=True)
class _Flow:
    id: int
    group: str
    kind: str  # "tcp" | "udp"
    start_s: float
    stop_s: float
    #: Bytes of a data packet on the wire.
    packet_size: int
    #: The Plan's TCP parameters (tcp flows), application and UDP source.
    tcp: dict | None
    app: dict | None
    udp: dict | None
    access: _Link | None  # None on a path (no access links)
    sink_access: _Link | None
    #: Parking lot: first and last chain link crossed (indices into `chain`).
    hops: tuple[int, int] = (0, 0)
    #: Data travel the topology backwards: the agent sits at the sink side.
    reverse: bool = False

    @property
    def variant(self) -> str:
        return self.tcp["variant"]

    @property
    def trace_driven(self) -> bool:
        """A UDP source whose departures ns-2 replays from the packet engine's
        schedule: every shape but a constant, and any source with send jitter
        (drawn from the engine's streams, so both engines send the same packets)."""
        return self.kind == "udp" and (self.udp["shape"]["kind"] != "constant"
                                       or self.udp["send_jitter_ns"] > 0)


@dataclass(frozen=True)
class _Plan:
    #: The resolved scenario (the engine's departure schedules are asked with it).
    scenario: dict
    name: str
    seed: int
    duration_s: float
    warmup_s: float
    #: The dumbbell's link R1 -> R2 (role "bottleneck": where the drop and
    #: queue traces hang); on a path or parking lot, the slowest link of the
    #: chain (the first of equals; those traces are refused there).
    bottleneck: _Link
    flows: tuple[_Flow, ...]
    series: tuple[str, ...]
    interval_s: float
    sample_times: tuple[float, ...]  # counter samples after t = 0, ending at duration
    #: "dumbbell", "path" or "parking-lot".
    topology: str = "dumbbell"
    #: Path and parking lot: the chain of links, router i to router i + 1.
    chain: tuple[_Link, ...] = ()
    #: The engine's rate that throughput is normalized by.
    reference_bps: float = 0.0
    #: RED's ns-2 generator seed (`red.seed`), if a queue asks for one.
    red_seed: int | None = None
    #: The most links any flow's data crosses (the Plan's longest forward route).
    longest_route: int = 0

    @property
    def monitored(self) -> tuple[tuple[str, _Link, str, str], ...]:
        """(name, link, from node, to node) of every link whose counters are
        results: the dumbbell's bottleneck, or every link of the chain."""
        if self.topology == "dumbbell":
            return (("bottleneck", self.bottleneck, "$r1", "$r2"),)
        return tuple((l.name, l, f"$r({k})", f"$r({k + 1})") for k, l in enumerate(self.chain))


def _engine_plan(scenario: dict) -> dict:
    """The engine's Plan of `scenario` (its errors as Ns2Error: exit 2, key named)."""
    from tcplab.plan import Plan

    try:
        return Plan(scenario).engine
    except UserError as exc:
        raise Ns2Error(str(exc).removeprefix("scenario: ")) from None


def _plan(scenario: dict) -> _Plan:
    """The export's view of the engine's Plan: every number from it, every
    feature ns-2 cannot run refused (`_Refusals`)."""
    p = _engine_plan(scenario)
    _Refusals(p).check()
    if not p["flows"]:
        raise Ns2Error("flows: every group has count = 0; nothing to simulate")
    # the forward direction of every duplex link, by its role (and hop, or flow)
    forward = [l for l in p["links"] if l["direction"] == "forward"]
    reverse = {l["duplex"]: l for l in p["links"] if l["direction"] == "reverse"}

    def _duplex(l: dict) -> _Link:
        """A duplex link's view; an asymmetric one carries its reverse direction."""
        fwd = _link(l, p["end_ns"])
        back = _link({**reverse[l["duplex"]], "errors": None}, p["end_ns"])
        if (back.rate_bps, back.delay_s, back.buffer_pkts, back.red) != (
                fwd.rate_bps, fwd.delay_s, fwd.buffer_pkts, fwd.red):
            return dataclasses.replace(fwd, reverse=back)
        return fwd

    topo = p["topology"]
    chain = tuple(_duplex(l) for l in sorted((l for l in forward if l["role"] == "chain"),
                                             key=lambda l: l["hop"]))
    own = {(l["role"], l["flow"]): _duplex(l) for l in forward if l["flow"] is not None}
    bottleneck = _duplex(next(l for l in forward if l["role"] == "bottleneck")) \
        if topo == "dumbbell" else min(chain, key=lambda l: l.rate_bps)  # the first of equals
    links_by_id = {l["id"]: l for l in p["links"]}
    flows = []
    for f in p["flows"]:
        i = f["id"]
        # the chain links of the flow's data route, and whether it walks them backwards
        data = [links_by_id[k] for k in f["route"]["forward"]]
        hops = [l["hop"] for l in data if l["role"] == "chain"]
        reverse = any(l["direction"] == "reverse" for l in data)
        flows.append(_Flow(
            i, f["group"], f["kind"], f["start_ns"] / 1e9, f["stop_ns"] / 1e9, int(f["packet_size"]),
            f["tcp"], f["app"], f["udp"], own.get(("access", i)), own.get(("sink_access", i)),
            (min(hops), max(hops)) if hops else (0, 0), reverse))
    duration, warmup = p["end_ns"] / 1e9, p["warmup_ns"] / 1e9
    # No byte counter grows faster than the fastest monitored link.
    monitored = [bottleneck] if topo == "dumbbell" else chain
    step = _COUNTER_SAFE_STEP * 8 / max(l.rate_bps for l in monitored)
    times = {duration}
    if warmup > 0:
        times.add(warmup)
    k = 1
    while k * step < duration:
        times.add(k * step)
        k += 1
    return _Plan(scenario, str(scenario.get("name", "scenario")), int(p["seed"]), duration, warmup,
                 bottleneck, tuple(flows), tuple(p["trace"]["series"]), p["trace"]["interval_ns"] / 1e9,
                 tuple(sorted(times)), topo, chain, float(p["reference_bps"]), _red_seed(p),
                 max((len(f["route"]["forward"]) for f in p["flows"]), default=0))


def _red_seed(p: dict) -> int | None:
    """The `red.seed` of the Plan's RED queues (the refusals allow at most one)."""
    seeds = [l["queue"].get("seed") for l in p["links"] if l["queue"]["kind"] == "red"]
    return next((k for k in seeds if k is not None), None)


def _read_times(plan: _Plan, f: _Flow) -> list[float]:
    """When the playback reader of app flow `f` reads: every interval after
    the flow's start, up to its stop (as the packet engine)."""
    start_ns, step_ns = round(f.start_s * 1e9), int(f.app["interval_ns"])
    stop_ns = round(min(f.stop_s, plan.duration_s) * 1e9)
    n = (stop_ns - start_ns) // step_ns if stop_ns > start_ns else 0
    return [(start_ns + k * step_ns) / 1e9 for k in range(1, n + 1)]


def _queue_traced_per_packet(plan: _Plan) -> bool:
    return "queue" in plan.series and plan.interval_s <= 0
