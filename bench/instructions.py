"""Instruction counts of the packet engine on the bench scenarios — a cost
measure that does not depend on what else the machine is doing (wall time on a
shared machine is noise; executed instructions are repeatable).

    python3 bench/instructions.py                 # the three bench scenarios, full length
    python3 bench/instructions.py --only b_sack10_10mbps --profile /tmp/cg.out
    python3 bench/instructions.py --features no-probes   # probes compiled out
    python3 bench/instructions.py --only b_sack10_10mbps --set flows.sack.cc=cubic   # CUBIC vs Reno

Runs `valgrind --tool=cachegrind --cache-sim=no` (or callgrind with --profile,
whose output `callgrind_annotate` reads) on the `run_scenario` example. Prints
per scenario: instructions, events, delivered packets (measurement window), and
instructions per delivered packet and per event. The whole process is counted
(JSON parsing and set-up included; under 1 % of these runs).
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = ["a_reno_1mbps", "b_sack10_10mbps", "c_reno100_100mbps"]


def build(features: str = "") -> Path:
    """Build the `run_scenario` example (release; with cargo `features` in a target
    directory of their own) and return its path."""
    target = ROOT / "target" / ("instr-" + features if features else "release")
    cmd = ["cargo", "build", "--release", "-q", "-p", "tcplab-engine", "--example", "run_scenario"]
    if features:
        cmd += ["--features", features, "--target-dir", str(target.parent / ("instr-" + features))]
        exe = target / "release" / "examples" / "run_scenario"
    else:
        exe = target / "examples" / "run_scenario"
    subprocess.run(cmd, cwd=ROOT, check=True)
    return exe


def count(exe: Path, scenario: dict, profile: str | None = None) -> dict:
    """Run `scenario` (a dict) under valgrind (cachegrind without cache simulation, or
    callgrind writing `profile`): instructions, events, delivered packets (measurement
    window), and instructions per delivered packet and per event."""
    with tempfile.TemporaryDirectory() as tmp:
        src, dst = Path(tmp) / "sc.json", Path(tmp) / "out.json"
        src.write_text(json.dumps(scenario))
        if profile:
            vg = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={profile}"]
        else:
            vg = ["valgrind", "--tool=cachegrind", "--cache-sim=no", f"--cachegrind-out-file={tmp}/cg.out"]
        p = subprocess.run(vg + [str(exe), str(src), "--summary", str(dst)],
                           capture_output=True, text=True, check=True)
        m = re.search(r"(?:I\s+refs|Collected)\s*:\s*([\d,]+)", p.stderr)
        instr = int(m.group(1).replace(",", ""))
        summary = json.loads(dst.read_text())["summary"]
    delivered = sum(f["delivered_packets"] for f in summary["flows"])
    return {"instructions": instr, "events": summary["events"], "delivered": delivered,
            "per_packet": instr / delivered, "per_event": instr / summary["events"]}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", default="", help="comma-separated scenario names")
    ap.add_argument("--profile", default=None, metavar="FILE",
                    help="run callgrind and write its profile here (one scenario: use --only)")
    ap.add_argument("--features", default="", help="cargo features of tcplab-engine for this build")
    ap.add_argument("--json", default=None, metavar="FILE", help="also write the rows as JSON")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                    help="change a scenario key (dotted path; the value read as TOML), e.g. flows.sack.cc=cubic")
    args = ap.parse_args(argv)
    sets = []
    for kv in args.set:
        key, sep, value = kv.partition("=")
        if not sep:
            ap.error(f"--set {kv!r}: expected KEY=VALUE")
        sets.append((key.split("."), tomllib.loads(f"v = {value}")["v"]))
    exe = build(args.features)
    names = [n for n in (args.only.split(",") if args.only else SCENARIOS) if n]
    rows = []
    for name in names:
        sc = tomllib.loads((ROOT / "bench" / "scenarios" / f"{name}.toml").read_text())
        for path, value in sets:
            d = sc
            for part in path[:-1]:
                d = d.setdefault(part, {})
            d[path[-1]] = value
        row = dict(scenario=name, **count(exe, sc, profile=args.profile))
        rows.append(row)
        print(f"{name:20s} {row['instructions'] / 1e6:9.1f} M instr  {row['events']:>9d} events  "
              f"{row['delivered']:>9d} pkts  {row['per_packet']:7.0f} instr/pkt  "
              f"{row['per_event']:6.0f} instr/event", flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
