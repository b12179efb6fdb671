"""The combination matrix: every congestion control × TCP profile × variant ×
topology × queue × engine either runs and passes physical invariants, or is
refused by the key that makes the combination, with the reason.

`cases()` enumerates the matrix; `scenario(case)` builds the small scenario a
case runs (short, so that the whole matrix runs in minutes); `refusal(case)` asks
the engine's validation and, for ns-2 and the linux engine, their translations,
whether the combination is refused and by which key; `check(case, result)` tests
a run against the invariants:

- every link direction carries at most its rate (utilization ≤ 1);
- no flow's goodput exceeds its own bottleneck's rate;
- packets are conserved on every link direction: arrivals = departures + drops +
  error losses, up to what a queue and its serializer can hold at the window's two
  ends (2 × (buffer + 1) packets); the flows' drops add up to the links';
- a flow delivers no more than it sent, and drops no more than it sent;
- `clean_case` (one long flow on an otherwise empty dumbbell with a buffer of one
  bandwidth-delay product): the bottleneck is at least 90 % busy for every
  congestion control and profile whose recovery keeps the ack clock (Tahoe, which
  restarts from one packet at every loss, is held to 80 %), and the flow's loss
  rate is below 5 %.

`tests/test_matrix.py` samples the matrix in CI (hypothesis) and runs all of it in
the slow tier; `python -m tcplab.docs` writes docs/matrix.md, the table of what
runs where and what is refused and why.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

#: Congestion controls; "aimd" is TCP(α, β) (`cc = "reno"` with α, β of paper B).
CCS = ("reno", "aimd", "cubic", "bbr", "dctcp")
PROFILES = ("ns2-2.35", "ns2-2001", "linux")
VARIANTS = ("tahoe", "reno", "newreno", "sack")
TOPOLOGIES = ("dumbbell", "path", "parking-lot", "two-way")
QUEUES = ("droptail", "red", "red-ecn", "threshold")
ENGINES = ("packet", "ns2", "linux")

#: The bottleneck of every case: 10 Mb/s, RTT 44 ms (20 ms + 2 × 1 ms each way), so one
#: bandwidth-delay product is 55 packets of 1000 bytes.
RATE = "10Mbps"
BDP_PKTS = 55


@dataclass(frozen=True)
class Case:
    cc: str
    profile: str
    variant: str
    topology: str
    queue: str
    engine: str

    @property
    def label(self) -> str:
        return f"{self.cc}/{self.profile}/{self.variant}/{self.topology}/{self.queue}/{self.engine}"


def cases(engines=ENGINES) -> list[Case]:
    """Every combination, in a fixed order."""
    return [Case(*c) for c in itertools.product(CCS, PROFILES, VARIANTS, TOPOLOGIES, QUEUES, engines)]


def _queue(queue: str, buffer: int) -> dict:
    if queue == "droptail":
        return {}
    if queue in ("red", "red-ecn"):
        red = {"min_thresh": buffer // 4, "max_thresh": buffer // 2}
        if queue == "red-ecn":
            red["ecn"] = True
        return {"queue": "red", "red": red}
    return {"queue": "threshold", "threshold": {"threshold": 3, "immunity": "44ms"}}


def _group(case: Case, **extra) -> dict:
    g = {"kind": "tcp", "profile": case.profile, "variant": case.variant, "packet_size": 1000}
    if case.cc == "aimd":
        # TCP(α, β) friendly to TCP(1, ½): α = 4(1 − β²)/3 (paper B's rule)
        g.update(alpha=round(4 * (1 - 0.875 ** 2) / 3, 6), beta=0.875)
    else:
        g["cc"] = case.cc
    if case.queue == "red-ecn" or case.cc == "dctcp":
        g["ecn"] = True
    g.update(extra)
    return g


def scenario(case: Case, duration: str = "20s", flows: int = 2) -> dict:
    """The scenario a case runs: its topology with the case's queue on the
    bottleneck link(s), `flows` flows of the case's TCP (per group), 20 s by default
    with a 5 s warm-up."""
    buffer = BDP_PKTS
    bn = {"rate": RATE, "delay": "20ms", "buffer": buffer, **_queue(case.queue, buffer)}
    edge = {"rate": "100Mbps", "delay": "1ms", "buffer": 1000}
    sc: dict = {"name": f"matrix {case.label}", "seed": 1, "duration": duration, "warmup": "5s"}
    start = {"start_jitter": "1s"}
    if case.topology == "dumbbell":
        sc["topology"] = {"bottleneck": bn, "access": edge, "sink_access": edge}
        sc["flows"] = {"tcp": _group(case, count=flows, **start)}
    elif case.topology == "two-way":
        sc["topology"] = {"bottleneck": bn, "access": edge, "sink_access": edge}
        sc["flows"] = {"fwd": _group(case, count=flows, **start),
                       "rev": _group(case, count=flows, reverse=True, **start)}
    elif case.topology == "path":
        sc["topology"] = {"kind": "path", "links": [dict(edge), dict(bn, delay="20ms"), dict(edge)]}
        sc["flows"] = {"tcp": _group(case, count=flows, **start)}
    else:
        sc["topology"] = {"kind": "parking-lot", "links": [dict(bn), dict(bn)], "access": edge, "sink_access": edge}
        sc["flows"] = {"a_long": _group(case, count=flows, **start),
                       "cross0": _group(case, count=flows, hops=[0, 0], **start),
                       "cross1": _group(case, count=flows, hops=[1, 1], **start)}
    return sc


def clean_case(cc: str, profile: str, variant: str, engine: str = "packet") -> tuple[Case, dict]:
    """One long flow on an otherwise empty dumbbell, DropTail, a buffer of one
    bandwidth-delay product, 60 s measured after 20 s."""
    case = Case(cc, profile, variant, "dumbbell", "droptail", engine)
    sc = scenario(case, duration="80s", flows=1)
    sc["warmup"] = "20s"
    sc["flows"]["tcp"].pop("start_jitter")
    return case, sc


def refusal(case: Case, sc: dict | None = None) -> str | None:
    """None if the case runs; otherwise the refusal as the user sees it (the key
    path and the reason). Asks the engine's validation, then the engine's own
    translation (ns-2's export refuses what its agents cannot do; the linux engine
    what the kernel or its emulator cannot)."""
    from tcplab.errors import UserError
    from tcplab.scenario import resolve

    sc = scenario(case) if sc is None else sc
    try:
        resolved = resolve(sc)
        if case.engine == "ns2":
            from tcplab.backends import ns2

            ns2.export_tcl(resolved)
        elif case.engine == "linux":
            from tcplab.backends import linux

            linux._plan(resolved)
    except UserError as exc:
        return str(exc)
    return None


@dataclass
class Verdict:
    ok: bool
    problems: list[str]


def check(case: Case, sc: dict, result, clean: bool = False) -> Verdict:
    """The physical invariants of a run (the module's docstring lists them)."""
    import numpy as np

    problems: list[str] = []
    links = result.links
    util = links["utilization"].to_numpy(dtype=float)
    for name, direction, u in zip(links["name"], links["direction"], util):
        if u > 1 + 1e-9:
            problems.append(f"{name} {direction}: utilization {u:.4f} > 1")
    if "arrivals" in links and "departures" in links:
        from tcplab.plan import Plan

        buffers = {link["name"]: int(link["buffer_pkts"]) for link in Plan(sc).links}
        for row in links.itertuples():
            errors = getattr(row, "errors", 0) or 0
            if any(v != v for v in (row.arrivals, row.departures, row.drops)):
                continue  # an engine that does not count this link
            gap = row.arrivals - row.departures - row.drops - errors
            # the Plan's link the table names (each duplex link's label is unique)
            bound = 2 * (buffers.get(row.name, max(buffers.values())) + 1)
            if abs(gap) > bound:
                problems.append(f"{row.name} {row.direction}: arrivals {row.arrivals} ≠ departures "
                                f"{row.departures} + drops {row.drops} + errors {errors} (off by {gap}, "
                                f"more than the {bound} packets a queue holds at the window's ends)")
    if "drops" in result.flows and "drops" in links:
        # every loss happens on some link, and both count it by the same window
        by_flows, by_links = result.flows["drops"].sum(), links["drops"].sum()
        if by_flows == by_flows and by_links == by_links and by_flows != by_links:
            problems.append(f"the flows lost {by_flows} packets, the links dropped {by_links}")
    for w in result.metrics.get("warnings") or []:
        problems.append(w)
    f = result.flows
    tcp = f[f["kind"] == "tcp"]
    for row in tcp.itertuples():
        sent = getattr(row, "sent_packets", None)
        if sent is not None and sent == sent:
            # both counted in the window: what was in flight at its start may be
            # delivered in it, at most what the path holds (a BDP in the pipes, the
            # bottleneck's buffer in the queue) — 4 BDPs bound it on every topology here
            if row.delivered_packets > sent + 4 * BDP_PKTS:
                problems.append(f"flow {row.id}: delivered {row.delivered_packets} > sent {sent} "
                                f"+ {4 * BDP_PKTS} in flight at the window's start")
            drops = getattr(row, "drops", 0)  # ns-2's flow records have no drop count
            if drops == drops and drops > sent:
                problems.append(f"flow {row.id}: drops {drops} > sent {sent}")
    if clean:
        bn = result.metrics.get("bottleneck_utilization")
        floor = 0.8 if case.variant == "tahoe" else 0.9
        if bn is None or not bn >= floor:
            problems.append(f"one clean long flow keeps the bottleneck {bn:.3f} busy (< {floor})")
        loss = result.metrics.get("bottleneck_loss_rate", 0.0)
        if loss >= 0.05:
            problems.append(f"one flow on a one-BDP buffer loses {loss:.3f} of its packets (≥ 0.05)")
    return Verdict(not problems, problems)


def run(case: Case, sc: dict):
    """Run a case's scenario on its engine."""
    import tcplab

    return tcplab.run(sc, engine=case.engine)


# --- docs/matrix.md ------------------------------------------------------------------------

def _reason(message: str) -> tuple[str, str]:
    """(key, reason) of a refusal, the group's name replaced by GROUP so that one rule
    reads once: "scenario: flows.fwd.cc: ..." -> ("flows.GROUP.cc", "...")."""
    import re

    text = message.removeprefix("scenario: ")
    key, _, why = text.partition(": ")
    key = re.sub(r"^flows\.[^.]+\.", "flows.GROUP.", key)
    why = re.sub(r"\s*\(this group has [^)]*\)", "", why).strip()
    why = re.sub(r"not \"\w+\"", "not this variant", why) if "cc = \"cubic\"" in why else why
    why = re.sub(r"got '[\w-]+'", "got another kind", why)
    return key, why


def markdown() -> str:
    """docs/matrix.md: what runs where, what is refused and why, and one clean long
    flow per congestion control, profile and variant measured on the packet engine."""
    from collections import Counter, defaultdict

    from tcplab.docs import GENERATED

    refusals = {c: refusal(c) for c in cases()}
    out = [GENERATED, "", "# The combination matrix", "",
           "Every congestion control × TCP profile × variant × topology × queue × engine either runs "
           "and passes the physical invariants below, or is refused before the run by the key that "
           "makes the combination, with the reason. `tests/test_matrix.py` samples the matrix on every "
           "CI run (the packet engine and ns-2) and runs all of it in the slow tier "
           "(`pytest -m slow tests/test_matrix.py`); the cases are built by `tcplab/matrix.py`: a "
           f"{RATE} bottleneck, round-trip propagation 44 ms, a buffer of one bandwidth-delay product "
           f"({BDP_PKTS} packets), two flows per group, 20 s with a 5 s warm-up.", "",
           "Invariants of every run: every link direction carries at most its rate; no flow's goodput "
           "exceeds its own bottleneck's rate; packets are conserved on every link direction (arrivals = "
           "departures + drops + error losses, up to what a queue holds at the window's two ends) and the "
           "flows' drops add up to the links'; a flow "
           "delivers no more than it sent (plus what was in flight when the window opened) and drops no "
           "more than it sent.", "",
           f"{len(refusals)} combinations: {sum(r is None for r in refusals.values())} run, "
           f"{sum(r is not None for r in refusals.values())} are refused.", "",
           "## Which TCP runs (every engine)", "",
           "The scenario's validation, the same for every engine: "
           "`aimd` is TCP(α, β) (`cc = \"reno\"` with paper B's α and β).", ""]
    notes: dict[tuple[str, str], int] = {}
    head = "| cc | profile | " + " | ".join(VARIANTS) + " |"
    out += [head, "|" + " --- |" * (2 + len(VARIANTS))]
    for cc in CCS:
        for profile in PROFILES:
            cells = []
            for variant in VARIANTS:
                r = refusals[Case(cc, profile, variant, "dumbbell", "droptail", "packet")]
                if r is None:
                    cells.append("runs")
                else:
                    note = _reason(r)
                    n = notes.setdefault(note, len(notes) + 1)
                    cells.append(f"refused: `{note[0]}` ({n})")
            out.append(f"| {cc} | {profile} | " + " | ".join(cells) + " |")
    out += [""] + [f"{n}. `{key}`: {why}" for (key, why), n in notes.items()] + [""]
    out += ["## What each engine refuses beyond that", "",
            "Among the combinations the validation accepts, what each engine's own translation refuses "
            "(ns-2's export, the linux engine's emulator), by key and reason, with how many of the "
            "matrix's cases each rule covers.", "",
            "| engine | key | reason | cases |", "| --- | --- | --- | ---: |"]
    validated = {c: refusals[Case(c.cc, c.profile, c.variant, c.topology, c.queue, "packet")] for c in refusals}
    for engine in ENGINES:
        rules: Counter = Counter()
        for c, r in refusals.items():
            if c.engine == engine and r is not None and validated[c] is None:
                rules[_reason(r)] += 1
        if not rules:
            out.append(f"| {engine} | — | nothing: every validated case runs | 0 |")
        for (key, why), n in sorted(rules.items()):
            out.append(f"| {engine} | `{key}` | {why.replace('|', '/')} | {n} |")
    runs = defaultdict(int)
    for c, r in refusals.items():
        if r is None:
            runs[c.engine] += 1
    out += ["", "Cases that run, per engine: " + ", ".join(f"{e} {runs[e]}" for e in ENGINES) +
            ". The packet engine and ns-2 run them in the tests; the linux engine's runs need root "
            "and real time, so the matrix checks its refusals only, and its runs are checked by "
            "`tests/test_linux_engine.py` and the Linux-comparison suite (docs/cc-and-profiles.md).", ""]
    out += ["## One clean long flow", "",
            "One flow alone on the dumbbell, DropTail, a buffer of one bandwidth-delay product, 60 s "
            "measured after 20 s, on the packet engine: the bottleneck must be at least 90 % busy "
            "(Tahoe, which restarts from one packet at every loss: 80 %) and the flow must lose less "
            "than 5 % of its packets.", "",
            "| cc | profile | variant | bottleneck utilization | loss rate |", "| --- | --- | --- | ---: | ---: |"]
    for cc in CCS:
        for profile in PROFILES:
            for variant in VARIANTS:
                case, sc = clean_case(cc, profile, variant)
                if refusal(case, sc) is not None:
                    continue
                m = run(case, sc).metrics
                out.append(f"| {cc} | {profile} | {variant} | {m['bottleneck_utilization']:.3f} | "
                           f"{m.get('bottleneck_loss_rate', 0.0):.4f} |")
    return "\n".join(out) + "\n"
