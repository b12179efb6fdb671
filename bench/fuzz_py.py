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
  or argparse's exit 2;
* ``cache``: a reproduce cache entry with a file's bytes edited (or filed under
  another key) → the very run stored, or the entry moved aside (never another
  run's numbers);
* ``store``: a sweep results part with its bytes edited → the rows written, or
  the part moved aside.

Anything else (another exception, a hang beyond ``--limit`` seconds in one
execution, a parsed number that is negative or not finite) is a finding: its
input is written to ``--out`` and printed. Hypothesis (tests/test_fuzz_loader.py)
explores structure; this driver makes volume cheap (no shrinking, no database).
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import io
import json
import math
import random
import shutil
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


def edit_bytes(rng: random.Random, data: bytes) -> bytes:
    """One to three random edits of a file's bytes: cut, flip, insert, overwrite, empty."""
    for _ in range(rng.randint(1, 3)):
        i = rng.randint(0, max(len(data) - 1, 0))
        op = rng.randrange(5)
        chunk = rng.randbytes(rng.randint(1, 16))
        if op == 0:
            data = data[:i]
        elif op == 1 and data:
            data = data[:i] + bytes([data[i] ^ rng.randint(1, 255)]) + data[i + 1:]
        elif op == 2:
            data = data[:i] + chunk + data[i:]
        elif op == 3:
            data = data[:i] + chunk + data[i + len(chunk):]
        else:
            data = b"" if rng.random() < 0.5 else rng.randbytes(len(data))
    return data


class CacheTarget(Target):
    """A reproduce cache entry (`tcplab.reproduce._save_run`) with one file's bytes
    edited, or filed under another key: `_cached_run` must give back the very run
    stored, or move the entry aside and return None (computed again)."""

    name = "cache"
    FILES = ["run.json", "tcp.parquet", "flows.parquet", "links.parquet"]

    def __init__(self, rng):
        super().__init__(rng)
        import tempfile

        import numpy as np
        import pandas as pd

        from tcplab.reproduce import _save_run
        from tcplab.result import Result

        self.tmp = Path(tempfile.mkdtemp(prefix="tcplab-fuzz-cache-"))
        atexit.register(shutil.rmtree, self.tmp, True)
        self.result = Result("packet", "test", {"name": "fuzz", "seed": 1},
                             pd.DataFrame({"id": [0, 1], "goodput_bps": [1.5, 3.0]}),
                             pd.DataFrame({"name": ["bottleneck"], "drops": [3]}), {"tag": 1.5},
                             traces={"tcp": pd.DataFrame({"t": np.arange(200) * 0.5, "cwnd": np.arange(200) % 9})})
        self.template = self.tmp / "template" / "0123456789abcdef"
        _save_run(self.result, self.template, key=self.template.name)
        self.files = {n: (self.template / n).read_bytes() for n in self.FILES}
        self.n = 0

    def input(self):
        name = self.rng.choice(self.FILES)
        return name, edit_bytes(self.rng, self.files[name]), self.rng.random() < 0.1

    def run(self, x):
        import shutil

        from tcplab.reproduce import _cached_run

        name, data, other_key = x
        self.n += 1
        cache = self.tmp / f"c{self.n}"
        key = "fedcba9876543210" if other_key else self.template.name
        where = cache / "runs" / key
        shutil.copytree(self.template, where)
        (where / name).write_bytes(data)
        try:
            with contextlib.redirect_stderr(io.StringIO()):  # the one-line notice of each refusal
                got = _cached_run(where, key, cache)
            if got is None:
                if where.exists() or not (cache / "quarantine" / key).is_dir():
                    raise AssertionError("a refused entry was not moved aside")
            elif other_key:
                raise AssertionError("served under another key")
            elif not (got.metrics == self.result.metrics and got.flows.equals(self.result.flows)
                      and got.traces["tcp"].equals(self.result.traces["tcp"])):
                raise AssertionError("served something other than what was stored")
        finally:
            shutil.rmtree(cache, ignore_errors=True)


class StoreTarget(Target):
    """A sweep results part (`tcplab.sweep.store.Store.write_batch`) with its bytes
    edited: the store reads exactly the rows written, or moves the part aside."""

    name = "store"

    def __init__(self, rng):
        super().__init__(rng)
        import tempfile

        import pyarrow.parquet as pq

        from tcplab.sweep.store import Store

        self.tmp = Path(tempfile.mkdtemp(prefix="tcplab-fuzz-store-"))
        atexit.register(shutil.rmtree, self.tmp, True)
        rows = [{"key": f"k{i}", "beta": 0.5 + i / 10, "replication": 0, "seed": 2**64 - 1 - i, "engine": "fluid",
                 "status": "ok" if i % 3 else "failed", "error": None if i % 3 else "boom", "wall_s": 0.01 * i,
                 "mean_aggregate": 0.8 + i / 100, "scenario": json.dumps({"n": 2}),
                 # an axis of tables (a rate shape): a struct with a list of structs
                 "rate": {"shape": "sines", "components": [{"frequency": f"{i}Hz"}] * (i % 3)}}
                for i in range(6)]
        self.part = Store(self.tmp / "template").write_batch(rows, {"engine": "fluid"})
        if Store(self.tmp / "template").files() != [self.part]:
            raise AssertionError("a part as written does not prove its content")
        self.data = self.part.read_bytes()
        self.table = pq.read_table(self.part).replace_schema_metadata(None)
        self.n = 0

    def input(self):
        return edit_bytes(self.rng, self.data)

    def run(self, data):
        import shutil

        import pyarrow.parquet as pq

        from tcplab.sweep.store import Store

        self.n += 1
        root = self.tmp / f"s{self.n}"
        (root / "store").mkdir(parents=True)
        part = root / "store" / self.part.name
        part.write_bytes(data)
        try:
            with contextlib.redirect_stderr(io.StringIO()):
                files = Store(root).files()
            if files:
                if not pq.read_table(files[0]).replace_schema_metadata(None).equals(self.table):
                    raise AssertionError("read rows other than those written")
            elif part.exists() or not (root / "store" / "quarantine" / part.name).is_file():
                raise AssertionError("a refused part was not moved aside")
        finally:
            shutil.rmtree(root, ignore_errors=True)


TARGETS = {t.name: t for t in (Units, Overrides, PlanTarget, Cli, CacheTarget, StoreTarget)}


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
