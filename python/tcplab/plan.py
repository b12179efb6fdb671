"""What a run will do, for the Python side: the one place that reads the
engine's resolution of a scenario.

The engine resolves a scenario once (defaults, units, start jitter, join and
leave schedules, outage draws, the reference rate). Every Python consumer —
the linux engine, metrics, plots, the paper reproductions, `predict scenario`
— asks this module for those facts instead of working them out again from the
TOML or the resolved strings: `Plan.engine` is the engine's Plan (``_core.plan``:
links, routes, flow instants, TCP parameters in SI numbers and nanoseconds), and
the bottleneck, a flow's routes and round-trip propagation delay, the window and
the rates (``_core.rates_bps``) come from it.

Bytes of a TCP data packet: ``packet_size`` counts the whole packet on the
wire, ``header_size`` of it is the TCP/IP header (ns-2's ``packetSize_`` is
the payload, ``tcpip_base_hdr_size_`` the header), so the payload is
``packet_size − header_size``; a UDP packet is payload all through. With
``syn = true`` (ns-2's ``syn_``) packet 0 is the SYN, so the first data
packet is number 1.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property

import numpy as np

__all__ = ["Plan", "FlowPlan", "plan", "wire_bytes", "payload_bytes", "first_data_seq", "rates_bps"]


def _core():
    from tcplab.scenario import _core as core

    return core()


def wire_bytes(scenario: Mapping, group: str) -> int:
    """Bytes on the wire of one data packet of flow group `group` (resolved
    scenario), as the engine's Plan gives them."""
    return int(Plan(scenario).first_of(group)["packet_size"])


def payload_bytes(scenario: Mapping, group: str) -> int:
    """Payload bytes of one data packet of flow group `group` (resolved scenario),
    as the engine's Plan gives them: packet_size − header_size for TCP,
    packet_size for UDP."""
    return Plan(scenario).payload_bytes(group)


def _payload(flow: Mapping) -> int:
    """Payload bytes of a data packet of a flow of the engine's Plan."""
    return int(flow["tcp"]["payload_bytes"]) if flow["tcp"] else int(flow["packet_size"])


def first_data_seq(scenario: Mapping) -> int:
    """Sequence number of the first data packet in the TCP traces: 1 when every
    TCP group opens with a SYN (packet 0), else 0."""
    return Plan(scenario).first_data_seq


def rates_bps(delivered_bytes, delivered_packets, wire_bytes_per_packet, measured_s: float):
    """(goodput, throughput) in bit/s over the measurement window: goodput counts
    the payload delivered, throughput the delivered data packets' bytes on the
    wire. The engine defines them (`tcplab_engine::sim::rates_bps`, the packet
    engine's report uses it); engines that report only counts get theirs here."""
    n = len(delivered_bytes)
    wire = np.broadcast_to(np.asarray(wire_bytes_per_packet), (n,))
    goodput, throughput = _core().rates_bps([int(b) for b in delivered_bytes],
                                            [int(p) for p in delivered_packets],
                                            [int(w) for w in wire], float(measured_s))
    return np.asarray(goodput, dtype=float), np.asarray(throughput, dtype=float)


@dataclass(frozen=True)
class FlowPlan:
    """One flow as the engine runs it."""

    id: int  # flows are numbered in group-key order, then within the group
    group: str
    kind: str  # "tcp" | "udp"
    start_ns: int  # after start jitter and the join schedule (the run's end: never starts)
    stop_ns: int  # after stop and the leave schedule
    packet_size: int  # bytes on the wire of a data packet
    payload: int  # bytes of payload in it

    @property
    def start_s(self) -> float:
        return self.start_ns / 1e9

    @property
    def stop_s(self) -> float:
        return self.stop_ns / 1e9

    @property
    def runs(self) -> bool:
        """Whether the flow is ever active (a flow a join schedule never adds is not)."""
        return self.start_ns < self.stop_ns


class Plan:
    """A resolved scenario and what the engine derives from it, computed when
    first asked (a run's metrics need none of the engine calls)."""

    def __init__(self, resolved: Mapping):
        self.scenario = resolved
        self._json: str | None = None

    @property
    def json(self) -> str:
        if self._json is None:
            self._json = json.dumps(self.scenario)
        return self._json

    @cached_property
    def flows(self) -> tuple[FlowPlan, ...]:
        """Every flow in id order, with its start and stop instants from the engine."""
        return tuple(FlowPlan(int(f["id"]), f["group"], f["kind"], int(f["start_ns"]), int(f["stop_ns"]),
                              int(f["packet_size"]), _payload(f)) for f in self.engine["flows"])

    @property
    def reference_bps(self) -> float:
        """The rate throughput is normalized by (`measure.reference`)."""
        return float(self.engine["reference_bps"])

    def link_outages(self, link: int) -> list[tuple[int, int]]:
        """[(start_ns, end_ns)] of the packet engine's link `link` before the run ends."""
        return [(int(a), int(b)) for a, b in _core().link_outages(self.json, int(link))]

    @property
    def first_data_seq(self) -> int:
        """1 when every TCP flow opens with a SYN (packet 0), else 0."""
        tcp = [f["tcp"] for f in self.engine["flows"] if f["tcp"]]
        return 1 if all(bool(t["syn"]) for t in tcp) else 0

    @cached_property
    def engine(self) -> dict:
        """The engine's Plan (`_core.plan`) as a dict: every link (rate_bps, delay_ns,
        buffer_pkts, queue, errors, outages), every flow (start_ns/stop_ns, route as
        link ids, TCP parameters in SI and ns), end_ns, warmup_ns, reference_bps."""
        from tcplab.errors import UserError

        try:
            return json.loads(_core().plan(self.json))
        except ValueError as exc:  # e.g. a plan too big to build (budget::check_plan)
            raise UserError(f"scenario: {exc}") from None

    @property
    def links(self) -> list[dict]:
        return self.engine["links"]

    @property
    def end_s(self) -> float:
        return self.engine["end_ns"] / 1e9

    @property
    def warmup_s(self) -> float:
        return self.engine["warmup_ns"] / 1e9

    def flow(self, fid: int) -> dict:
        """The engine's plan of flow `fid` (route, tcp, udp, app, sizes)."""
        return self.engine["flows"][int(fid)]

    def payload_bytes(self, group: str) -> int:
        """Payload bytes of one data packet of flow group `group` (`payload_bytes`)."""
        return _payload(self.first_of(group))

    def first_of(self, group: str | None = None) -> dict:
        """The engine's plan of the first flow of `group` (default: the first TCP group,
        else the first group)."""
        flows = self.engine["flows"]
        if group is None:
            return next((f for f in flows if f["kind"] == "tcp"), flows[0])
        for f in flows:
            if f["group"] == group:
                return f
        raise KeyError(f"no flow group {group!r}")

    def route(self, flow: dict, direction: str = "forward") -> list[dict]:
        """The links of a flow's route (its plan, from `flow`/`first_of`), in order."""
        return [self.links[i] for i in flow["route"][direction]]

    def base_rtt_s(self, group: str | None = None) -> float:
        """Round-trip propagation delay (s) of the first flow of `group` (default: the
        first TCP group): the delays of its forward and its reverse route, no queueing."""
        f = self.first_of(group)
        ns = sum(link["delay_ns"] for d in ("forward", "reverse") for link in self.route(f, d))
        return ns / 1e9

    def bottleneck(self, group: str | None = None, direction: str = "forward") -> dict:
        """The bottleneck link of the first flow of `group` (default: the first TCP
        group) in `direction`, as the engine's Plan decides it (`FlowPlan.bottleneck`:
        the slowest link of the route, the link of role "bottleneck" among equals,
        else the first)."""
        return self.links[self.first_of(group)["bottleneck"][direction]]


def plan(scenario: Mapping, *, resolved: bool = False) -> Plan:
    """The Plan of `scenario` (a dict; resolved by the engine unless `resolved`)."""
    if not resolved:
        from tcplab.scenario import resolve

        scenario = resolve(scenario)
    return Plan(scenario)
