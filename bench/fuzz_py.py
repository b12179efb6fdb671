"""A counting fuzzer for tcplab's Python front: many executions, every one
checked, every finding kept.

    python3 bench/fuzz_py.py --seconds 600                 # every target, 10 minutes each
    python3 bench/fuzz_py.py --target units --execs 1000000
    python3 bench/fuzz_py.py --target overrides --seed 7 --out /tmp/findings

Targets (each an input a user can type, mutated at random from valid seeds):

* ``units``: a unit string ("5ms", "1.5Mbps", "0.4Hz", "125KB") → a finite
  non-negative number or a UserError;
* ``overrides``: a ``--set KEY=VALUE`` string → parsed, applied to a real
  scenario and resolved by the engine → a resolved scenario or a UserError;
* ``plan``: a real scenario with one value replaced by a mutated one → the
  engine's Plan (``_core.plan``) or a UserError;
* ``cli``: an argument list for a subcommand's parser (nothing runs) → parsed,
  or argparse's exit 2.

Anything else (another exception, a hang beyond ``--limit`` seconds in one
execution, a parsed number that is negative or not finite) is a finding: its
input is written to ``--out`` and printed. Hypothesis (tests/test_fuzz_loader.py)
explores structure; this driver makes volume cheap (no shrinking, no database).
"""

from __future__ import annotations

import argparse
import json
import math
import random
import signal
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

SEED_STRINGS = ["5ms", "1.5Mbps", "0.4Hz", "125KB", "10s", "1e-3s", "100kbps", "2min", "0", "1e9s",
                "10000Gbps", "1TB", "0.05Hz", "3.0037s", "1us", "50ns", "1GiB", "7", "-1", "nan"]
SEED_OVERRIDES = ["duration=20s", "warmup=5s", "seed=3", "flows.tcp.count=4", "flows.tcp.variant=sack",
                  "topology.bottleneck.rate=2Mbps", "topology.bottleneck.buffer=30",
                  "topology.bottleneck.delay=10ms", "flows.tcp.start_jitter=1s", "trace.series=[\"cwnd\"]",
                  "flows.tcp.cc=cubic", "flows.tcp.profile=ns2-2001", "measure.reference=free",
                  "topology.bottleneck.queue=red", "flows.tcp.window=64", "flows.tcp.min_rto=0.2s"]
ALPHABET = "0123456789.eE+-_=[]{}\",:abcdefghijklmnopqrstuvwxyzMGKkbpsHzmunµ/ \t\n\\'#%€\x00"


def mutate(rng: random.Random, s: str) -> str:
    """One to four random edits: insert, delete, replace, duplicate a slice, or
    splice in a number from a small set of edge cases."""
    edges = ["0", "-0", "1e308", "1e-308", "1e999", "nan", "inf", "9" * 40, "4294967296",
             "18446744073709551616", "0x10", "1_000", ".", "e", "", " "]
    for _ in range(rng.randint(1, 4)):
        op = rng.randrange(5)
        i = rng.randint(0, len(s))
        if op == 0:
            s = s[:i] + rng.choice(ALPHABET) + s[i:]
        elif op == 1 and s:
            j = rng.randint(i, min(len(s), i + 3))
            s = s[:i] + s[j:]
        elif op == 2 and s:
            i = min(i, len(s) - 1)
            s = s[:i] + rng.choice(ALPHABET) + s[i + 1:]
        elif op == 3 and s:
            j = rng.randint(i, len(s))
            s = s[:j] + s[i:j] + s[j:]
        else:
            s = s[:i] + rng.choice(edges) + s[i:]
    return s[:200]


class Target:
    name = ""

    def __init__(self, rng: random.Random):
        self.rng = rng

    def input(self):
        raise NotImplementedError

    def run(self, x) -> None:
        """Return normally or raise UserError / SystemExit(2); anything else is a finding."""
        raise NotImplementedError


class Units(Target):
    name = "units"

    def __init__(self, rng):
        super().__init__(rng)
        from tcplab import units

        self.parsers = [units.parse_duration, units.parse_rate, units.parse_freq, units.parse_bytes]

    def input(self):
        return self.rng.randrange(4), mutate(self.rng, self.rng.choice(SEED_STRINGS))

    def run(self, x):
        k, s = x
        v = self.parsers[k](s, "fuzz")
        # a float (parse_bytes: a whole number of bytes, an int); limits are the engine's
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not (math.isfinite(v) and v >= 0):
            raise AssertionError(f"parsed to {v!r}")


class Overrides(Target):
    name = "overrides"

    def __init__(self, rng):
        super().__init__(rng)
        from tcplab.scenario import load_scenario

        self.base = load_scenario(ROOT / "scenarios" / "b-dumbbell.toml")

    def input(self):
        return mutate(self.rng, self.rng.choice(SEED_OVERRIDES))

    def run(self, text):
        from tcplab.scenario import apply_overrides, parse_override, resolve

        resolve(apply_overrides(self.base, [parse_override(text)]))


class PlanTarget(Target):
    name = "plan"

    def __init__(self, rng):
        super().__init__(rng)
        from tcplab.scenario import read_toml

        self.files = sorted((ROOT / "scenarios").glob("*.toml"))
        self.raw = [read_toml(p) for p in self.files]

    def input(self):
        sc = json.loads(json.dumps(self.raw[self.rng.randrange(len(self.raw))]))
        paths = []

        def walk(node, path):
            if isinstance(node, dict):
                for k, v in node.items():
                    walk(v, path + [k])
            else:
                paths.append(path)

        walk(sc, [])
        path = self.rng.choice(paths)
        node = sc
        for k in path[:-1]:
            node = node[k]
        old = node[path[-1]]
        text = mutate(self.rng, json.dumps(old) if not isinstance(old, str) else old)
        try:
            node[path[-1]] = json.loads(text)
        except ValueError:
            node[path[-1]] = text
        return sc

    def run(self, sc):
        from tcplab.plan import plan

        plan(sc).engine


class Cli(Target):
    name = "cli"
    COMMANDS = [["run", "scenarios/b-dumbbell.toml"], ["sweep", "sweeps/x.toml"], ["fluid"],
                ["predict", "aimd-one"], ["plot", "runs/a"], ["results", "store"],
                ["export-ns2", "scenarios/b-dumbbell.toml"], ["reproduce", "all"]]
    OPTIONS = ["--set", "--out", "--seed", "--n", "--beta", "--events", "--jobs", "--quick", "--full",
               "--engine", "--start", "--end", "--interval", "--flows", "--force", "--json", "--trace"]

    def __init__(self, rng):
        super().__init__(rng)
        from tcplab.cli import build_parser

        self.parser = build_parser()

    def input(self):
        args = list(self.rng.choice(self.COMMANDS))
        for _ in range(self.rng.randint(0, 4)):
            args.append(self.rng.choice(self.OPTIONS))
            if self.rng.random() < 0.8:
                args.append(mutate(self.rng, self.rng.choice(SEED_STRINGS + SEED_OVERRIDES)))
        return args

    def run(self, args):
        import contextlib
        import io

        with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
            self.parser.parse_args(args)


TARGETS = {t.name: t for t in (Units, Overrides, PlanTarget, Cli)}


class _Hang(Exception):
    pass


def _alarm(signum, frame):
    raise _Hang()


def fuzz(target: Target, execs: int, seconds: float, limit: float, out: Path) -> dict:
    from tcplab.errors import UserError

    signal.signal(signal.SIGALRM, _alarm)
    done = refused = 0
    findings = []
    t0 = time.monotonic()
    while done < execs and time.monotonic() - t0 < seconds:
        x = target.input()
        t1 = time.monotonic()
        try:
            signal.setitimer(signal.ITIMER_REAL, limit)
            try:
                target.run(x)
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
        except _Hang:
            findings.append((x, f"took over {limit} s"))
        except UserError:
            refused += 1
        except SystemExit as e:  # argparse's own errors, or help asked for (-h, -hh, --h…)
            # argparse reads "-hh" as "-h -h" (short flags cluster): help was asked for
            helped = e.code == 0 and isinstance(x, list) and any(
                (a.startswith("-h") and not a.startswith("--"))
                or (len(a) > 2 and "--help".startswith(a)) for a in x)
            if e.code != 2 and not helped:
                findings.append((x, f"SystemExit({e.code})"))
            else:
                refused += 1
        except Exception as e:  # noqa: BLE001 - every other exception is a finding
            findings.append((x, f"{type(e).__name__}: {e}"[:300]))
        else:
            if time.monotonic() - t1 > limit:  # the alarm cannot interrupt the engine's own code
                findings.append((x, f"took {time.monotonic() - t1:.1f} s (over {limit} s)"))
        done += 1
    took = time.monotonic() - t0
    if findings:
        out.mkdir(parents=True, exist_ok=True)
        path = out / f"{target.name}.jsonl"
        with path.open("a") as f:
            for x, why in findings:
                f.write(json.dumps({"input": x, "finding": why}, default=str) + "\n")
    return {"target": target.name, "executions": done, "refused": refused, "findings": len(findings),
            "seconds": round(took, 1), "per_second": round(done / took, 1) if took else 0.0,
            "first": [why for _, why in findings[:5]]}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--target", choices=sorted(TARGETS), action="append",
                    help="a target (repeatable; default: every target)")
    ap.add_argument("--execs", type=int, default=1_000_000, help="executions per target (default 10^6)")
    ap.add_argument("--seconds", type=float, default=3600.0, help="time per target (default 3600)")
    ap.add_argument("--limit", type=float, default=10.0, help="seconds one execution may take (default 10)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", default="fuzz-findings", help="folder for findings (default ./fuzz-findings)")
    args = ap.parse_args(argv)
    sys.path.insert(0, str(ROOT / "python"))
    bad = 0
    for name in args.target or sorted(TARGETS):
        row = fuzz(TARGETS[name](random.Random(args.seed)), args.execs, args.seconds, args.limit,
                   Path(args.out))
        print(json.dumps(row), flush=True)
        bad += row["findings"]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
