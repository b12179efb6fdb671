"""What the lab computes from a scenario: the instant answers (closed forms,
`tcplab predict`'s models; the hybrid AIMD model, `fluid`), the model lines drawn
over the cwnd plot, the per-engine table rows, and the "why" sentences.

Everything here is plain functions of a resolved scenario (and a packet run's
summary); the server calls them in a worker process (`tcplab.lab.worker`).
"""

from __future__ import annotations

import math
import time
from typing import Mapping

from tcplab.errors import UserError

#: congestion events the fluid model simulates per answer (ms on one core): this many
#: for up to 10 flows, fewer (at least 5000) for more flows, whose events cost more
FLUID_EVENTS = 20_000
#: events of the fluid model's sample path the link's busy fraction is read from
FLUID_TRACE_EVENTS = 1_000


def busy_fraction(s0, s1, k: float):
    """Mean of min(k·s, 1) while s grows linearly from s0 to s1 (arrays or numbers).

    Paper C's model in the window domain: the windows' sum S (as a fraction of the
    congestion point μτ + B) grows linearly between congestion events; the link is
    busy while the windows cover the pipe, k·S ≥ 1 with k = (μτ + B)/μτ."""
    import numpy as np

    s0, s1 = np.asarray(s0, dtype=float), np.asarray(s1, dtype=float)
    x = 1.0 / k
    full = s0 >= x
    below = s1 <= x
    span = np.where(s1 > s0, s1 - s0, 1.0)
    f = np.clip((x - s0) / span, 0.0, 1.0)  # share of the segment below the pipe
    mixed = f * k * (s0 + x) / 2 + (1 - f)
    return np.where(full, 1.0, np.where(below, k * (s0 + s1) / 2, mixed))


def _k(f: Mapping) -> float:
    return (f["bdp_pkts"] + f["buffer_pkts"]) / f["bdp_pkts"] if f.get("bdp_pkts") else 1.0


def _plain(v):
    """Plain JSON values: numpy scalars as Python numbers, NaN and ±inf as None."""
    if isinstance(v, dict):
        return {k: _plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    if hasattr(v, "item") and callable(v.item):
        try:
            return v.item()
        except (ValueError, TypeError):
            pass
    if isinstance(v, float) and not math.isfinite(v):
        return None
    return v


def facts(resolved: Mapping) -> dict:
    """The path as the models read it: bottleneck rate μ (pkts/s), round-trip
    propagation τ, μτ (the BDP in packets), the buffer B, flows (`models.scenario.read_path`)."""
    from tcplab.models.scenario import ScenarioValueError, read_path

    try:
        path = read_path(resolved)
    except (ScenarioValueError, ValueError) as exc:
        raise UserError(f"scenario: {exc}") from None
    out: dict = {"rate_bps": path.rate_bps, "buffer_pkts": path.buffer, "n_tcp": path.n_tcp,
                 "udp_groups": list(path.udp_groups)}
    if path.tcp:
        g = path.tcp[0]
        mu = path.mu(g)
        out.update(packet_size=g.packet_size, mu_pps=mu, tau_s=g.rtt_prop_s, bdp_pkts=mu * g.rtt_prop_s,
                   beta=g.beta, alpha=g.alpha, variant=g.variant, cc=g.cc,
                   same_groups=len({(x.alpha, x.beta, x.rtt_prop_s, x.cc) for x in path.tcp}) == 1)
    return out


def predictions(resolved: Mapping) -> list[dict]:
    """Every closed-form model applied to the scenario, or why it does not apply."""
    from tcplab.models.registry import get_model
    from tcplab.models.scenario import ScenarioValueError, predict_scenario

    try:
        found = predict_scenario(resolved)
    except (ScenarioValueError, ValueError) as exc:
        raise UserError(f"scenario: {exc}") from None
    return [{"model": p.model, "group": p.group, "applies": p.applies, "reason": p.reason,
             "quantity": get_model(p.model).quantity, "inputs": _plain(p.inputs),
             "value": _plain(p.value) if p.applies else None} for p in found]


def fluid_answers(resolved: Mapping, f: Mapping, preds: list[dict]) -> list[dict]:
    """The hybrid AIMD model (paper C) for the scenario's TCP flows, when paper C's
    model applies (the same condition as the aimd-one closed form): one congestion
    event cuts ONE flow (rate-proportional) or ALL flows; E[X]/c and its 95% interval."""
    from tcplab.fluid import fluid

    one = next((p for p in preds if p["model"] == "aimd-one"), None)
    if not one or not one["applies"]:
        return [{"engine": "fluid", "applies": False, "reason": one["reason"] if one else "no TCP flows"}]
    out = []
    n, beta = int(f["n_tcp"]), float(f["beta"])
    events = max(5_000, min(FLUID_EVENTS, 200_000 // max(n, 1)))
    for policy, label in (("rate-proportional", "ONE (rate-proportional)"), ("all", "ALL (synchronized)")):
        t0 = time.perf_counter()
        r = fluid(n=n, beta=beta, policy=policy, events=events, seed=int(resolved.get("seed", 1)),
                  trace=FLUID_TRACE_EVENTS)
        mean = float(r.metrics["mean_aggregate"])
        # the sample path: rows in pairs at each congestion event, before and after the cut;
        # between an after-row and the next before-row the sum grows linearly
        path = r.traces["rates"]
        t = path["time"].to_numpy()
        total = path.drop(columns="time").to_numpy().sum(axis=1)
        start, end = total[1:-1:2], total[2::2]
        dt = t[2::2] - t[1:-1:2]
        k = _k(f)
        util = float((busy_fraction(start, end, k) * dt).sum() / dt.sum()) if dt.sum() > 0 else min(1.0, k * mean)
        out.append({"engine": f"fluid {label}", "applies": True, "policy": policy,
                    "utilization": util, "mean_aggregate": mean, "ci95": float(r.metrics["mean_aggregate_ci95"]),
                    "jain_index": float(r.metrics["jain_index"]),
                    "ms": (time.perf_counter() - t0) * 1e3,
                    "reason": f"hybrid AIMD (paper C), N = {n}, β = {beta:g}, {events} congestion events: "
                              f"E[X]/c = {mean:.4f} of the congestion point μτ + B; the link is busy while the "
                              f"windows cover μτ (k = (μτ + B)/μτ = {k:.3f})"})
    return out


def _payload_share(resolved: Mapping, f: Mapping) -> float:
    """Goodput per byte on the wire of the first TCP group (payload / packet)."""
    for g in resolved.get("flows", {}).values():
        if g.get("kind") == "tcp":
            size = float(g.get("packet_size", f.get("packet_size", 1000)))
            return max(0.0, (size - float(g.get("header_size", 40))) / size)
    return 1.0


def model_rows(resolved: Mapping, f: Mapping, preds: list[dict], fl: list[dict]) -> list[dict]:
    """Table rows (engine, utilization, goodput_bps) for the models that predict a throughput."""
    rows = []
    share = _payload_share(resolved, f)
    by = {(p["model"], p["group"]): p for p in preds if p["applies"]}
    rate = f["rate_bps"]
    for model in ("aimd-one", "aimd-all"):
        p = by.get((model, None))
        if p:
            rows.append({"engine": f"closed form {model}", "utilization": p["value"],
                         "goodput_bps": p["value"] * rate * share, "source": p["reason"]})
    if ("aimd-all", None) in by and f.get("bdp_pkts"):
        # ALL in the window domain: every flow cut together, the windows' sum falls to β of
        # μτ + B and grows back linearly; busy while it covers μτ
        k = _k(f)
        util = float(busy_fraction(f["beta"], 1.0, k))
        rows.append({"engine": "closed form aimd-all with buffer", "utilization": util,
                     "goodput_bps": util * rate * share,
                     "source": f"sum of windows linear from β(μτ + B) to μτ + B, busy while ≥ μτ; k = {k:.3f}"})
    for (model, group), p in by.items():
        if model == "slowstart-throughput":
            util = p["value"] / f["mu_pps"]
            rows.append({"engine": "closed form slowstart-throughput", "utilization": util,
                         "goodput_bps": util * rate * share, "source": "paper D, (W_S + W_E)/(2 RTT)"})
        if model == "bbr-share":
            rows.append({"engine": "closed form bbr-share", "utilization": None, "goodput_bps": None,
                         "share": p["value"], "source": p["reason"]})
    for a in fl:
        if a.get("applies"):
            rows.append({"engine": a["engine"], "utilization": a["utilization"],
                         "goodput_bps": a["utilization"] * rate * share, "jain_index": a["jain_index"],
                         "source": a["reason"]})
    return rows


def overlay(f: Mapping, preds: list[dict]) -> list[dict]:
    """Lines the models draw on the per-flow cwnd plot (packets), each with its source.

    Paper D (one Tahoe flow): W_max = B + μτ + 1, where the window is when the loss is
    detected, and the slow-start threshold after it, W_th = W_max/2. Paper C's AIMD
    flows with synchronized losses (ALL): each of N flows peaks near (B + μτ)/N and
    falls to β of it: the sawtooth's bounds."""
    by = {p["model"]: p for p in preds if p["applies"]}
    out = []
    if "slowstart-cycle" in by and "mu_pps" in f:
        from tcplab.models import slowstart

        info = slowstart.explain_slowstart_cycle(f["buffer_pkts"], f["mu_pps"], f["tau_s"])
        out += [
            {"y": info["w_max"], "label": f"W_max = B + μτ + 1 = {info['w_max']:.1f}", "source": "paper D, slowstart-cycle"},
            {"y": info["w_th"], "label": f"W_th = W_max/2 = {info['w_th']:.1f}", "source": "paper D, slowstart-cycle"},
            {"y": float(info["w_b"]), "label": f"W_B = {info['w_b']} (buffer overflows in slow start)",
             "source": "paper D, slowstart-cycle", "dash": "dot"},
        ]
    elif "aimd-all" in by and "mu_pps" in f and f["n_tcp"] >= 1:
        peak = (f["buffer_pkts"] + f["bdp_pkts"]) / f["n_tcp"]
        out += [
            {"y": peak, "label": f"AIMD peak (B + μτ)/N = {peak:.1f}", "source": "paper C, sawtooth bounds (ALL)"},
            {"y": f["beta"] * peak, "label": f"β·peak = {f['beta'] * peak:.1f}", "source": "paper C, sawtooth bounds (ALL)"},
        ]
    return out


def quick(resolved: Mapping) -> dict:
    """The instant answers for a resolved scenario: facts, closed forms, fluid, overlay."""
    t0 = time.perf_counter()
    f = facts(resolved)
    preds = predictions(resolved)
    t1 = time.perf_counter()
    fl = fluid_answers(resolved, f, preds) if "mu_pps" in f else []
    t2 = time.perf_counter()
    return _plain({"facts": f, "predictions": preds, "fluid": fl, "rows": model_rows(resolved, f, preds, fl)
                   if "mu_pps" in f else [], "overlay": overlay(f, preds),
                   "ms": {"closed_forms": (t1 - t0) * 1e3, "fluid": (t2 - t1) * 1e3}})


def why(f: Mapping, preds: list[dict], run: Mapping | None) -> list[dict]:
    """Short computed sentences about the regime, each with the number it rests on
    and where that number comes from (a model, or the packet run's measurement)."""
    out: list[dict] = []
    by = {p["model"]: p for p in preds if p["applies"]}
    if "bdp_pkts" in f:
        ratio = f["buffer_pkts"] / f["bdp_pkts"] if f["bdp_pkts"] else math.inf
        size = "smaller than" if ratio < 1 else "at least"
        out.append({"text": f"The buffer B = {f['buffer_pkts']} packets is {ratio:.2f} × the bandwidth-delay product "
                            f"μτ = {f['bdp_pkts']:.1f} packets ({size} one BDP; μ = {f['mu_pps']:.0f} packets/s, "
                            f"τ = {f['tau_s'] * 1e3:.0f} ms).", "value": ratio, "source": "buffer-bdp model"})
    if "aimd-one" in by:
        one, all_ = by["aimd-one"]["value"], by.get("aimd-all", {}).get("value")
        txt = (f"Paper C: with one flow cut per congestion event the {f['n_tcp']} AIMD flows fill "
               f"{one:.3f} of the link (Theorem 1)")
        if all_ is not None:
            txt += f"; cut all together, {all_:.3f}"
        out.append({"text": txt + ".", "value": one, "source": "aimd-one / aimd-all models"})
    if "slowstart-cycle" in by:
        out.append({"text": f"Paper D: {by['slowstart-cycle']['reason']}; "
                            f"{by['slowstart-cycle']['value']} slow start(s) per cycle predicted.",
                    "value": by["slowstart-cycle"]["value"], "source": "slowstart-cycle model"})
    if not run:
        return out
    m = run.get("metrics", {})
    util = m.get("bottleneck_utilization")
    if util is not None:
        if util >= 0.97:
            txt = (f"Capacity-limited: the packet engine keeps the bottleneck {util:.1%} busy; "
                   "the windows stay above the pipe's size between losses.")
        else:
            pipe = f" = {f['bdp_pkts']:.0f}" if "bdp_pkts" in f else ""
            txt = (f"Loss-limited: the bottleneck is busy {util:.1%} of the time; after losses the windows "
                   f"fall below the pipe (μτ{pipe} packets) and the link idles.")
        out.append({"text": txt, "value": util, "source": "packet engine: bottleneck_utilization"})
    s = run.get("summary", {})
    stalled = s.get("stalled_share")
    if stalled is not None:
        out.append({"text": f"Timeouts: {m.get('tcp_timeouts', 0)} retransmission timeouts; flows delivered "
                            f"nothing in {stalled:.1%} of their flow-seconds.",
                    "value": stalled, "source": "packet engine: timeouts, per-second goodput"})
    cycles = s.get("slowstart_cycles") or {}
    if "slowstart-cycle" in by and sum(cycles.values()):
        out.append({"text": f"The packet engine's cwnd goes through {cycles.get('single', 0)} single, "
                            f"{cycles.get('double', 0)} double and {cycles.get('triple', 0)} triple slow-start "
                            f"cycles (the model: {by['slowstart-cycle']['value']} per cycle).",
                    "value": cycles.get("triple", 0), "source": "packet engine cwnd, paper D's cycles (metrics.tahoe_cycles)"})
    sync = s.get("synchronization") or {}
    if sync.get("congestion_events") and (f.get("n_tcp") or 0) > 1:
        out.append({"text": f"Synchronization: {sync['congestion_events']} congestion events hit on average "
                            f"{sync['mean_flows_hit']:.2f} of {f.get('n_tcp')} flows (E[M]/N = "
                            f"{sync['mean_fraction_hit']:.2f}; 1/N means one flow per event as Theorem 1 assumes, "
                            "1 means all together as ALL).",
                    "value": sync["mean_fraction_hit"], "source": "packet engine drops, paper C Sec. V.E"})
    udp = m.get("udp_throughput_bps")
    if udp:
        share = udp / f["rate_bps"]
        out.append({"text": f"UDP background takes {share:.1%} of the bottleneck ({udp / 1e6:.3g} Mb/s); "
                            "TCP competes for the rest.", "value": share,
                    "source": "packet engine: udp_throughput_bps"})
    return _plain(out)
