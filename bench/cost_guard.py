"""The cost guard: instructions per delivered packet on cut-down bench scenarios,
held against the budget committed in bench/cost-budget.json.

    python3 bench/cost_guard.py              # check (CI runs this): exit 1 over budget
    python3 bench/cost_guard.py --update "why the cost moved"   # rewrite the budget

Instructions, counted by valgrind (cachegrind, no cache simulation), do not depend
on what else the machine is doing, so a 2 % rise is a change in the code, not noise:
the check fails when a case costs more than its budget by more than the budget
file's tolerance (2 %). A change that is meant to cost more updates the budget in
the same commit, with the reason (`--update`, which keeps every case's history of
reasons). A case that got more than 5 % cheaper is reported, so the gain can be
locked in by updating the budget.

The cases are the bench scenarios cut to seconds of valgrind each (the whole guard
takes about a minute on 2 cores), the Linux profile's CUBIC and BBR on the
loaded SACK case, whose per-ack work the ns-2 profile does not reach, and (d), a
sine-shaped UDP background beside one Reno flow (paper A's runs).
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
import tomllib
from datetime import date
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from instructions import ROOT, build, count  # noqa: E402

BUDGET = ROOT / "bench" / "cost-budget.json"
CUT = {  # scenario -> (duration, warm-up): long enough that set-up is under 1 % of the count
    "a_reno_1mbps": ("300s", "10s"),
    "b_sack10_10mbps": ("60s", "10s"),
    "c_reno100_100mbps": ("5s", "1s"),
    "d_sine_background": ("500s", "20s"),
}
LINUX = {"flows.sack.profile": "linux"}
CASES = {
    "a_reno_1mbps": ("a_reno_1mbps", {}),
    "b_sack10_10mbps": ("b_sack10_10mbps", {}),
    "c_reno100_100mbps": ("c_reno100_100mbps", {}),
    "b_sack10_10mbps+cubic-linux": ("b_sack10_10mbps", dict(LINUX, **{"flows.sack.cc": "cubic"})),
    "b_sack10_10mbps+bbr-linux": ("b_sack10_10mbps", dict(LINUX, **{"flows.sack.cc": "bbr"})),
    # a shaped UDP source beside one Reno flow: the sine's departure solve, UDP's sends
    "d_sine_background": ("d_sine_background", {}),
}


def scenario(name: str) -> dict:
    base, sets = CASES[name]
    sc = tomllib.loads((ROOT / "bench" / "scenarios" / f"{base}.toml").read_text())
    sc["duration"], sc["warmup"] = CUT[base]
    for key, value in sets.items():
        d = sc
        *head, last = key.split(".")
        for part in head:
            d = d.setdefault(part, {})
        d[last] = value
    return copy.deepcopy(sc)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--update", metavar="REASON", help="rewrite the budget with this run's costs and the reason")
    ap.add_argument("--only", default="", help="comma-separated case names")
    args = ap.parse_args(argv)
    budget = json.loads(BUDGET.read_text()) if BUDGET.is_file() else {"tolerance": 0.02, "cases": {}}
    tol = float(budget.get("tolerance", 0.02))
    names = [n for n in (args.only.split(",") if args.only else CASES) if n]
    exe = build()
    over, measured = [], {}
    print(f"{'case':32s} {'instr/pkt':>10s} {'budget':>10s} {'change':>8s}")
    for name in names:
        row = count(exe, scenario(name))
        measured[name] = row
        want = budget["cases"].get(name, {}).get("per_packet")
        change = (row["per_packet"] / want - 1) if want else float("nan")
        flag = ""
        if want and change > tol:
            over.append(name)
            flag = "  OVER BUDGET"
        elif want and change < -0.05:
            flag = "  cheaper: lock it in with --update"
        print(f"{name:32s} {row['per_packet']:10.0f} {want or float('nan'):10.0f} {change:+8.1%}{flag}", flush=True)
    if args.update:
        for name, row in measured.items():
            case = budget["cases"].setdefault(name, {})
            case.setdefault("history", [])
            case["per_packet"] = round(row["per_packet"], 1)
            case["history"].append({"date": date.today().isoformat(), "per_packet": case["per_packet"],
                                    "why": args.update})
        BUDGET.write_text(json.dumps(budget, indent=2, ensure_ascii=False) + "\n")
        print(f"wrote {BUDGET}")
        return 0
    missing = [n for n in names if n not in budget["cases"]]
    if missing:
        print(f"no budget for {', '.join(missing)}: run with --update \"reason\"", file=sys.stderr)
        return 1
    if over:
        print(f"over budget by more than {tol:.0%}: {', '.join(over)}. If the cost is meant, update "
              "bench/cost-budget.json in the same commit: python3 bench/cost_guard.py --update \"why\"",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
