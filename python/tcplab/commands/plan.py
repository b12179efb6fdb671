"""`tcplab plan SCENARIO`: what a run of the scenario will do, resolved.

    tcplab plan scenarios/parking-lot.toml
    tcplab plan scenarios/b-join.toml --set seed=7 --json > plan.json

Every engine runs the same Plan: the scenario's defaults filled in, units
turned into bit/s, bytes and nanoseconds, the topology laid out into links and
routes, start jitter, join and leave schedules and outages drawn, RED's
parameters derived. The summary lists the links, each flow's instants and
route, and each flow group's parameters; `--json` prints the whole Plan (the
engine's `_core.plan`), the same numbers the packet, ns-2 and linux engines
read.
"""

from __future__ import annotations

import argparse
import json
import sys


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "plan",
        help="what a run will do: links, routes, flow instants, parameters",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("scenario", help="scenario TOML file (see scenarios/)")
    p.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                   help="override a scenario value by dotted path, e.g. seed=7 (repeatable)")
    p.add_argument("--json", action="store_true", help="print the whole Plan as JSON")
    p.add_argument("--flows", type=int, default=20, metavar="N",
                   help="list at most N flows in the summary (default 20; the JSON has all)")
    p.set_defaults(func=main)


def main(args) -> int:
    from tcplab.errors import UserError
    from tcplab.plan import plan
    from tcplab.scenario import load_scenario

    if args.flows < 0:
        raise UserError(f"--flows: expected a whole number >= 0, got {args.flows}")
    p = plan(load_scenario(args.scenario, args.overrides)).engine
    if args.json:
        json.dump(p, sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(summary(p, args.flows))
    return 0


def _dur(ns: int) -> str:
    return f"{ns / 1e9:.9g} s"


def _rate(bps: float) -> str:
    from tcplab.labels import rate_text

    return rate_text(bps)


def _queue(q: dict) -> str:
    if q["kind"] == "red":
        return (f"RED min {q['min_thresh']:g} max {q['max_thresh']:g} max_p {q['max_p']:g} "
                f"w {q['weight']:g}{' gentle' if q['gentle'] else ''} ({q['mode']} mode)")
    if q["kind"] == "threshold":
        return f"threshold {q['threshold_pkts']} pkts, immunity {_dur(q['immunity_ns'])}, {q['selection']}"
    return "droptail"


def _shape(s: dict) -> str:
    kind = s["kind"]
    if kind == "constant":
        return f"constant {_rate(s['rate_bps'])}"
    if kind == "sine":
        return (f"sine {_rate(s['mean_bps'])} ± {_rate(s['amplitude_bps'])} "
                f"at {s['frequency_hz']:g} Hz")
    if kind == "sines":
        return f"sines: offset {_rate(s['offset_bps'])}, {len(s['components'])} components"
    if kind == "piecewise":
        return f"piecewise, {len(s['points'])} points{' (repeating)' if s['repeat'] else ''}"
    return (f"on/off {_rate(s['rate_bps'])}: on {s['on']['distribution']} {_dur(s['on']['mean_ns'])}, "
            f"off {s['off']['distribution']} {_dur(s['off']['mean_ns'])}")


def summary(p: dict, max_flows: int = 20) -> str:
    """The Plan as text: links, flows with instants and routes, group parameters."""
    out: list[str] = []
    w = out.append
    w(f"{p['topology']}: run to {_dur(p['end_ns'])}, measured after {_dur(p['warmup_ns'])}, "
      f"seed {p['seed']}, reference rate {_rate(p['reference_bps'])}")
    names = {link["id"]: link["name"] for link in p["links"]}
    w("")
    w("links (each duplex link once; the reverse direction has the same numbers):")
    rows: dict[tuple[str, str], list[str]] = {}  # (kind of link, numbers) -> indices
    for link in p["links"]:
        if link["direction"] != "forward":
            continue
        extra = ""
        if link["errors"]:
            e = {k: v for k, v in link["errors"].items() if k != "model"}
            extra += f", errors {link['errors']['model']} {e}"
        down = sum(a < p["end_ns"] for a, _ in link["outages"])  # the Plan adds the first after the end
        if down:
            extra += f", {down} outages"
        desc = (f"{_rate(link['rate_bps']):>12}  {_dur(link['delay_ns']):>12}  "
                f"buffer {link['buffer_pkts']} pkts, {_queue(link['queue'])}{extra}")
        # one line for a flow's own links that equal the previous flows' ones
        if link["flow"] is not None:
            rows.setdefault((link["role"], desc), []).append(str(link["flow"]))
        else:
            rows[(link["name"], desc)] = []
    for (name, desc), idx in rows.items():
        label = name if not idx else f"{name}[{idx[0]}]" if len(idx) == 1 else \
            f"{name}[{idx[0]}…{idx[-1]}] ×{len(idx)}" if len(idx) == int(idx[-1]) - int(idx[0]) + 1 \
            else f"{name}[{','.join(idx)}]"
        w(f"  {label:<22} {desc}")
    flows = p["flows"]
    w("")
    w(f"flows ({len(flows)}):")
    for f in flows[:max_flows]:
        route = " → ".join(names[i] for i in f["route"]["forward"])
        never = "" if f["start_ns"] < f["stop_ns"] else "  (never active)"
        w(f"  {f['id']:>4} {f['group']:<12} {f['kind']}  {_dur(f['start_ns'])} → {_dur(f['stop_ns'])}"
          f"  via {route}{never}")
    if len(flows) > max_flows:
        w(f"  … {len(flows) - max_flows} more (--flows N, or --json)")
    w("")
    w("flow groups:")
    seen: set[str] = set()
    for f in flows:
        if f["group"] in seen:
            continue
        seen.add(f["group"])
        if f["tcp"]:
            t = f["tcp"]
            w(f"  {f['group']}: TCP {t['variant']} cc {t['cc']} profile {t['profile']}, "
              f"{f['packet_size']} B packets ({t['payload_bytes']} B payload), window {t['window']}, "
              f"initial cwnd {t['initial_cwnd']}, α {t['alpha']:g} β {t['beta']:g}, "
              f"min RTO {_dur(t['min_rto_ns'])}, tick {_dur(t['tick_ns'])}"
              + (", delayed acks" if t["delayed_ack"] else "") + (", SYN" if t["syn"] else ""))
            if f["app"]:
                a = f["app"]
                w(f"    application: CBR {_rate(a['rate_bps'])}, reader {a['read_bytes']} B "
                  f"every {_dur(a['interval_ns'])}")
        else:
            u = f["udp"]
            w(f"  {f['group']}: UDP {f['packet_size']} B packets, {_shape(u['shape'])}, "
              f"mean {_rate(u['mean_bps'])}"
              + (f", send jitter up to {_dur(u['send_jitter_ns'])}" if u["send_jitter_ns"] else ""))
    return "\n".join(out) + "\n"
