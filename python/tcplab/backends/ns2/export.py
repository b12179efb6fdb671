"""The ns-2 Tcl script of a resolved scenario: `export_tcl(scenario)`, from the
export's view of the engine's Plan (`view._plan`).

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

from tcplab.backends.ns2.errors import Ns2Error
from tcplab.backends.ns2.refuse import TCP_CLASSES
from tcplab.backends.ns2.view import (
    _Flow,
    _Link,
    _Plan,
    _plan,
    _queue_traced_per_packet,
    _read_times,
    _tcl_num,
)

#: What the script writes into its directory (`parse` reads them back).
COUNTERS_FILE = "tcplab-counters.txt"
TCPVARS_FILE = "tcplab-tcpvars.tr"
TCPMAP_FILE = "tcplab-tcpmap.tr"  # node address, port, flow id of every traced TCP agent
QUEUE_FILE = "tcplab-queue.tr"
DROPS_FILE = "tcplab-drops.tr"
SAMPLES_FILE = "tcplab-tcpsamples.txt"
QSAMPLES_FILE = "tcplab-queuesamples.txt"

#: Tracefile records hold the gap to the next packet in whole microseconds
#: (u_int32); the record after the last packet waits this long (~71 min).
_TRACE_GAP_MAX_US = 2**32 - 1

# ns-2's RTT estimator state (tcp.h): srtt_ holds 8 × srtt and rttvar_ 4 × rttvar,
# both in ticks of tcpTick_; backoff_ is the RTO multiplier.
RTT_VARS = ["srtt_", "rttvar_", "backoff_"]

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
    """Tcl lines creating the duplex link a <-> b (RED: its parameters first); an
    asymmetric link as ns-2's duplex-link builds one, two simplex links a -> b
    and b -> a, each with its own numbers."""
    if link.reverse is not None:
        lines = []
        for (x, y), d in (((a, b), link), ((b, a), link.reverse)):
            lines += [f"Queue/RED set {k} {v}" for k, v in d.red]
            lines.append(f"$ns simplex-link {x} {y} {_tcl_num(d.rate_bps)} {_tcl_num(d.delay_s)} "
                         f"{d.ns2_queue}")
            lines.append(f"$ns queue-limit {x} {y} {d.ns2_limit}")
        return lines
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
