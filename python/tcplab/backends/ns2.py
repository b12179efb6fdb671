"""The ns-2 oracle: run a tcplab scenario in ns-2 2.35 and read back the result.

`export_tcl(scenario)` translates a *resolved* scenario (every default filled
in) into one self-contained ns-2 Tcl script; `run_ns2(scenario)` writes it into
a work directory, runs Debian's `ns` there and parses what the script wrote
into the raw result dict every tcplab engine returns.

The script does no per-packet work in Tcl. Counters are read from ns-2's own
C++ agents and monitors (TCP sender counters, the sink's in-order byte count,
LossMonitor, QueueMonitor) by one Tcl procedure at the end of warm-up, at the
end of the run, and at a few checkpoints in between when a 32-bit ns-2
counter could otherwise wrap. Traces are written by ns-2's own tracing
(`$agent trace cwnd_`, `$ns trace-queue`) when `trace.interval` is 0, or by a
sampler that runs once per interval otherwise, and are parsed with pandas.

Translation (see docs/ns2.md for why each matters):

* a TCP `packet_size` counts the 40-byte TCP/IP header: ns-2 `packetSize_` is
  `packet_size - 40`; a UDP `packet_size` is the whole packet;
* a `buffer` of B waiting packets is ns-2 `queue-limit B + 1` (ns-2 DropTail
  drops an arrival when the queue already holds limit - 1 waiting packets),
  and `queue-limit B` on a RED link (RED drops an arrival that finds limit
  packets waiting); RED's parameters are set on Queue/RED just before the link
  is created, with ns-2 defaults the engine assumes pinned (_RED_PINNED); the
  threshold dropper has no ns-2 counterpart and is refused;
* every flow has its own access link (source -> R1) and sink access link
  (R2 -> sink), duplex, same parameters both ways; the bottleneck is R1 -> R2;
* ns-2 node ids are fixed by construction: R1 = 0, R2 = 1, the source of flow
  i is 2 + i and its sink 2 + N + i (N flows in all);
* every flow's start and stop time (start jitter, join and leave schedules)
  and every link's outages come from the packet engine (`flow_times`,
  `link_outages`) and are written into the script as literal times, so both
  engines start, stop and cut links at the same instants and the script is
  deterministic and readable on its own; ns-2's default RNG is seeded with
  `seed` (it draws each TCP agent's clock phase, `boot_time_`, and the
  state changes of Gilbert-Elliott error models);
* an outage is `$ns rtmodel-at t down` / `up` on the duplex link: both
  directions go down, arrivals are dropped, and the queue and everything in
  transit are flushed (dynamic links) — the packet engine's semantics.
"""

from __future__ import annotations

import functools
import math
import os
import shutil
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from tcplab import progress
from tcplab.errors import EngineCannotRun, UserError

__all__ = [
    "Ns2Error",
    "run_ns2",
    "export_tcl",
]

#: Environment variable naming the `ns` binary to use instead of the one on PATH.
NS_BINARY_ENV = "TCPLAB_NS2"

#: Default wall-time limit for one ns-2 run, seconds.
DEFAULT_TIMEOUT_S = 3600.0

#: Counters ns-2 keeps in C `int`s wrap at 2^32; checkpoints are placed so
#: that no counter can grow by more than 2^30 between two samples.
_COUNTER_MODULUS = 2**32
_COUNTER_SAFE_STEP = 2**30

TCP_CLASSES = {  # variant -> (sender class, sink class, delayed-ack sink class)
    "tahoe": ("Agent/TCP", "Agent/TCPSink", "Agent/TCPSink/DelAck"),
    "reno": ("Agent/TCP/Reno", "Agent/TCPSink", "Agent/TCPSink/DelAck"),
    "newreno": ("Agent/TCP/Newreno", "Agent/TCPSink", "Agent/TCPSink/DelAck"),
    "sack": ("Agent/TCP/Sack1", "Agent/TCPSink/Sack1", "Agent/TCPSink/Sack1/DelAck"),
}

TRACE_SERIES = ("cwnd", "inflight", "seq", "queue", "drops", "rtt")

#: Queue/RED variables pinned to ns-2 2.35's defaults (ns-default.tcl) that
#: the packet engine's RED assumes: not adaptive, not cautious, the arriving
#: packet is the one dropped or marked, and ns-2's default use_mark_p_ (an
#: average above maxthresh drops through the early-drop path with probability 1).
_RED_PINNED = (("adaptive_", "0"), ("cautious_", "0"), ("feng_adaptive_", "0"),
               ("drop_tail_", "true"), ("drop_front_", "false"), ("drop_rand_", "false"),
               ("ns1_compat_", "false"), ("doubleq_", "false"), ("summarystats_", "false"))

#: Tracefile records hold the gap to the next packet in whole microseconds
#: (u_int32); the record after the last packet waits this long (~71 min).
_TRACE_GAP_MAX_US = 2**32 - 1

#: ns-2's ListErrorModel counts arrivals in a C int.
_LIST_ERRORS_MAX = 2**31 - 1

#: Every field of the engine's Plan the export reads, per part of the Plan. A
#: field outside these sets (a feature added to the engine and not yet to the
#: export) is refused by name rather than ignored: an oracle that silently
#: dropped part of a scenario would lie.
_PLAN_FIELDS = {
    "plan": {"seed", "topology", "end_ns", "warmup_ns", "reference_bps", "links", "flows", "trace"},
    "link": {"id", "name", "direction", "duplex", "rate_bps", "delay_ns", "buffer_pkts", "queue",
             "errors", "outages"},
    "flow": {"id", "group", "kind", "start_ns", "stop_ns", "route", "packet_size", "tcp", "app", "udp"},
    "tcp": {"cc", "profile", "variant", "alpha", "beta", "window", "max_cwnd", "initial_cwnd",
            "initial_ssthresh", "initial_rto_ns", "min_rto_ns", "max_rto_ns", "tick_ns", "tick_seed",
            "dupack_threshold", "limited_transmit", "bug_fix", "syn", "header_size", "packet_size",
            "delayed_ack", "delack_interval_ns", "syn_immediate_ack", "payload_bytes", "boot_time_s",
            "ecn"},
    "app": {"rate_bps", "send_buffer_pkts", "when_full", "read_bytes", "interval_ns"},
    "udp": {"shape", "mean_bps", "send_jitter_ns"},
    "trace": {"series", "interval_ns"},
}


class Ns2Error(UserError):
    """ns-2 is missing or failed, or the scenario uses something the export
    cannot express in ns-2."""


class Ns2CannotRun(Ns2Error, EngineCannotRun):
    """A scenario the packet engine runs but ns-2 has no counterpart for (or the
    export does not write): not the user's mistake, a limit of this engine."""


# --------------------------------------------------------------------- refusals
#
# What the engine's Plan can say and ns-2 2.35 cannot run, in one list. Each
# entry: (where in the Plan, a test on that part, the refusal). The key a
# refusal names is the scenario key that asked for the feature; a refusal is
# Ns2CannotRun (a limit of this engine, not the user's mistake).

def _refuse_link_queue(link: dict) -> str | None:
    kind = link["queue"]["kind"]
    if kind == "threshold":
        return ("queue: the threshold dropper (paper C) has no ns-2 counterpart; "
                "run it with the packet engine (engine = \"packet\")")
    if kind not in ("droptail", "red"):
        return f"queue: {kind!r} is not exported to ns-2 (it knows \"droptail\" and \"red\")"
    return None


def _refuse_zero_buffer(link: dict) -> str | None:
    if link["buffer_pkts"] < 1:
        return ("buffer: a zero buffer has no ns-2 equivalent (ns-2 DropTail with queue-limit 1 "
                "drops every arrival); give at least 1 waiting packet")
    return None


def _refuse_errors(link: dict) -> str | None:
    e = link["errors"]
    if e is None or e["model"] in ("bernoulli", "gilbert-elliott"):
        return None
    if e["model"] == "list":
        if any(k >= _LIST_ERRORS_MAX for k in e.get("packets", ())):
            return ("errors.packets: arrival numbers must be below 2^31 - 1 for ns-2 "
                    "(its ListErrorModel counts in an int)")
        return None
    return (f"errors.model: {e['model']!r} is not exported to ns-2 (it knows \"bernoulli\", as "
            "ErrorModel with unit pkt, \"gilbert-elliott\", as ErrorModel/MultiState with packet "
            "transitions, and \"list\", as ErrorModel/List with unit pkt)")


def _refuse_outages(link: dict, monitored: bool, end_ns: int) -> str | None:
    if not link["outages"] or link["outages"][0][0] >= end_ns:
        return None
    if monitored:
        return ("outages: not exported to ns-2 (taking a link down resets its queue monitor, "
                "whose counters are the link's results); outages on access and sink_access "
                "links are exported")
    if link["outages"][0][0] == 0:
        return ("outages: an outage at time 0 is not exported to ns-2 (rtmodel cannot schedule "
                "an event at time 0); start outages later")
    return None


def _refuse_tcp(tcp: dict) -> str | None:
    if tcp["cc"] != "reno":
        return (f"cc: ns-2 2.35's one-way agents run Reno-family congestion control only, "
                f"not {tcp['cc']!r}")
    if tcp["profile"] == "linux":
        return ("profile: \"linux\" grows the window per acked segment (RFC 3465) and reduces it "
                "as Linux does, which ns-2's agents do not; run it on the packet or linux engine")
    if tcp["variant"] not in TCP_CLASSES:
        return f"variant: {tcp['variant']!r} has no ns-2 agent here (it knows {', '.join(TCP_CLASSES)})"
    return None


def _refuse_app(app: dict) -> str | None:
    if app["when_full"] == "drop":
        return ("app.when_full: \"drop\" is not exported to ns-2 (its TCP agent has no send buffer "
                "that could refuse a write); \"block\" is, as window_ = min(window, send_buffer)")
    return None


def _red_seed(p: dict) -> int | None:
    """The `red.seed` of the Plan's RED queues (the refusals allow at most one)."""
    seeds = [l["queue"].get("seed") for l in p["links"] if l["queue"]["kind"] == "red"]
    return next((k for k in seeds if k is not None), None)


def _refuse_red_seed(p: dict) -> str | None:
    seeded = {l["name"] for l in p["links"]
              if l["queue"]["kind"] == "red" and l["queue"].get("seed") is not None}
    if not seeded:
        return None
    if len(seeded) > 1:
        return ("red.seed: ns-2 has one default generator, which RED queues on several "
                "links would share in event order; seed RED on one link only")
    if any(f["udp"] is not None and (f["udp"]["shape"]["kind"] != "constant" or f["udp"]["send_jitter_ns"] > 0)
           for f in p["flows"]):
        return ("red.seed: trace-driven UDP sources reseed ns-2's default generator as "
                "they start, which RED draws from; drop red.seed or use constant-rate UDP")
    return None


def _refuse_trace(trace: dict, topology: str) -> str | None:
    for s in ("queue", "drops"):
        if topology != "dumbbell" and s in trace["series"]:
            return (f"series: {s!r} is exported to ns-2 for a dumbbell's bottleneck only, "
                    f"not on a {topology} (run it on the packet engine)")
    return None


class _Refusals:
    """Apply the list above to an engine Plan; the first refusal is raised."""

    def __init__(self, p: dict, groups: dict):
        self.p, self.groups = p, groups

    def link_key(self, link: dict) -> str:
        """The scenario key that configured link `link` (a name of the Plan)."""
        name = link["name"]
        if name == "bottleneck":
            return "topology.bottleneck"
        if name.startswith("link["):
            return f"topology.{name.replace('link[', 'links[')}"
        side, fid = name.rstrip("]").split("[")
        group = self.p["flows"][int(fid)]["group"]
        override = (self.groups.get(group) or {}).get(side)
        return f"flows.{group}.{side}" if override is not None else f"topology.{side}"

    def check(self) -> None:
        p = self.p
        _known(p, "plan", "")
        monitored = {l["id"] for l in _monitored_links(p)}
        for link in p["links"]:
            if link["direction"] != "forward":
                continue
            _known(link, "link", self.link_key(link))
            for why in (_refuse_link_queue(link), _refuse_zero_buffer(link),
                        _refuse_errors(link),
                        _refuse_outages(link, link["id"] in monitored, p["end_ns"])):
                if why:
                    raise Ns2CannotRun(f"{self.link_key(link)}.{why}")
        for f in p["flows"]:
            key = f"flows.{f['group']}"
            _known(f, "flow", key)
            for part in ("tcp", "app", "udp"):
                if f[part] is not None:
                    _known(f[part], part, key)
            why = (f["tcp"] and _refuse_tcp(f["tcp"])) or (f["app"] and _refuse_app(f["app"]))
            if why:
                raise Ns2CannotRun(f"{key}.{why}")
        _known(p["trace"], "trace", "trace")
        why = _refuse_trace(p["trace"], p["topology"])
        if why:
            raise Ns2CannotRun(f"trace.{why}")
        why = _refuse_red_seed(p)
        if why:
            seeded = next(l for l in p["links"] if l["queue"].get("seed") is not None)
            raise Ns2CannotRun(f"{self.link_key(seeded)}.{why}")


def _known(part: dict, what: str, key: str) -> None:
    unknown = sorted(set(part) - _PLAN_FIELDS[what])
    if unknown:
        where = f"{key}." if key else ""
        raise Ns2CannotRun(f"{where}{unknown[0].removesuffix('_ns')}: not supported by the ns-2 export "
                           f"(the engine plans it; the export translates {', '.join(sorted(_PLAN_FIELDS[what]))})")


def _monitored_links(p: dict) -> list[dict]:
    """Forward directions of the links whose counters are results: the dumbbell's
    bottleneck, or every link of a path or parking lot's chain."""
    want = (lambda n: n == "bottleneck") if p["topology"] == "dumbbell" else \
        (lambda n: n.startswith("link["))
    return [l for l in p["links"] if l["direction"] == "forward" and want(l["name"])]


def _tcl_num(x: float) -> str:
    """A float as Tcl/ns-2 reads it back exactly (shortest round-trip repr)."""
    x = float(x)
    return str(int(x)) if x.is_integer() and abs(x) < 1e15 else repr(x)


# ----------------------------------------------------------------- scenario model

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
    #: The dumbbell's bottleneck; on a path or parking lot, its slowest link
    #: (the one the drop and queue traces would watch).
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
    _Refusals(p, scenario.get("flows") or {}).check()
    if not p["flows"]:
        raise Ns2Error("flows: every group has count = 0; nothing to simulate")
    forward = {l["name"]: _link(l, p["end_ns"]) for l in p["links"] if l["direction"] == "forward"}
    topo = p["topology"]
    chain = tuple(forward[f"link[{k}]"] for k in range(sum(n.startswith("link[") for n in forward)))
    bottleneck = forward["bottleneck"] if topo == "dumbbell" else \
        min(chain, key=lambda l: l.rate_bps)  # the slowest link (the first of equals)
    links_by_id = {l["id"]: l for l in p["links"]}
    flows = []
    for f in p["flows"]:
        i = f["id"]
        # the chain links of the flow's data route, and whether it walks them backwards
        data = [links_by_id[k] for k in f["route"]["forward"]]
        hops = [int(l["name"][5:-1]) for l in data if l["name"].startswith("link[")]
        reverse = any(l["direction"] == "reverse" for l in data)
        flows.append(_Flow(
            i, f["group"], f["kind"], f["start_ns"] / 1e9, f["stop_ns"] / 1e9, int(f["packet_size"]),
            f["tcp"], f["app"], f["udp"], forward.get(f"access[{i}]"), forward.get(f"sink_access[{i}]"),
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


# --------------------------------------------------------------------- Tcl export

COUNTERS_FILE = "tcplab-counters.txt"
TCPVARS_FILE = "tcplab-tcpvars.tr"
TCPMAP_FILE = "tcplab-tcpmap.tr"  # node address, port, flow id of every traced TCP agent
QUEUE_FILE = "tcplab-queue.tr"
DROPS_FILE = "tcplab-drops.tr"
SAMPLES_FILE = "tcplab-tcpsamples.txt"
QSAMPLES_FILE = "tcplab-queuesamples.txt"

_TCL_PROCS = r"""
# One duplex link, the same rate, delay, queue type and limit both ways.
# Queue/RED takes its parameters from the class defaults as each queue is
# created, so a RED link sets them just before (see _link_tcl).
proc tcplab_link {a b rate delay limit {qtype DropTail}} {
    global ns
    $ns duplex-link $a $b $rate $delay $qtype
    $ns queue-limit $a $b $limit
    $ns queue-limit $b $a $limit
}

# A trace-driven UDP source (Application/Traffic/Trace). Its Tracefile starts
# at record int(u * n + 0.5), u the default RNG's next draw (traffictrace.cc);
# the source is started right after `$defaultRNG seed s`, so u is the first
# draw of seed s. Write the records (gap_us size ...) rotated so that record
# is the schedule's first; return s (the next seed whose draw is < n).
proc tcplab_trace_file {i fname seed recs} {
    set n [expr {[llength $recs] / 2}]
    set s $seed
    while 1 {
        set r [new RNG]
        $r seed $s
        set k [expr {int($n * [$r uniform 0 1] + 0.5)}]
        delete $r
        if {$k < $n} break
        incr s
    }
    set cut [expr {2 * ($n - $k)}]
    set fh [open $fname w]
    fconfigure $fh -translation binary
    puts -nonewline $fh [binary format I* [concat [lrange $recs $cut end] [lrange $recs 0 [expr {$cut - 1}]]]]
    close $fh
    return $s
}

# A per-packet ErrorModel (unit pkt) losing with probability `per`, drawing
# from its own RNG.
proc tcplab_em {per seed} {
    set rng [new RNG]
    $rng seed $seed
    set rv [new RandomVariable/Uniform]
    $rv use-rng $rng
    set em [new ErrorModel]
    $em unit pkt
    $em set rate_ $per
    $em ranvar $rv
    return $em
}

# Bernoulli packet errors on the direction a -> b, put BEFORE the queue by
# `$ns lossmodel` (errormodule), as the packet engine decides a loss when the
# packet arrives at the link.
proc tcplab_errors {a b per seed} {
    global ns
    $ns lossmodel [tcplab_em $per $seed] $a $b
}

# Gilbert-Elliott errors on a -> b: ErrorModel/MultiState with packet
# transitions steps its two-state chain on every packet (good -> bad with
# p_gb, bad -> good with p_bg; draws from the default RNG), then the new
# state's ErrorModel decides the loss — the packet engine's order. Starts good.
proc tcplab_ge_errors {a b p_gb p_bg per_good per_bad seed} {
    global ns
    set good [tcplab_em $per_good $seed]
    set bad [tcplab_em $per_bad [expr {$seed + 1}]]
    set trans [list [list [expr {1.0 - $p_gb}] $p_gb] [list $p_bg [expr {1.0 - $p_bg}]]]
    set em [new ErrorModel/MultiState [list $good $bad] {0 0} $trans pkt pkt 2 $good]
    $ns lossmodel $em $a $b
}

# Deterministic errors on a -> b: ErrorModel/List with unit pkt loses the
# packets whose arrival number at the error model (from 0) is in `drops`.
proc tcplab_list_errors {a b drops} {
    global ns
    set em [new ErrorModel/List]
    $em unit pkt
    $em droplist $drops
    $ns lossmodel $em $a $b
}

proc tcplab_config {obj params} {
    foreach {key value} $params { $obj set $key $value }
}

# Counter snapshot: read ns-2's C++ counters (no per-packet Tcl anywhere).
#   F tag id ndatapack_ nrexmitpack_ nrexmit_ ncwndcuts1_ sink-bytes_ ack_
#   U tag id npkts_ bytes_ nlost_
#   L tag name pdepartures_ bdepartures_ pdrops_ bdrops_ parrivals_
proc tcplab_sample {tag} {
    global ns tcplab_out tcp_ids udp_ids agent sink qmon
    puts $tcplab_out "T $tag [$ns now]"
    foreach i $tcp_ids {
        set a $agent($i)
        puts $tcplab_out "F $tag $i [$a set ndatapack_] [$a set nrexmitpack_] [$a set nrexmit_] [$a set ncwndcuts1_] [$sink($i) set bytes_] [$a set ack_]"
    }
    foreach i $udp_ids {
        set s $sink($i)
        puts $tcplab_out "U $tag $i [$s set npkts_] [$s set bytes_] [$s set nlost_]"
    }
    foreach name [lsort [array names qmon]] {
        set q $qmon($name)
        puts $tcplab_out "L $tag $name [$q set pdepartures_] [$q set bdepartures_] [$q set pdrops_] [$q set bdrops_] [$q set parrivals_]"
    }
}
"""


def export_tcl(scenario: dict) -> str:
    """The ns-2 2.35 Tcl script for a resolved scenario. It writes its results
    into the current directory (tcplab-counters.txt and, when traces are asked
    for, tcplab-*.tr / tcplab-samples.txt)."""
    return _tcl(_plan(scenario))


#: ns-2's default IP TTL (ns-default.tcl `Agent set ttl_ 32`): a packet crosses at most
#: 31 links.
NS2_DEFAULT_TTL = 32


def _tcl(plan: _Plan, progress_steps: int = 0) -> str:
    """The script; with `progress_steps` it also prints `tcplab-progress <now>` on
    stdout that many times over the run (events of their own: ns-2 orders events
    by time, then by insertion, so the simulation itself is unchanged)."""
    n = len(plan.flows)
    tcp_ids = [f.id for f in plan.flows if f.kind == "tcp"]
    udp_ids = [f.id for f in plan.flows if f.kind == "udp"]
    bn = plan.bottleneck
    out: list[str] = []
    w = out.append
    w(f"# tcplab scenario {plan.name!r} exported for ns-2 2.35 (Debian package ns2).")
    w(f"# Run: ns <this file>   (writes {COUNTERS_FILE} into the current directory)")
    w("# Buffers: tcplab counts waiting packets B; ns-2 DropTail queue-limit is B + 1, RED's is B.")
    w("# TCP packetSize_ is the payload: packet_size - 40 bytes of TCP/IP header.")
    if plan.topology == "dumbbell":
        w(f"# Node ids: R1 = 0, R2 = 1, source of flow i = 2 + i, sink of flow i = {2 + n} + i.")
    w("")
    w("set ns [new Simulator]")
    longest = plan.longest_route
    if longest >= NS2_DEFAULT_TTL:
        # ns-2's packets die after ttl_ hops (ns-default.tcl: Agent set ttl_ 32): a route
        # of 32 links or more would deliver nothing
        w(f"Agent set ttl_ {longest + 1}")
    w("global defaultRNG")
    if plan.seed > 0:
        w("# ns-2's default RNG draws each TCP agent's clock phase (boot_time_).")
        w(f"$defaultRNG seed {_ns2_seed(plan.seed)}")
    w(f"set tcplab_out [open {COUNTERS_FILE} w]")
    w(f"set tcp_ids {{{' '.join(map(str, tcp_ids))}}}")
    w(f"set udp_ids {{{' '.join(map(str, udp_ids))}}}")
    w(_TCL_PROCS)
    out.extend(_topology_tcl(plan))

    # Per-group parameter lists, set on each agent before `$ns run` resets it.
    for label in sorted({f.group for f in plan.flows}):
        g = next(f for f in plan.flows if f.group == label)
        if g.kind == "tcp":
            tcp = g.tcp
            w(f"# group {label!r}: {tcp['variant']} TCP")
            w(f"set tcp_params({label}) {{{' '.join(f'{k} {v}' for k, v in _tcp_params(tcp))}}}")
            # An ack is a bare TCP/IP header (Agent/TCPSink packetSize_ 40 = the default header).
            sink = [f"packetSize_ {int(tcp['header_size'])}"]
            if tcp["delayed_ack"]:
                sink.append(f"interval_ {_tcl_num(tcp['delack_interval_ns'] / 1e9)}")
                # packet 0's ack at once or delayed: the profile's (2.35: true)
                sink.append(f"SYN_immediate_ack_ {'true' if tcp['syn_immediate_ack'] else 'false'}")
            w(f"set sink_params({label}) {{{' '.join(sink)}}}")
        elif g.trace_driven:
            size = g.packet_size
            kind = g.udp["shape"]["kind"]
            what = "constant, jittered" if kind == "constant" else kind
            w(f"# group {label!r}: UDP with a {what} rate, played from a trace "
              "of the packet engine's departure times")
            w(f"set udp_params({label}) {{packetSize_ {size}}}")
        else:
            size = g.packet_size
            rate = g.udp["shape"]["rate_bps"]
            w(f"# group {label!r}: constant-rate UDP (CBR, whole-packet size)")
            w(f"set udp_params({label}) {{packetSize_ {size}}}")
            w(f"set cbr_params({label}) {{packetSize_ {size} rate_ {_tcl_num(rate)} random_ 0}}")

    w("")
    in_group: dict[str, int] = {}
    for f in plan.flows:
        i, a, s = f.id, f.access, f.sink_access
        j = in_group[f.group] = in_group.get(f.group, -1) + 1
        w(f"# flow {i}: group {f.group!r}, start {_tcl_num(f.start_s)} s, stop {_tcl_num(f.stop_s)} s"
          + (" (reverse: data from the sink side)" if f.reverse else ""))
        if a is not None:
            first, last = ("$r1", "$r2") if plan.topology == "dumbbell" else \
                (f"$r({f.hops[0]})", f"$r({f.hops[1] + 1})")
            out.extend(_link_tcl(a, f"$src({i})", first))
            out.extend(_link_tcl(s, last, f"$dst({i})"))
            out.extend(_impairments_tcl(plan, a, f"$src({i})", first))
            out.extend(_impairments_tcl(plan, s, last, f"$dst({i})"))
        snd, rcv = (f"$dst({i})", f"$src({i})") if f.reverse else (f"$src({i})", f"$dst({i})")
        if f.kind == "tcp":
            sender, sink_cls, delack_cls = TCP_CLASSES[f.variant]
            w(f"set agent({i}) [new {sender}]")
            w(f"tcplab_config $agent({i}) $tcp_params({f.group})")
            w(f"$agent({i}) set fid_ {i}")
            w(f"set sink({i}) [new {delack_cls if f.tcp['delayed_ack'] else sink_cls}]")
            w(f"tcplab_config $sink({i}) $sink_params({f.group})")
            w(f"$ns attach-agent {snd} $agent({i})")
            w(f"$ns attach-agent {rcv} $sink({i})")
            w(f"$ns connect $agent({i}) $sink({i})")
            if f.tcp["tick_seed"] is not None:
                # boot_time_ is not a Tcl variable: an agent's reset draws it from the
                # default RNG, so reseed and reset it at 0 s, before anything is sent
                # (the packet engine computes the same draw: tcp::rtt::ns2_boot_time_s).
                k = int(f.tcp["tick_seed"]) + j
                w(f'$ns at 0 "$defaultRNG seed {k}; $agent({i}) reset"')
            if f.app is None:
                w(f"set app({i}) [$agent({i}) attach-app FTP]")
            else:
                # CBR over TCP: each packet interval the app hands the agent
                # one packet's payload (sendmsg: curseq_ += 1, send_much).
                w(f"set app({i}) [new Application/Traffic/CBR]")
                w(f"$app({i}) set packetSize_ {int(f.tcp['payload_bytes'])}")
                w(f"$app({i}) set rate_ {_tcl_num(f.app['rate_bps'])}")
                w(f"$app({i}) set random_ 0")
                w(f"$app({i}) attach-agent $agent({i})")
        else:
            w(f"set agent({i}) [new Agent/UDP]")
            w(f"tcplab_config $agent({i}) $udp_params({f.group})")
            w(f"$agent({i}) set fid_ {i}")
            w(f"set sink({i}) [new Agent/LossMonitor]")
            w(f"$ns attach-agent {snd} $agent({i})")
            w(f"$ns attach-agent {rcv} $sink({i})")
            w(f"$ns connect $agent({i}) $sink({i})")
            if f.trace_driven:
                recs = _trace_records(plan, f)
                w(f"set trace_seed({i}) [tcplab_trace_file {i} tcplab-udp-{i}.bin "
                  f"{_trace_seed(plan.seed, i)} {{{' '.join(map(str, recs))}}}]")
                w(f"set tfile({i}) [new Tracefile]")
                w(f"$tfile({i}) filename tcplab-udp-{i}.bin")
                w(f"set app({i}) [new Application/Traffic/Trace]")
                w(f"$app({i}) attach-tracefile $tfile({i})")
            else:
                w(f"set app({i}) [new Application/Traffic/CBR]")
                w(f"tcplab_config $app({i}) $cbr_params({f.group})")
            w(f"$app({i}) attach-agent $agent({i})")
        if f.start_s < min(f.stop_s, plan.duration_s):
            ssthresh = f.tcp["initial_ssthresh"] if f.kind == "tcp" else 0
            if f.trace_driven:
                # The trace source draws its first record from the default RNG
                # as it starts; reseeding just before makes that draw the one
                # tcplab_trace_file rotated the file for. Then reseed apart.
                w(f'$ns at {_tcl_num(f.start_s)} "$defaultRNG seed $trace_seed({i}); '
                  f'$app({i}) start; $defaultRNG seed {_trace_seed(plan.seed, i) + 500_000}"')
            elif ssthresh:
                # `$ns run` resets every agent (ssthresh_ = window_), so the
                # initial ssthresh is set at the start, just before sending.
                w(f'$ns at {_tcl_num(f.start_s)} "$agent({i}) set ssthresh_ {int(ssthresh)}; $app({i}) start"')
            else:
                w(f'$ns at {_tcl_num(f.start_s)} "$app({i}) start"')
        if f.start_s < f.stop_s < plan.duration_s:
            w(f'$ns at {_tcl_num(f.stop_s)} "$app({i}) stop"')

    if plan.red_seed is not None:
        # RED draws from the default RNG; after the agents' resets above (same
        # instant, scheduled earlier), nothing else does: reseed it as the
        # packet engine's RED starts (red.seed)
        w(f'$ns at 0 "$defaultRNG seed {plan.red_seed}"')
    w("")
    w(_trace_tcl(plan, tcp_ids))
    w(_playback_tcl(plan))
    w("# Counter snapshots: end of warm-up, checkpoints against 32-bit wrap, end.")
    w(f'puts $tcplab_out "V [ns-version]"')
    w(f'puts $tcplab_out "W {_tcl_num(plan.warmup_s)} {_tcl_num(plan.duration_s)}"')
    for k, t in enumerate(plan.sample_times[:-1]):
        w(f'$ns at {_tcl_num(t)} "tcplab_sample {k}"')
    w("proc tcplab_finish {} {")
    w("    global tcplab_out tcplab_files")
    w(f"    tcplab_sample {len(plan.sample_times) - 1}")
    w('    puts $tcplab_out "E"')
    w("    close $tcplab_out")
    w("    foreach fh $tcplab_files { close $fh }")
    w("    exit 0")
    w("}")
    w(f'$ns at {_tcl_num(plan.duration_s)} "tcplab_finish"')
    if progress_steps:
        step = plan.duration_s / progress_steps
        w("proc tcplab_progress {} {")
        w("    global ns")
        w('    puts stdout "tcplab-progress [$ns now]"')
        w("    flush stdout")
        w(f'    $ns at [expr [$ns now] + {_tcl_num(step)}] "tcplab_progress"')
        w("}")
        w(f'$ns at {_tcl_num(step)} "tcplab_progress"')
    w("$ns run")
    return "\n".join(out) + "\n"


def _impairments_tcl(plan: _Plan, link: _Link, a: str, b: str) -> list[str]:
    """Tcl lines for the errors and outages of the duplex link a -- b (the
    link's forward direction is a -> b)."""
    lines = []
    seed = _errors_seed(plan.seed, link.id)
    if link.per > 0:
        lines.append(f"tcplab_errors {a} {b} {_tcl_num(link.per)} {seed}")
    if link.ge is not None:
        lines.append(f"tcplab_ge_errors {a} {b} {' '.join(map(_tcl_num, link.ge))} {seed}")
    if link.drops:  # an empty list loses nothing (ns-2 would warn on every packet)
        lines.append(f"tcplab_list_errors {a} {b} {{{' '.join(map(str, link.drops))}}}")
    if link.outages:
        lines.append(f"# outages: {len(link.outages)} (the packet engine's schedule)")
        for start_ns, end_ns in link.outages:
            lines.append(f"$ns rtmodel-at {_tcl_num(start_ns / 1e9)} down {a} {b}")
            if end_ns / 1e9 < plan.duration_s:
                lines.append(f"$ns rtmodel-at {_tcl_num(end_ns / 1e9)} up {a} {b}")
    return lines


def _read_times(plan: _Plan, f: _Flow) -> list[float]:
    """When the playback reader of app flow `f` reads: every interval after
    the flow's start, up to its stop (as the packet engine)."""
    start_ns, step_ns = round(f.start_s * 1e9), int(f.app["interval_ns"])
    stop_ns = round(min(f.stop_s, plan.duration_s) * 1e9)
    n = (stop_ns - start_ns) // step_ns if stop_ns > start_ns else 0
    return [(start_ns + k * step_ns) / 1e9 for k in range(1, n + 1)]


def _playback_tcl(plan: _Plan) -> str:
    """The sink's in-order byte count of every CBR-over-TCP flow at each read
    instant of its playback reader (the reads are computed from these, as
    the packet engine computes them, in `tcplab.metrics.playback_reads`).
    Scheduled before the run's end, so a read at the very end is kept."""
    apps = [f for f in plan.flows if f.kind == "tcp" and f.app]
    if not apps:
        return ""
    lines = ["# Playback readers: delivered bytes at each read instant.",
             "proc tcplab_playback {i} {",
             "    global ns tcplab_out sink",
             '    puts $tcplab_out "P $i [$sink($i) set bytes_]"',
             "}"]
    for f in apps:
        times = _read_times(plan, f)
        if times:
            lines.append(f"foreach t {{{' '.join(_tcl_num(t) for t in times)}}} "
                         f"{{ $ns at $t \"tcplab_playback {f.id}\" }}")
    return "\n".join(lines) + "\n"


def _topology_tcl(plan: _Plan) -> list[str]:
    """Nodes, the shared links and their queue monitors (`qmon(name/direction)`).
    A flow's own access and sink links are written with the flow."""
    n = len(plan.flows)
    out: list[str] = []
    w = out.append
    if plan.topology == "dumbbell":
        bn = plan.bottleneck
        w("# Dumbbell: src(i) -> R1 -> bottleneck -> R2 -> dst(i).")
        w("set r1 [$ns node]")
        w("set r2 [$ns node]")
    else:
        k = len(plan.chain)
        w(f"# {plan.topology}: routers r(0) ... r({k}); links[k] joins r(k) to r(k + 1)"
          + (", every flow from r(0) to r({k})." if plan.topology == "path"
             else "; flow i: src(i) -> access -> r(first hop) ... r(last hop + 1) -> dst(i)."))
        w(f"for {{set k 0}} {{$k <= {k}}} {{incr k}} {{ set r($k) [$ns node] }}")
    if plan.topology == "path":
        # no access links: every agent sits on the chain's end routers
        w(f"for {{set i 0}} {{$i < {n}}} {{incr i}} {{ set src($i) $r(0); set dst($i) $r({len(plan.chain)}) }}")
    else:
        w(f"for {{set i 0}} {{$i < {n}}} {{incr i}} {{ set src($i) [$ns node] }}")
        w(f"for {{set i 0}} {{$i < {n}}} {{incr i}} {{ set dst($i) [$ns node] }}")
    for name, link, a, b in plan.monitored:
        w(f"# {name}: {_tcl_num(link.rate_bps)} b/s, {_tcl_num(link.delay_s)} s, "
          f"{link.buffer_pkts} waiting packets")
        out.extend(_link_tcl(link, a, b))
        out.extend(_impairments_tcl(plan, link, a, b))
        key = _tcl_key(name)
        w(f'set qmon({key}/forward) [$ns monitor-queue {a} {b} ""]')
        w(f'set qmon({key}/reverse) [$ns monitor-queue {b} {a} ""]')
    return out


def _tcl_key(name: str) -> str:
    """A link name as a Tcl array index ("link[0]" would be a command substitution)."""
    return name.replace("[", ".").replace("]", "")


def _link_tcl(link: _Link, a: str, b: str) -> list[str]:
    """Tcl lines creating the duplex link a <-> b (RED: its parameters first)."""
    lines = [f"Queue/RED set {k} {v}" for k, v in link.red]
    lines.append(f"tcplab_link {a} {b} {_tcl_num(link.rate_bps)} {_tcl_num(link.delay_s)} "
                 f"{link.ns2_limit}" + ("" if link.queue == "droptail" else f" {link.ns2_queue}"))
    return lines


#: ns-2's default RNG (MRG32k3a) takes seeds 1 … 2^31 − 2 (`$defaultRNG seed` fails above).
_NS2_SEED_MAX = 2**31 - 2


def _ns2_seed(seed: int) -> int:
    """A scenario seed (any u64 > 0) as a seed ns-2's default RNG accepts: itself
    when it fits, else folded into 1 … 2^31 − 2."""
    return seed if seed <= _NS2_SEED_MAX else seed % _NS2_SEED_MAX + 1


def _errors_seed(seed: int, link_index: int) -> int:
    """Seed of the RNG of the error model on the engine's link `link_index`
    (ns-2 draws its own numbers: the two engines agree in distribution)."""
    return 2_000_003 + 104_729 * int(link_index) + int(seed) % 1_000_000


def _trace_seed(seed: int, flow_id: int) -> int:
    """Seed for the default RNG as trace source `flow_id` starts (> 0)."""
    return 1_000_003 + 7919 * int(flow_id) + int(seed) % 1_000_000


def _trace_records(plan: _Plan, f: _Flow) -> list[int]:
    """Tracefile records (gap_us, size) for a shaped UDP flow: the packet
    engine's departure times, as gaps in whole microseconds from the start
    (each rounded from the absolute time, so rounding never accumulates).
    The first record's gap is the first packet's delay after the start (0
    unless it has send jitter); the last waits ~71 minutes, past the flow's stop."""
    import json

    import numpy as np

    from tcplab.scenario import _core

    raw = _core().udp_departures(json.dumps(plan.scenario), int(f.id))
    t_ns = np.frombuffer(raw, dtype="<i8")
    start_ns = round(f.start_s * 1e9)
    if len(t_ns) == 0:
        raise Ns2Error(f"flows.{f.group}.rate: the shape sends nothing before the flow stops")
    us = np.rint((t_ns - start_ns) / 1000.0).astype(np.int64)
    gaps = np.diff(us, prepend=0)
    size = f.packet_size
    recs = np.empty(2 * (len(gaps) + 1), dtype=np.int64)
    recs[0:-2:2] = gaps
    recs[1::2] = size
    recs[-2] = _TRACE_GAP_MAX_US
    return recs.tolist()


def _tcp_params(tcp: dict) -> list[tuple[str, str]]:
    """(ns-2 variable, value) for one TCP group's Plan, in the order they are set.
    The window is the Plan's: already min(window, send_buffer) for a blocking
    writer with a send buffer of B packets (it keeps at most B unacknowledged)."""
    def dur(key):
        return _tcl_num(tcp[key] / 1e9)

    def num(key):
        return _tcl_num(tcp[key])

    def flag(key):
        return "1" if tcp[key] else "0"

    header = int(tcp["header_size"])
    return [
        ("tcpip_base_hdr_size_", str(header)),
        ("packetSize_", str(int(tcp["payload_bytes"]))),
        ("window_", num("window")),
        ("maxcwnd_", num("max_cwnd")),
        ("windowInit_", num("initial_cwnd")),
        ("increase_num_", num("alpha")),
        ("decrease_num_", num("beta")),
        ("rtxcur_init_", dur("initial_rto_ns")),
        ("minrto_", dur("min_rto_ns")),
        ("maxrto_", dur("max_rto_ns")),
        ("tcpTick_", dur("tick_ns")),
        ("numdupacks_", num("dupack_threshold")),
        ("singledup_", flag("limited_transmit")),
        ("syn_", flag("syn")),
        # the packet engine restarts from the initial window after packet 0's ack
        # exactly when it sends a SYN: ns-2's delay_growth_, which changed with syn_
        # (both true since 2001/5/17); 2.35 alone would keep it true without syn_
        ("delay_growth_", flag("syn")),
        ("bugFix_", flag("bug_fix")),
    ] + ([("ecn_", "1")] if tcp["ecn"] else [])


def _queue_traced_per_packet(plan: _Plan) -> bool:
    return "queue" in plan.series and plan.interval_s <= 0


def _trace_tcl(plan: _Plan, tcp_ids: list[int]) -> str:
    lines = ["set tcplab_files {}"]
    tcp_series = [s for s in plan.series if s in ("cwnd", "inflight", "seq", "rtt")]
    if "drops" in plan.series and not _queue_traced_per_packet(plan):
        # Every drop at the bottleneck, by ns-2's C++ drop trace spliced in
        # front of the queue monitor's drop counter. (With a per-packet queue
        # trace, its "d" lines are the drops and trace-queue rewires this path.)
        lines += [f"set drops_fh [open {DROPS_FILE} w]",
                  "lappend tcplab_files $drops_fh",
                  "set bq [[$ns link $r1 $r2] queue]",
                  "set drop_trace [$ns create-trace Drop $drops_fh $r1 $r2]",
                  "$drop_trace target [$bq drop-target]"]
        if plan.bottleneck.queue == "red":
            # RED's early (unforced) drops go to its early-drop target when it
            # has one: an "e" line; forced drops (a full buffer) stay "d".
            lines += ["set edrop_trace [$ns create-trace EDrop $drops_fh $r1 $r2]",
                      "$edrop_trace target [$bq drop-target]",
                      "$bq early-drop-target $edrop_trace"]
        lines += ["$bq drop-target $drop_trace"]
    if not tcp_series and "queue" not in plan.series:
        return "\n".join(lines) + "\n"
    if plan.interval_s <= 0:
        # Every change, written by ns-2's C++ tracing.
        if tcp_series and tcp_ids:
            vars_ = []
            if "cwnd" in tcp_series:
                vars_ += ["cwnd_", "ssthresh_"]
            if "inflight" in tcp_series or "seq" in tcp_series:
                vars_ += ["maxseq_", "ack_"]
            if "rtt" in tcp_series:
                vars_ += RTT_VARS
            lines.append(f"set tcpvars_fh [open {TCPVARS_FILE} w]")
            lines.append("lappend tcplab_files $tcpvars_fh")
            # each trace line names its agent by node address and port, which only a
            # dumbbell numbers predictably: the map says which flow each agent is
            lines.append(f"set tcpmap_fh [open {TCPMAP_FILE} w]")
            lines.append("lappend tcplab_files $tcpmap_fh")
            lines.append("foreach i $tcp_ids {")
            lines.append('    puts $tcpmap_fh "[$agent($i) set agent_addr_] [$agent($i) set agent_port_] $i"')
            lines.append("    $agent($i) attach $tcpvars_fh")
            for v in vars_:
                lines.append(f"    $agent($i) trace {v}")
            lines.append("}")
        if "queue" in plan.series:
            lines.append(f"set queue_fh [open {QUEUE_FILE} w]")
            lines.append("lappend tcplab_files $queue_fh")
            lines.append("$ns trace-queue $r1 $r2 $queue_fh")
    else:
        # One Tcl call per interval (not per packet): instantaneous values at k * interval.
        lines.append(f"set samples_fh [open {SAMPLES_FILE} w]")
        lines.append(f"set qsamples_fh [open {QSAMPLES_FILE} w]")
        lines.append("lappend tcplab_files $samples_fh $qsamples_fh")
        lines.append("proc tcplab_trace_tick {k} {")
        lines.append("    global ns samples_fh qsamples_fh tcp_ids agent qmon")
        lines.append(f"    set t [expr {{$k * {_tcl_num(plan.interval_s)}}}]")
        if tcp_series and tcp_ids:
            lines.append("    foreach i $tcp_ids {")
            lines.append("        set a $agent($i)")
            lines.append('        puts $samples_fh "$t $i [$a set cwnd_] [$a set ssthresh_] [$a set maxseq_] [$a set ack_]'
                         ' [$a set srtt_] [$a set rttvar_] [$a set backoff_]"')
            lines.append("    }")
        if "queue" in plan.series:
            lines.append('    puts $qsamples_fh "$t [$qmon(bottleneck/forward) set pkts_]"')
        lines.append("    set next [expr {($k + 1) * " + _tcl_num(plan.interval_s) + "}]")
        lines.append(f"    if {{$next < {_tcl_num(plan.duration_s)}}} {{ $ns at $next \"tcplab_trace_tick [expr {{$k + 1}}]\" }}")
        lines.append("}")
        lines.append('$ns at 0 "tcplab_trace_tick 0"')
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------------ running

def _ns_binary(ns_binary: str | None) -> str:
    name = ns_binary or os.environ.get(NS_BINARY_ENV) or "ns"
    path = shutil.which(name)
    if path is None:
        raise Ns2Error(
            f"ns-2 not found: no executable {name!r}"
            + (f" (from ${NS_BINARY_ENV})" if not ns_binary and os.environ.get(NS_BINARY_ENV) else "")
            + "; install it with `apt-get install ns2` or point "
            f"${NS_BINARY_ENV} at an ns-2 2.35 binary")
    return path


@functools.lru_cache(maxsize=None)
def _package_version() -> str | None:
    """Debian's version of the ns2 package, if dpkg knows it."""
    try:
        r = subprocess.run(["dpkg-query", "-W", "-f", "${Version}", "ns2"],
                           capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return r.stdout.strip() or None if r.returncode == 0 else None


#: how many progress lines a watched run prints (see `tcplab.progress`)
PROGRESS_STEPS = 200


def _run_reporting(ns: str, script: str, wd: Path, limit: float, duration_s: float):
    """`subprocess.run` for a watched run: ns-2's `tcplab-progress` lines are passed to
    `tcplab.progress.report` as they come; other output is kept. TimeoutExpired past `limit`."""
    lines: list[str] = []
    expired = threading.Event()
    with open(wd / "ns-stderr.txt", "w+") as err, \
            subprocess.Popen([ns, script], cwd=wd, stdout=subprocess.PIPE, stderr=err, text=True) as p:
        def expire():
            expired.set()
            p.kill()

        timer = threading.Timer(limit, expire)
        timer.start()
        try:
            for line in p.stdout:
                if line.startswith("tcplab-progress "):
                    progress.report(float(line.split()[1]), duration_s)
                else:
                    lines.append(line)
            p.wait()
        finally:
            timer.cancel()
        err.seek(0)
        stderr = err.read()
    if expired.is_set():
        raise subprocess.TimeoutExpired([ns, script], limit)
    return subprocess.CompletedProcess([ns, script], p.returncode, "".join(lines), stderr)


def run_ns2(scenario: dict, workdir: str | None = None, keep: bool = False, *,
            ns_binary: str | None = None, timeout_s: float | None = None) -> dict:
    """Run a resolved scenario in ns-2 and return the raw result dict.

    `workdir`: where to write the script and ns-2's outputs (kept); by default
    a temporary directory, removed afterwards unless `keep`. `ns_binary`
    overrides $TCPLAB_NS2 and PATH; `timeout_s` bounds ns-2's wall time.
    """
    plan = _plan(scenario)
    ns = _ns_binary(ns_binary)
    own_dir = workdir is None
    wd = Path(tempfile.mkdtemp(prefix="tcplab-ns2-") if own_dir else workdir)
    wd.mkdir(parents=True, exist_ok=True)
    try:
        script = wd / "scenario.tcl"
        watched = progress.wanted()
        script.write_text(_tcl(plan, PROGRESS_STEPS if watched else 0))
        limit = DEFAULT_TIMEOUT_S if timeout_s is None else float(timeout_s)
        t0 = time.perf_counter()
        try:
            if watched:
                proc = _run_reporting(ns, script.name, wd, limit, plan.duration_s)
            else:
                proc = subprocess.run([ns, script.name], cwd=wd, capture_output=True,
                                      text=True, timeout=limit)
        except subprocess.TimeoutExpired:
            raise Ns2Error(f"ns-2 did not finish within {limit:g} s "
                           f"(scenario {plan.name!r}; raise timeout_s)") from None
        except OSError as exc:
            raise Ns2Error(f"could not run ns-2 ({ns}): {exc}") from None
        wall_s = time.perf_counter() - t0
        counters = wd / COUNTERS_FILE
        text = counters.read_text() if counters.exists() else ""
        if proc.returncode != 0 or not text.rstrip().endswith("E"):
            tail = "\n".join((proc.stderr or proc.stdout or "").strip().splitlines()[-15:])
            raise Ns2Error(f"ns-2 ({ns}) failed on scenario {plan.name!r} "
                           f"(exit status {proc.returncode}); "
                           f"script kept in {wd if not own_dir or keep else 'a removed temp dir'}:\n{tail}")
        result = _parse(plan, text, wd)
        result["wall_s"] = wall_s
        if keep or not own_dir:
            result["workdir"] = str(wd)
        return result
    finally:
        if own_dir and not keep:
            shutil.rmtree(wd, ignore_errors=True)


# ------------------------------------------------------------------------ parsing

def _unwrap(values: list[int]) -> list[int]:
    """Absolute counts from 32-bit ns-2 counters sampled often enough that no
    counter grew by 2^32 or more between samples (see _COUNTER_SAFE_STEP)."""
    out, total, prev = [], 0, 0
    for v in values:
        total += (v - prev) % _COUNTER_MODULUS
        prev = v
        out.append(total)
    return out


def _parse(plan: _Plan, text: str, wd: Path) -> dict:
    version = "?"
    times: dict[int, float] = {}
    rows: dict[tuple[str, str], dict[int, list[int]]] = {}
    sink_reads: dict[int, list[int]] = {}
    for line in text.splitlines():
        parts = line.split()
        if not parts:
            continue
        tag = parts[0]
        if tag == "V":
            version = " ".join(parts[1:])
        elif tag == "T":
            times[int(parts[1])] = float(parts[2])
        elif tag in ("F", "U", "L"):
            rows.setdefault((tag, parts[2]), {})[int(parts[1])] = [int(x) for x in parts[3:]]
        elif tag == "P":
            sink_reads.setdefault(int(parts[1]), []).append(int(parts[2]))
    n_samples = len(plan.sample_times)
    if sorted(times) != list(range(n_samples)):
        raise Ns2Error(f"ns-2 output is incomplete: expected {n_samples} counter snapshots, "
                       f"got {len(times)}")
    warm_index = plan.sample_times.index(plan.warmup_s) + 1 if plan.warmup_s > 0 else 0

    def series(tag: str, key: str) -> list[list[int]]:
        """Per counter column, absolute values at t = 0 (all zero) and each sample."""
        by_sample = rows.get((tag, key))
        if by_sample is None or len(by_sample) != n_samples:
            raise Ns2Error(f"ns-2 output lacks counters for {tag} {key}")
        columns = zip(*(by_sample[k] for k in range(n_samples)))
        return [[0] + _unwrap(list(c)) for c in columns]

    def window(col: list[int]) -> int:
        return col[-1] - col[warm_index]

    flows = []
    playback = []
    for f in plan.flows:
        if f.kind == "tcp":
            sent, rexmit_pkts, timeouts, cuts, sink_bytes, _ack = series("F", str(f.id))
            size, header, syn = f.packet_size, int(f.tcp["header_size"]), bool(f.tcp["syn"])

            def data_packets(b: int) -> int:
                # The sink counts wire bytes in order: the header-only SYN,
                # then full-size data packets; without a SYN, packet 0 is the
                # bare payload (output() adds the header in the else branch of
                # its packet-0 test), so it lacks `header` bytes.
                if b > 0:
                    b += -header if syn else header
                return b // size

            delivered = data_packets(sink_bytes[-1]) - data_packets(sink_bytes[warm_index])
            if f.app:
                playback.append(_playback_table(plan, f, [data_packets(b) * (size - header)
                                                          for b in sink_reads.get(f.id, [])]))
            syn_in_window = int(syn and sent[warm_index] == 0 and sent[-1] > 0)
            flows.append({
                "id": f.id, "group": f.group, "kind": "tcp",
                "delivered_packets": delivered,
                "delivered_bytes": delivered * (size - header),
                "sent_packets": window(sent) - syn_in_window,
                "retransmissions": window(rexmit_pkts),
                "timeouts": window(timeouts),
                # ncwndcuts1_ counts window cuts with data outstanding: one per
                # fast retransmit and one per timeout (nrexmit_); with ECN also
                # one per echoed mark, and a fast retransmit after one cuts
                # nothing (Reno) or once (Tahoe): no count can be told apart
                "fast_retransmits": None if f.tcp["ecn"] else window(cuts) - window(timeouts),
            })
        else:
            npkts, nbytes, _lost = series("U", str(f.id))
            flows.append({
                "id": f.id, "group": f.group, "kind": "udp",
                "delivered_packets": window(npkts),
                "delivered_bytes": window(nbytes),
                "sent_packets": None, "retransmissions": None,
                "timeouts": None, "fast_retransmits": None,
            })

    measured = plan.duration_s - plan.warmup_s
    links = []
    for name, link, _a, _b in plan.monitored:
        for direction in ("forward", "reverse"):
            pdep, bdep, pdrops, _bdrops, _parr = series("L", f"{_tcl_key(name)}/{direction}")
            links.append({
                "name": name, "direction": direction,
                "drops": window(pdrops), "departures": window(pdep),
                "utilization": window(bdep) * 8 / (link.rate_bps * measured),
            })

    pkg = _package_version()
    extra = {}
    if any(f.kind == "udp" and f.udp["shape"]["kind"] != "constant" for f in plan.flows):
        # "free" capacity needs the clipped mean of each shape (the engine's).
        extra["reference_bps"] = plan.reference_bps
    return {
        **extra,
        "engine": "ns2",
        "engine_version": f"ns-2 {version}" + (f" (Debian {pkg})" if pkg else ""),
        "scenario": plan.scenario,
        "measured_s": measured,
        "flows": flows,
        "links": links,
        "traces": {**_parse_traces(plan, wd),
                   **({"playback": _concat_by_time(playback)} if playback else {})},
    }


def _playback_table(plan: _Plan, f: _Flow, delivered: list[int]):
    import pandas as pd

    from tcplab.metrics import playback_reads

    times = _read_times(plan, f)
    if len(delivered) != len(times):
        raise Ns2Error(f"ns-2 output lacks playback samples for flow {f.id} "
                       f"({len(delivered)} of {len(times)})")
    wanted = int(f.app["read_bytes"])
    t = pd.DataFrame({"t": times, "flow": f.id})
    return pd.concat([t, playback_reads(delivered, wanted)], axis=1)


def _concat_by_time(tables):
    import pandas as pd

    return (pd.concat(tables, ignore_index=True)
            .sort_values(["t", "flow"], kind="stable").reset_index(drop=True))


def _agent_flows(map_path: Path, addr, port):
    """The flow id of each trace line, from its agent's node address and port and
    the map the script wrote (TCPMAP_FILE): node numbers differ off the dumbbell (a
    path's agents all sit on its end routers), so the address alone cannot say."""
    import numpy as np

    ids = {}
    for line in map_path.read_text().split("\n"):
        parts = line.split()
        if len(parts) == 3:
            ids[(int(parts[0]), int(parts[1]))] = int(parts[2])
    keys = zip(np.asarray(addr, dtype="int64").tolist(), np.asarray(port, dtype="int64").tolist())
    try:
        return np.array([ids[k] for k in keys], dtype="int64")
    except KeyError as exc:
        raise Ns2Error(f"ns-2's TCP trace names an agent (node, port) {exc.args[0]} that the script "
                       f"did not map to a flow ({map_path.name})") from None


def _parse_traces(plan: _Plan, wd: Path) -> dict:
    if not plan.series:
        return {}
    import pandas as pd

    traces: dict = {}
    tcp_series = [s for s in plan.series if s in ("cwnd", "inflight", "seq", "rtt")]
    if "drops" in plan.series:
        red = plan.bottleneck.queue == "red"
        if _queue_traced_per_packet(plan):
            # trace-queue logs RED's early and forced drops alike as "d"
            d = _read_ws(wd / QUEUE_FILE, [0, 1, 7], ["event", "t", "flow"])
            d = d[d["event"] == "d"]
            cause = None if red else "overflow"
        else:
            # "d": the buffer was full; "e": RED's early drop (see _trace_tcl)
            d = _read_ws(wd / DROPS_FILE, [0, 1, 7], ["event", "t", "flow"])
            cause = d["event"].map({"d": "overflow", "e": "red"}).to_numpy()
        drops = pd.DataFrame({"t": d["t"].to_numpy(dtype=float), "link": "bottleneck",
                              "flow": d["flow"].to_numpy(dtype="int64")})
        if cause is not None:
            drops["cause"] = cause
        traces["drops"] = drops
    if plan.interval_s <= 0:
        if tcp_series:
            path = wd / TCPVARS_FILE
            raw = _read_ws(path, [0, 1, 2, 5, 6], ["t", "src", "port", "var", "value"])
            raw["flow"] = _agent_flows(wd / TCPMAP_FILE, raw["src"], raw["port"])
            # The values at attach time precede ns-2's reset at `run`; keep the
            # last value of each variable per instant.
            raw = raw.drop_duplicates(["flow", "var", "t"], keep="last")
            wide = (raw.pivot_table(index=["flow", "t"], columns="var", values="value",
                                    aggfunc="last")
                    .groupby(level="flow").ffill().reset_index())
            wide.columns.name = None
            wide = wide.sort_values(["t", "flow"], kind="stable")
            if "cwnd" in tcp_series:
                traces["cwnd"] = _frame(wide, {"cwnd_": "cwnd", "ssthresh_": "ssthresh"},
                                        {"ssthresh": "int64"})
            if "seq" in tcp_series:
                traces["seq"] = _frame(wide, {"maxseq_": "seq", "ack_": "ack"},
                                       {"seq": "int64", "ack": "int64"})
            if "rtt" in tcp_series:
                traces["rtt"] = _rtt_frame(_frame(wide, dict(zip(RTT_VARS, RTT_VARS)), {}), plan, raw=False)
            if "inflight" in tcp_series:
                fr = _frame(wide, {"maxseq_": "seq", "ack_": "ack"}, {})
                fr["inflight"] = (fr["seq"] - fr["ack"]).astype("int64")
                traces["inflight"] = fr[["t", "flow", "inflight"]]
        if "queue" in plan.series:
            raw = _read_ws(wd / QUEUE_FILE, [0, 1], ["event", "t"])
            step = raw["event"].map({"+": 1, "-": -1, "d": -1})
            keep = step.notna()
            q = pd.DataFrame({"t": raw["t"][keep].to_numpy(),
                              "link": "bottleneck",
                              "packets": step[keep].astype("int64").cumsum().to_numpy()})
            # ns-2 logs an arrival ("+") before the queue decides, so a dropped
            # arrival shows as "+" then "d", and an arrival at an idle link as
            # "+" then "-", at the same instant: keep the state after each instant.
            traces["queue"] = q.drop_duplicates("t", keep="last").reset_index(drop=True)
    else:
        if tcp_series:
            c = _read_ws(wd / SAMPLES_FILE, list(range(9)),
                         ["t", "flow", "cwnd", "ssthresh", "seq", "ack"] + RTT_VARS)
            c = c.astype({"flow": "int64", "ssthresh": "int64", "seq": "int64", "ack": "int64"})
            if "rtt" in tcp_series:
                traces["rtt"] = _rtt_frame(c[["t", "flow"] + RTT_VARS], plan, raw=True)
            if "cwnd" in tcp_series:
                traces["cwnd"] = c[["t", "flow", "cwnd", "ssthresh"]].reset_index(drop=True)
            if "seq" in tcp_series:
                traces["seq"] = c[["t", "flow", "seq", "ack"]].reset_index(drop=True)
            if "inflight" in tcp_series:
                traces["inflight"] = pd.DataFrame({"t": c["t"].to_numpy(),
                                                   "flow": c["flow"].to_numpy(),
                                                   "inflight": (c["seq"] - c["ack"]).to_numpy()})
        if "queue" in plan.series:
            q = _read_ws(wd / QSAMPLES_FILE, [0, 1], ["t", "packets"])
            traces["queue"] = pd.DataFrame({"t": q["t"].to_numpy(), "link": "bottleneck",
                                            "packets": q["packets"].astype("int64").to_numpy()})
    return traces


def _read_ws(path: Path, usecols: list[int], names: list[str]):
    """A whitespace-separated ns-2 output file, selected columns only."""
    import pandas as pd

    if not path.exists() or path.stat().st_size == 0:
        return pd.DataFrame({n: pd.Series(dtype="object" if n in ("event", "var") else "float64")
                             for n in names})
    df = pd.read_csv(path, sep=r"\s+", header=None, usecols=usecols, engine="c")
    df.columns = names
    return df


# ns-2's RTT estimator state (tcp.h): srtt_ holds 8 × srtt and rttvar_ 4 × rttvar,
# both in ticks of tcpTick_; backoff_ is the RTO multiplier.
RTT_VARS = ["srtt_", "rttvar_", "backoff_"]


def _rtt_frame(fr, plan: _Plan, raw: bool):
    """The rtt table (t, flow, srtt, rttvar in seconds, backoff) from ns-2's
    estimator variables: `raw` values (read with `$agent set`) in ticks, else
    as ns-2's own variable trace prints them (already in seconds: srtt =
    (srtt_ >> 3)·tick, rttvar = rttvar_·tick/4). ns-2 exposes no RTO
    variable, so there is no rto column."""
    import pandas as pd

    srtt, rttvar = fr["srtt_"].to_numpy(float), fr["rttvar_"].to_numpy(float)
    if raw:
        tick = {f.id: f.tcp["tick_ns"] / 1e9 for f in plan.flows if f.kind == "tcp"}
        ticks = fr["flow"].astype("int64").map(tick).to_numpy(float)
        srtt = (fr["srtt_"].to_numpy("int64") >> 3) * ticks
        rttvar = rttvar * ticks / 4.0
    return pd.DataFrame({"t": fr["t"].to_numpy(float), "flow": fr["flow"].to_numpy("int64"),
                         "srtt": srtt, "rttvar": rttvar, "backoff": fr["backoff_"].to_numpy("int64")})


def _frame(wide, rename: dict, dtypes: dict):
    cols = ["t", "flow"] + [c for c in rename if c in wide.columns]
    fr = wide[cols].rename(columns=rename).dropna()
    return fr.astype({k: v for k, v in dtypes.items() if k in fr.columns}).reset_index(drop=True)
