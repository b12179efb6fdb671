"""What the engine's Plan can say and ns-2 2.35 cannot run, in one list.

`_Refusals(plan).check()` raises the first refusal (Ns2CannotRun, the
scenario key named); a Plan field the export does not read (`_PLAN_FIELDS`) is
refused by name rather than ignored.
"""

from __future__ import annotations

from tcplab.backends.ns2.errors import Ns2CannotRun

#: ns-2's agents for the TCP variants it runs (another variant is refused; the
#: export writes these classes).
TCP_CLASSES = {  # variant -> (sender class, sink class, delayed-ack sink class)
    "tahoe": ("Agent/TCP", "Agent/TCPSink", "Agent/TCPSink/DelAck"),
    "reno": ("Agent/TCP/Reno", "Agent/TCPSink", "Agent/TCPSink/DelAck"),
    "newreno": ("Agent/TCP/Newreno", "Agent/TCPSink", "Agent/TCPSink/DelAck"),
    "sack": ("Agent/TCP/Sack1", "Agent/TCPSink/Sack1", "Agent/TCPSink/Sack1/DelAck"),
}

#: ns-2's ListErrorModel counts arrivals in a C int.
_LIST_ERRORS_MAX = 2**31 - 1

#: Every field of the engine's Plan the export reads, per part of the Plan. A
#: field outside these sets (a feature added to the engine and not yet to the
#: export) is refused by name rather than ignored: an oracle that silently
#: dropped part of a scenario would lie. Fields the export reads without
#: writing a number of theirs: `linux` (the kernel's settings; ns-2 runs no
#: kernel), a link's `name` (comments and result labels), `role`, `flow` and
#: `hop` (which node pair the link joins, whose own link it is), `key` (the key
#: a refusal names), a flow's `bottleneck` (the metrics read it; ns-2's results
#: are measured against it as the packet engine's are) and `ack_bytes` (ns-2's
#: sinks send acks of `tcpip_base_hdr_size_` = header_size bytes, the same).
_PLAN_FIELDS = {
    "plan": {"seed", "topology", "end_ns", "warmup_ns", "reference_bps", "links", "flows", "trace",
             "linux"},
    "link": {"id", "name", "role", "flow", "hop", "key", "direction", "duplex", "rate_bps", "delay_ns",
             "buffer_pkts", "queue", "errors", "outages"},
    "flow": {"id", "group", "kind", "start_ns", "stop_ns", "route", "bottleneck", "packet_size", "tcp",
             "app", "udp"},
    "tcp": {"cc", "profile", "variant", "alpha", "beta", "window", "max_cwnd", "initial_cwnd",
            "initial_ssthresh", "initial_rto_ns", "min_rto_ns", "max_rto_ns", "tick_ns", "tick_seed",
            "dupack_threshold", "limited_transmit", "bug_fix", "syn", "header_size", "packet_size",
            "delayed_ack", "delack_interval_ns", "syn_immediate_ack", "payload_bytes", "ack_bytes",
            "boot_time_s", "ecn"},
    "app": {"rate_bps", "send_buffer_pkts", "when_full", "read_bytes", "interval_ns"},
    "udp": {"shape", "mean_bps", "send_jitter_ns"},
    "trace": {"series", "interval_ns"},
}


# Each refusal: a test on one part of the Plan, and the refusal. The key a
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


def _refuse_red_seed(p: dict) -> str | None:
    seeded = {l["duplex"] for l in p["links"]
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

    def __init__(self, p: dict):
        self.p = p

    @staticmethod
    def link_key(link: dict) -> str:
        """The scenario key that configured link `link` (the Plan's `key`)."""
        return link["key"]

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
    want = "bottleneck" if p["topology"] == "dumbbell" else "chain"
    return [l for l in p["links"] if l["direction"] == "forward" and l["role"] == want]
