"""Apply the closed-form models to a scenario.

For every model in the registry, :func:`predict_scenario` either derives the
model's inputs from the scenario and evaluates it, or says why the model does
not apply. The scenario is the engine's resolution of it (`tcplab.scenario.resolve`:
the schema's keys, checked as `tcplab run` checks them, with every default
filled in by the engine), so no default is restated here.

Derived quantities, from the engine's Plan (`tcplab.plan`): the bottleneck (the
dumbbell's, or the slowest link on the first TCP flow's route) and its rate μ in
packets/s (rate / 8·packet_size, packet_size on the wire), the round-trip
propagation delay τ (the delays of a flow's forward and reverse routes; on the
dumbbell 2·(access + bottleneck + sink access delay)), the bandwidth-delay
product μτ in packets, and B = the bottleneck's buffer (packets that can wait:
paper D's B). Each group's count, kind, packet size and TCP parameters (cc,
variant, α, β, delayed acks, the window) are its first flow's in the Plan too:
the window is the one the sender keeps, the advertised window capped by a
blocking send buffer (`app.send_buffer`), as every engine runs it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from tcplab.models import aimd, bbr, buffers, dctcp, gaimd, slowstart
from tcplab.models.registry import MODELS


class ScenarioValueError(ValueError):
    """A scenario value the models cannot read; the message names the key path."""


@dataclass
class TcpGroup:
    name: str
    count: int
    variant: str
    cc: str
    alpha: float
    beta: float
    packet_size: int
    delayed_ack: bool
    window: int  # packets the sender keeps unacknowledged at most (the Plan's window)
    rtt_prop_s: float  # round-trip propagation delay


@dataclass
class Path:
    """What the models need to know about a scenario."""

    rate_bps: float
    buffer: int
    tcp: list[TcpGroup] = field(default_factory=list)
    udp_groups: list[str] = field(default_factory=list)
    access_rate_bps: list[float] = field(default_factory=list)
    #: groups whose route does not cross the bottleneck (a parking lot's cross flows)
    elsewhere: list[str] = field(default_factory=list)
    #: the bottleneck's queue as the Plan resolves it (kind, RED's thresholds, ecn)
    queue: dict = field(default_factory=dict)

    @property
    def n_tcp(self) -> int:
        return sum(g.count for g in self.tcp)

    def mu(self, group: TcpGroup) -> float:
        """Bottleneck rate in packets/s of this group's packets."""
        return self.rate_bps / (8 * group.packet_size)


def read_path(scn: Mapping) -> Path:
    """The model-relevant part of a *resolved* scenario (`tcplab.scenario.resolve`), read
    from the engine's Plan (`tcplab.plan`): the bottleneck is the dumbbell's, or the
    slowest link on the first TCP flow's route; each group's RTT is its routes' delays,
    its count and parameters its flows' in the Plan."""
    from tcplab.plan import plan

    p = plan(scn, resolved=True)
    bn = p.bottleneck()
    if bn["rate_bps"] <= 0:
        raise ScenarioValueError("topology.bottleneck.rate: must be positive")
    path = Path(rate_bps=float(bn["rate_bps"]), buffer=int(bn["buffer_pkts"]), queue=dict(bn.get("queue") or {}))
    counts: dict[str, int] = {}
    for f in p.engine["flows"]:  # in group order, then within the group
        counts[f["group"]] = counts.get(f["group"], 0) + 1
    for name, count in counts.items():
        first = p.first_of(name)
        route = p.route(first)
        ids = [link["id"] for link in route]
        if bn["id"] not in ids:
            path.elsewhere.append(name)
        else:
            # the links before the bottleneck: the source's access (paper D's fast link)
            path.access_rate_bps.extend(link["rate_bps"] for link in route[:ids.index(bn["id"])])
        tcp = first["tcp"]
        if tcp is None:
            path.udp_groups.append(name)
            continue
        path.tcp.append(
            TcpGroup(
                name=name,
                count=count,
                variant=str(tcp["variant"]),
                cc=str(tcp["cc"]),
                alpha=float(tcp["alpha"]),
                beta=float(tcp["beta"]),
                packet_size=int(first["packet_size"]),
                delayed_ack=bool(tcp["delayed_ack"]),
                window=int(tcp["window"]),
                rtt_prop_s=p.base_rtt_s(name),
            )
        )
    return path


@dataclass
class Prediction:
    model: str
    applies: bool
    reason: str  # why it applies (with caveats) or why not
    inputs: dict = field(default_factory=dict)
    value: object = None
    group: str | None = None


def _same(values) -> bool:
    values = list(values)
    return all(abs(v - values[0]) <= 1e-12 * max(1.0, abs(values[0])) for v in values)


def _aimd_common(path: Path) -> str | None:
    """Why paper C's model does not apply, or None."""
    if path.udp_groups:
        return f"UDP background ({', '.join(path.udp_groups)}) shares the link; paper C has only AIMD flows"
    if not path.tcp:
        return "no TCP flows"
    other_cc = [f"{g.name} ({g.cc})" for g in path.tcp if g.cc != "reno"]
    if other_cc:
        return f"congestion control other than reno: {', '.join(other_cc)}; paper C's flows are AIMD"
    tahoe = [g.name for g in path.tcp if g.variant == "tahoe"]
    if tahoe:
        return (f"TCP Tahoe ({', '.join(tahoe)}) restarts from slow start on every loss, "
                "it is not AIMD (see the slowstart-* models, paper D)")
    if not (_same(g.alpha for g in path.tcp) and _same(g.beta for g in path.tcp)):
        return "TCP groups differ in alpha/beta; Theorem 1 needs identical connections"
    if not _same(g.rtt_prop_s for g in path.tcp):
        return "TCP groups differ in RTT (additive increase η); Theorem 1 needs identical connections"
    return None


def _aimd_caveat(path: Path) -> str:
    g = path.tcp[0]
    bdp = path.mu(g) * g.rtt_prop_s
    if path.buffer > bdp:
        return (f"; caveat: buffer {path.buffer} pkts > BDP {bdp:.1f} pkts, queueing is not negligible "
                "(paper C, Figs. 7-9: large buffers rise above the model)")
    return (f"; buffer {path.buffer} pkts <= BDP {bdp:.1f} pkts (zero-buffer model fits); "
            "DropTail may synchronize losses (then aimd-all is closer)")


def _predict_aimd(path: Path) -> list[Prediction]:
    why_not = _aimd_common(path)
    out = []
    for name in ("aimd-one", "aimd-all"):
        if why_not:
            out.append(Prediction(name, False, why_not))
            continue
        n, beta = path.n_tcp, path.tcp[0].beta
        value = (aimd.aimd_one_utilization(n, beta) if name == "aimd-one"
                 else aimd.aimd_all_utilization(beta, n))
        policy = "one flow cut per congestion event" if name == "aimd-one" else "all flows cut together"
        out.append(Prediction(name, True, f"{n} identical AIMD flows, {policy}{_aimd_caveat(path)}",
                              {"n": n, "beta": beta}, value))
    return out


def _predict_window_epoch(path: Path) -> list[Prediction]:
    out = []
    if not path.tcp:
        return [Prediction(m, False, "no TCP flows") for m in ("gaimd-window", "gaimd-epoch")]
    if path.udp_groups:
        why = f"UDP background ({', '.join(path.udp_groups)}) takes an unknown share of the link"
        return [Prediction(m, False, why) for m in ("gaimd-window", "gaimd-epoch")]
    for g in path.tcp:
        rate_pps, n = path.mu(g), path.n_tcp
        w = gaimd.fair_share_window(rate_pps, g.rtt_prop_s, n)
        out.append(Prediction("gaimd-window", True, f"{n} TCP flows share the bottleneck evenly",
                              {"rate": rate_pps, "rtt": g.rtt_prop_s, "n": n}, w, g.name))
        if g.cc != "reno":
            out.append(Prediction("gaimd-epoch", False, f"cc = {g.cc}: the epoch is TCP(α,β)'s", group=g.name))
            continue
        epoch = gaimd.congestion_epoch_rtts(w, g.alpha, g.beta)
        out.append(Prediction("gaimd-epoch", True, "W from gaimd-window",
                              {"w": w, "alpha": g.alpha, "beta": g.beta}, epoch, g.name))
    return out


def _predict_alpha(path: Path) -> list[Prediction]:
    if not path.tcp:
        return [Prediction("gaimd-alpha", False, "no TCP flows")]
    out = []
    for g in path.tcp:
        if g.cc != "reno":
            out.append(Prediction("gaimd-alpha", False, f"cc = {g.cc}: not TCP(α,β)", group=g.name))
            continue
        a = gaimd.friendly_alpha(g.beta)
        verdict = "TCP-friendly" if abs(a - g.alpha) <= 0.01 * a else f"not TCP-friendly (alpha = {g.alpha:g})"
        out.append(Prediction("gaimd-alpha", True, f"friendly alpha for beta = {g.beta:g}; this group is {verdict}",
                              {"beta": g.beta}, a, g.name))
    return out


def _predict_slowstart(path: Path) -> list[Prediction]:
    names = ("slowstart-cycle", "slowstart-throughput", "slowstart-ratio")
    why = None
    if path.udp_groups:
        why = f"UDP background ({', '.join(path.udp_groups)}); paper D has one TCP flow alone"
    elif path.n_tcp != 1:
        why = f"{path.n_tcp} TCP flows; paper D has exactly one"
    elif path.tcp[0].variant != "tahoe":
        why = f"variant {path.tcp[0].variant}; paper D analyses TCP Tahoe"
    elif path.tcp[0].delayed_ack:
        why = "delayed acks; paper D's receiver acks every packet"
    elif path.buffer < 1:
        why = "buffer 0; paper D needs B >= 1"
    elif path.access_rate_bps and min(path.access_rate_bps) <= path.rate_bps:
        why = "access link not faster than the bottleneck; paper D's source sits behind a fast link"
    if why:
        return [Prediction(m, False, why) for m in names]
    g = path.tcp[0]
    mu, tau = path.mu(g), g.rtt_prop_s
    if g.window < slowstart.max_window(path.buffer, mu, tau):
        why = (f"window {g.window} < W_max (the advertised window, or a blocking send buffer); "
               "paper D's flow is not receiver-limited")
        return [Prediction(m, False, why) for m in names]
    inputs = {"buffer": path.buffer, "mu": mu, "tau": tau}
    info = slowstart.explain_slowstart_cycle(path.buffer, mu, tau)
    return [
        Prediction("slowstart-cycle", True, info["reason"], inputs, info["slowstarts"], g.name),
        Prediction("slowstart-throughput", True, "(W_S + W_E)/(2 RTT), RTT = tau + 1/mu", inputs,
                   slowstart.slowstart_cycle_throughput(path.buffer, mu, tau), g.name),
        Prediction("slowstart-ratio", info["regime"] == slowstart.REGIME_THEOREM_1,
                   "triple/double throughput ratio" if info["regime"] == slowstart.REGIME_THEOREM_1
                   else "W_th <= 2 W_B: no triple slow start to compare with",
                   inputs, slowstart.triple_slowstart_ratio(path.buffer, mu, tau), g.name),
    ]


def _predict_buffers(path: Path) -> list[Prediction]:
    names = ("buffer-bdp", "buffer-sqrt-n")
    if not path.tcp:
        return [Prediction(m, False, "no TCP flows") for m in names]
    if not _same(g.rtt_prop_s for g in path.tcp) or not _same(g.packet_size for g in path.tcp):
        why = "TCP groups differ in RTT or packet size; the rules take one RTT × C"
        return [Prediction(m, False, why) for m in names]
    g, n = path.tcp[0], path.n_tcp
    mu, rtt = path.mu(g), g.rtt_prop_s
    bdp = buffers.bdp_buffer(mu, rtt)
    small = buffers.sqrt_n_buffer(mu, rtt, n)
    have = f"this bottleneck holds {path.buffer} pkts"
    return [
        Prediction("buffer-bdp", True, f"{have}: {'at least' if path.buffer >= bdp else 'less than'} "
                   "RTT × C", {"rate": mu, "rtt": rtt}, bdp),
        Prediction("buffer-sqrt-n", True, f"{have}: {'at least' if path.buffer >= small else 'less than'} "
                   f"RTT × C/√{n}; the rule needs the {n} flow(s) desynchronized",
                   {"rate": mu, "rtt": rtt, "n": n}, small),
    ]


def _predict_bbr(path: Path) -> list[Prediction]:
    bbr_groups = [g for g in path.tcp if g.cc == "bbr"]
    others = [g for g in path.tcp if g.cc != "bbr"]
    why = None
    if not bbr_groups:
        why = "no BBR flows (cc = \"bbr\")"
    elif not others:
        why = "no loss-based flows to compete with"
    elif path.udp_groups:
        why = f"UDP background ({', '.join(path.udp_groups)}); the model has only TCP flows"
    elif not _same(g.rtt_prop_s for g in path.tcp) or not _same(g.packet_size for g in path.tcp):
        why = "TCP groups differ in RTT or packet size; the model assumes one RTT and packet size"
    if why:
        return [Prediction("bbr-share", False, why)]
    g = bbr_groups[0]
    mu, rtt = path.mu(g), g.rtt_prop_s
    x = path.buffer / (mu * rtt)
    n_bbr = sum(b.count for b in bbr_groups)
    inputs = {"buffer_bdp": x, "rate": mu, "rtt": rtt, "n_bbr": n_bbr}
    try:
        info = bbr.explain_bbr_share(x, mu, rtt, n_bbr)
    except ValueError as exc:
        return [Prediction("bbr-share", False, str(exc))]
    return [Prediction("bbr-share", True, f"buffer {x:.3g} BDP; " + info["reason"], inputs,
                       bbr.bbr_share(x, mu, rtt, n_bbr), ", ".join(b.name for b in bbr_groups))]


_DCTCP_MODELS = ("dctcp", "dctcp-alpha", "dctcp-k")


def _step_marking_threshold(queue: Mapping) -> tuple[float | None, str]:
    """K when the queue ECN-marks as DCTCP's switch does (every packet arriving to a queue
    of K or more: RED with ecn, min_thresh = max_thresh = K, weight 1, max_p 1, not gentle),
    else None and why not."""
    if queue.get("kind") != "red" or not queue.get("ecn"):
        return None, "the bottleneck does not ECN-mark (DCTCP's switch marks: queue = \"red\" with red.ecn = true)"
    lo, hi = float(queue["min_thresh"]), float(queue["max_thresh"])
    if lo != hi or float(queue["weight"]) != 1.0 or float(queue["max_p"]) != 1.0 or queue.get("gentle"):
        return None, (f"the bottleneck marks as RED (min_thresh {lo:g}, max_thresh {hi:g}, weight "
                      f"{float(queue['weight']):g}, max_p {float(queue['max_p']):g}); the model needs a step at K: "
                      "min_thresh = max_thresh = K, weight = 1, max_p = 1, gentle = false")
    return lo, ""


def _predict_dctcp(path: Path) -> list[Prediction]:
    groups = [g for g in path.tcp if g.cc == "dctcp"]
    why = None
    if not groups:
        why = "no DCTCP flows (cc = \"dctcp\")"
    elif len(groups) != len(path.tcp):
        why = ("flows other than DCTCP (" + ", ".join(g.name for g in path.tcp if g.cc != "dctcp")
               + "); the model has N DCTCP flows alone")
    elif path.udp_groups:
        why = f"UDP background ({', '.join(path.udp_groups)}); the model has N DCTCP flows alone"
    elif not _same(g.rtt_prop_s for g in groups) or not _same(g.packet_size for g in groups):
        why = "DCTCP groups differ in RTT or packet size; the model assumes one RTT and packet size"
    k = None
    if why is None:
        k, why = _step_marking_threshold(path.queue)
        why = why or None
    if why:
        return [Prediction(m, False, why) for m in _DCTCP_MODELS]
    g, n = groups[0], sum(x.count for x in groups)
    mu, rtt = path.mu(g), g.rtt_prop_s
    names = ", ".join(x.name for x in groups)
    inputs = {"rate": mu, "rtt": rtt, "k": k, "n": n}
    guideline = dctcp.min_marking_threshold(mu, rtt)
    k_pred = Prediction("dctcp-k", True, f"this bottleneck marks at K = {k:g}: "
                        f"{'above' if k > guideline else 'not above'} C·RTT/7",
                        {"rate": mu, "rtt": rtt}, guideline, names)
    try:
        info = dctcp.explain_dctcp(mu, rtt, k, n)
    except ValueError as exc:
        return [Prediction("dctcp", False, str(exc)), Prediction("dctcp-alpha", False, str(exc)), k_pred]
    caveat = f"{n} DCTCP flow(s), marking at K = {k:g}; the model assumes them synchronized"
    if path.buffer < info["queue_max"]:
        caveat += f"; the buffer ({path.buffer} pkts) is below Q_max = {info['queue_max']:g}: loss, outside the model"
    return [
        Prediction("dctcp", True, f"{caveat}; {info['reason']}", inputs, dctcp.queue_min(mu, rtt, k, n), names),
        Prediction("dctcp-alpha", True, f"{caveat}; W* = {info['w_star']:.4g}", inputs,
                   dctcp.steady_state_alpha(mu, rtt, k, n), names),
        k_pred,
    ]


_NOT_FROM_A_SCENARIO = {
    "multtcp": "the scenario has no MultTCP flow (compare it with aimd-one by hand: tcplab predict multtcp --n N)",
    "aimd-connections": "needs a target utilization, which a scenario does not state",
    "aimd-largest-rate": "needs the largest-rate loss policy; the scenario's queue does not enforce a loss policy",
    "aimd-beatdown": "needs the beatdown loss policy; the scenario's queue does not enforce a loss policy",
    "aimd-second-moment": "needs N = 2, beta = 1/2 and an enforced loss policy",
    "gaimd": "needs the loss event rate p, an outcome of the run: measure it, then tcplab predict gaimd --p P",
    "pftk": "needs the loss event rate p, an outcome of the run: measure it, then tcplab predict pftk --p P",
    "mathis": "needs the loss event rate p, an outcome of the run: measure it, then tcplab predict mathis --p P",
    "cubic-window": "needs the loss rate p, an outcome of the run: measure it, then tcplab predict cubic-window --p P",
    "cubic": "needs the loss rate p, an outcome of the run: measure it, then tcplab predict cubic --p P",
}


def predict_scenario(scn: Mapping) -> list[Prediction]:
    """Every registry model, applied to the scenario or with the reason it does not apply.
    `scn` is resolved first (resolving a resolved scenario changes nothing); a key the
    engine's schema does not know is a UserError naming it, as for `tcplab run`."""
    from tcplab.scenario import resolve

    path = read_path(resolve(scn))
    if path.elsewhere:
        # every model here is of flows sharing one bottleneck
        why = (f"the route of flow group(s) {', '.join(path.elsewhere)} does not cross the bottleneck "
               "(the first TCP flow's slowest link, forward); these models assume every flow shares one link")
        found = [Prediction(m.name, False, why) for m in MODELS if m.name not in _NOT_FROM_A_SCENARIO]
    else:
        found = (_predict_aimd(path) + _predict_alpha(path) + _predict_window_epoch(path)
                 + _predict_slowstart(path) + _predict_buffers(path) + _predict_bbr(path)
                 + _predict_dctcp(path))
    done = {p.model for p in found}
    for name, why in _NOT_FROM_A_SCENARIO.items():
        found.append(Prediction(name, False, why))
        done.add(name)
    missing = [m.name for m in MODELS if m.name not in done]
    assert not missing, f"models without a scenario rule: {missing}"
    order = {m.name: i for i, m in enumerate(MODELS)}
    return sorted(found, key=lambda p: order[p.model])
