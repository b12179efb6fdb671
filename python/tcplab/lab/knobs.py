"""The lab's controls: the knobs that matter, generated for a scenario.

Each control is a key path of the scenario with its current value (from the
engine's resolution of the scenario, so defaults are the engine's own), its
unit, a range for the slider, and for a choice the values the engine accepts
(asked of the engine: a probe with an unknown value makes its schema list the
variants it knows, `engine_choices`). Which controls exist depends on the
scenario: one set per TCP and per UDP flow group, the bottleneck's on a dumbbell.
Every other key stays editable in the TOML pane.
"""

from __future__ import annotations

import copy
import functools
import re
from typing import Any, Mapping

from tcplab.errors import UserError
from tcplab.units import parse_duration, parse_freq, parse_rate

#: what a probe value is called (never a real variant)
_PROBE = "__tcplab_lab_probe__"

_PROBE_BASE = {
    "duration": "1s",
    "topology": {"bottleneck": {"rate": "1Mbps", "delay": "1ms", "buffer": 10},
                 "access": {"rate": "10Mbps", "delay": "1ms", "buffer": 100},
                 "sink_access": {"rate": "10Mbps", "delay": "1ms", "buffer": 100}},
    "flows": {"tcp": {"kind": "tcp"}, "udp": {"kind": "udp", "rate": "100kbps"}},
}

#: key path in the probe scenario → control name
_PROBED = {
    "variant": ["flows", "tcp", "variant"],
    "cc": ["flows", "tcp", "cc"],
    "profile": ["flows", "tcp", "profile"],
    "queue": ["topology", "bottleneck", "queue"],
    "errors": ["topology", "bottleneck", "errors", "model"],
    "shape": ["flows", "udp", "rate", "shape"],
}


@functools.cache
def engine_choices() -> dict[str, list[str]]:
    """The values the engine's schema accepts for each choice knob, read from its
    own error for an unknown value ("expected one of `a`, `b`")."""
    from tcplab.scenario import resolve

    out = {}
    for name, path in _PROBED.items():
        sc = copy.deepcopy(_PROBE_BASE)
        if name == "shape":
            sc["flows"]["udp"]["rate"] = {"shape": _PROBE}
        else:
            node = sc
            for p in path[:-1]:
                node = node.setdefault(p, {})
            node[path[-1]] = _PROBE
        try:
            resolve(sc)
            found: list[str] = []
        except UserError as exc:
            found = re.findall(r"`([^`]+)`", str(exc).split("expected", 1)[-1])
        out[name] = [v for v in found if v != _PROBE]
    return out


@functools.cache
def reference_defaults() -> dict[str, Any]:
    """The scenario reference's defaults (`tcplab.docs`, docs/scenario-reference.md): generic
    key (flows.FLOW.beta, topology.LINK.queue) → the engine's default, or "required"."""
    from tcplab.docs import REQUIRED, _defaults, _generic

    out: dict[str, Any] = {}
    for k, v in _defaults().items():
        out.setdefault(_generic(k), "required" if v is REQUIRED else v)
    return out


def _reference_key(key: str) -> str:
    from tcplab.docs import _generic

    return _generic(key)


def _get(d: Mapping, path: str, default=None):
    node: Any = d
    for p in path.split("."):
        if not isinstance(node, Mapping) or p not in node:
            return default
        node = node[p]
    return node


def _num(parse, value, fallback=None):
    try:
        return parse(value)
    except Exception:
        return fallback


def controls(resolved: Mapping) -> list[dict]:
    """The controls for a resolved scenario (`tcplab.scenario.resolve`), in display order.

    Each: key, label, section, kind ("number", "choice" or "bool"), value (in the
    control's unit), unit, to (how a value is written into the scenario: "" plain,
    or a unit suffix such as "Mbps"), min, max, step, choices, help."""
    ch = engine_choices()
    out: list[dict] = []
    out.append(dict(key="duration", label="duration", section="run", kind="number", unit="s", to="s",
                    value=_num(parse_duration, resolved.get("duration")), min=1, max=3600, step=1,
                    help="simulated time; results count after the warm-up"))
    out.append(dict(key="seed", label="seed", section="run", kind="number", unit="", to="",
                    value=resolved.get("seed", 1), min=0, max=10**9, step=1, help="random seed"))
    topo = resolved.get("topology", {})
    if topo.get("kind", "dumbbell") == "dumbbell":
        bn = topo.get("bottleneck", {})
        out += [
            dict(key="topology.bottleneck.rate", label="rate", section="bottleneck", kind="number", unit="Mb/s",
                 to="Mbps", value=_num(parse_rate, bn.get("rate"), 0) / 1e6, min=0.01, max=10000, step="any",
                 help="the bottleneck's rate"),
            dict(key="topology.bottleneck.delay", label="delay", section="bottleneck", kind="number", unit="ms",
                 to="ms", value=_num(parse_duration, bn.get("delay"), 0) * 1e3, min=0, max=5000, step="any",
                 help="one-way propagation delay of the bottleneck (the RTT adds the access links, both ways)"),
            dict(key="topology.bottleneck.buffer", label="buffer", section="bottleneck", kind="number",
                 unit="packets", to="", value=bn.get("buffer"), min=0, max=100000, step=1,
                 help="packets that can wait (also settable in × BDP)", bdp=True),
            dict(key="topology.bottleneck.queue", label="queue", section="bottleneck", kind="choice",
                 choices=ch["queue"], value=bn.get("queue", "droptail"), unit="", to="",
                 help="queue discipline"),
        ]
        if bn.get("queue") == "red":
            out.append(dict(key="topology.bottleneck.red.ecn", label="ECN", section="bottleneck", kind="bool",
                            value=bool(_get(bn, "red.ecn", False)), unit="", to="",
                            help="RED marks ECN-capable packets instead of dropping them"))
        errors = bn.get("errors") or {}
        out.append(dict(key="topology.bottleneck.errors.model", label="loss model", section="bottleneck",
                        kind="choice", choices=["none"] + [c for c in ch["errors"] if c != "list"],
                        value=errors.get("model", "none"), unit="", to="", help="random packet loss on the bottleneck"))
        if errors.get("model") == "bernoulli":
            out.append(dict(key="topology.bottleneck.errors.per", label="loss rate", section="bottleneck",
                            kind="number", value=errors.get("per", 0.0), unit="", to="", min=0, max=1,
                            step="any", help="packet error rate"))
    for name, g in resolved.get("flows", {}).items():
        sec = f"flows.{name}"
        base = f"flows.{name}"
        out.append(dict(key=f"{base}.count", label="N flows", section=sec, kind="number", unit="", to="",
                        value=g.get("count", 1), min=1, max=1000, step=1, help="flows in this group"))
        if g.get("kind") == "tcp":
            out += [
                dict(key=f"{base}.cc", label="cc", section=sec, kind="choice", choices=ch["cc"],
                     value=g.get("cc", "reno"), unit="", to="", help="congestion control"),
                dict(key=f"{base}.variant", label="variant", section=sec, kind="choice", choices=ch["variant"],
                     value=g.get("variant"), unit="", to="", help="loss recovery"),
                dict(key=f"{base}.profile", label="profile", section=sec, kind="choice", choices=ch["profile"],
                     value=g.get("profile", "ns2-2.35"), unit="", to="", help="the defaults a TCP starts from"),
                dict(key=f"{base}.alpha", label="α", section=sec, kind="number", unit="pkts/RTT", to="",
                     value=g.get("alpha"), min=0.01, max=100, step="any", help="additive increase"),
                dict(key=f"{base}.beta", label="β", section=sec, kind="number", unit="", to="",
                     value=g.get("beta"), min=0.01, max=0.99, step="any", help="multiplicative decrease"),
            ]
        elif g.get("kind") == "udp":
            rate = g.get("rate")
            shape = rate.get("shape") if isinstance(rate, Mapping) else "constant"
            mean = rate.get("mean") if isinstance(rate, Mapping) else rate
            out.append(dict(key=f"{base}.rate.shape", label="UDP shape", section=sec, kind="choice",
                            choices=["constant"] + [c for c in ch["shape"] if c == "sine"],
                            value=shape, unit="", to="", help="background rate over time"))
            if shape in ("constant", "sine"):
                out.append(dict(key=f"{base}.rate.mean", label="UDP mean", section=sec, kind="number",
                                unit="Mb/s", to="Mbps", value=(_num(parse_rate, mean, 0) or 0) / 1e6,
                                min=0, max=10000, step="any", help="mean rate of the background"))
            if shape == "sine":
                out.append(dict(key=f"{base}.rate.frequency", label="frequency", section=sec, kind="number",
                                unit="Hz", to="Hz", value=_num(parse_freq, rate.get("frequency"), 0),
                                min=0.001, max=1000, step="any", help="frequency of the sine"))
    defaults = reference_defaults()
    for c in out:
        d = defaults.get(_reference_key(c["key"]))
        c["default"] = d
        if d == "required":
            c["help"] = f"{c['help']} (scenario reference: required, no default)"
        elif d is not None:
            c["help"] = f"{c['help']} (scenario reference: default {d})"
    return out


def set_value(doc: dict, key: str, value: Any) -> dict:
    """A copy of `doc` with `key` (a dotted path) set; the control-specific
    rewrites: a UDP rate given as a plain string becomes a table when its shape
    changes, and loss model "none" removes the errors table."""
    doc = copy.deepcopy(doc)
    parts = key.split(".")
    if parts[-2:] == ["errors", "model"] and value == "none":
        node = _get(doc, ".".join(parts[:-2]))
        if isinstance(node, dict):
            node.pop("errors", None)
        return doc
    if len(parts) >= 3 and parts[0] == "flows" and parts[2] == "rate" and len(parts) == 4:
        g = doc.setdefault("flows", {}).setdefault(parts[1], {})
        rate = g.get("rate")
        if not isinstance(rate, dict):
            g["rate"] = rate = {"shape": "constant", "mean": rate if rate is not None else "0bps"}
        if parts[3] == "shape":
            mean = rate.get("mean", "0bps")
            if value == "sine":
                g["rate"] = {"shape": "sine", "mean": mean, "amplitude": rate.get("amplitude", mean),
                             "frequency": rate.get("frequency", "0.4Hz")}
            else:
                g["rate"] = mean if value == "constant" else {"shape": value, "mean": mean}
            return doc
        rate[parts[3]] = value
        if rate.get("shape") == "constant" and set(rate) <= {"shape", "mean"}:
            g["rate"] = rate["mean"]
        return doc
    node = doc
    for p in parts[:-1]:
        nxt = node.get(p)
        if not isinstance(nxt, dict):
            nxt = node[p] = {}
        node = nxt
    node[parts[-1]] = value
    return doc
