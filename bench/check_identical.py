"""Check that an engine change leaves results bit-identical.

Runs a fixed set of scenarios through the compiled engine (the `run_scenario`
example, no Python bindings needed) and records, per scenario, the whole run
summary (per-flow delivered packets and bytes, drops, retransmissions, timeouts,
per-link counters, ...) and a digest of every trace column. Record once from
the baseline build, then compare after each optimization:

    python3 bench/check_identical.py record /tmp/speed-baseline.json
    python3 bench/check_identical.py compare /tmp/speed-baseline.json

The same set trains the profile-guided build (scripts/pgo.sh): `train EXE` runs
every case through an instrumented `run_scenario`, then paper A's sines replayed
(`train_replays`), and keeps nothing; `--exe EXE`
after `record` or `compare` runs another build of the example instead of
building target/release's.

The set: the three bench scenarios and every scenarios/*.toml at full length,
plus variants that reach code the others do not (NewReno, Tahoe, BBR and
CUBIC with Linux's defaults on the SACK case, delayed acks with a SYN, and
runs with every trace series on, sampled and on every change). The event count is reported but may differ (it is a cost,
not a result); everything else must be equal.
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "target" / "release" / "examples" / "run_scenario"
ALL_TRACES = ["cwnd", "inflight", "seq", "queue", "drops", "udp"]


def _set(d: dict, path: str, value) -> None:
    *head, last = path.split(".")
    for part in head:
        d = d.setdefault(part, {})
    d[last] = value


def cases() -> list[tuple[str, dict]]:
    out = []
    for f in sorted((ROOT / "bench" / "scenarios").glob("*.toml")):
        out.append((f"bench/{f.stem}", tomllib.loads(f.read_text())))
    for f in sorted((ROOT / "scenarios").glob("*.toml")):
        out.append((f"scenarios/{f.stem}", tomllib.loads(f.read_text())))
    base = {name: sc for name, sc in out}
    variants = [
        ("b+newreno", "bench/b_sack10_10mbps", {"flows.sack.variant": "newreno"}),
        ("b+tahoe", "bench/b_sack10_10mbps", {"flows.sack.variant": "tahoe"}),
        ("c+delack+syn", "bench/c_reno100_100mbps",
         {"duration": "30s", "flows.reno.delayed_ack": True, "flows.reno.syn": True}),
        ("sack+delack+syn", "scenarios/c-parallel-sack",
         {"duration": "200s", "flows.sack.delayed_ack": True, "flows.sack.syn": True}),
        ("a-sine+traces", "scenarios/a-sine-background",
         {"duration": "200s", "trace.series": ALL_TRACES}),
        ("sack+traces-sampled", "scenarios/c-parallel-sack",
         {"duration": "100s", "trace.series": ALL_TRACES, "trace.interval": "0.1s"}),
        ("b-per+traces", "scenarios/b-wireless-per",
         {"duration": "20s", "trace.series": ALL_TRACES}),
        # today's TCP where it works hardest: ten flows in a 20-packet buffer
        # keep SACK recovery, RACK, the rate sampler and the pacer busy
        ("b+bbr-linux", "bench/b_sack10_10mbps",
         {"duration": "120s", "flows.sack.profile": "linux", "flows.sack.cc": "bbr"}),
        ("b+cubic-linux", "bench/b_sack10_10mbps",
         {"duration": "120s", "flows.sack.profile": "linux", "flows.sack.cc": "cubic"}),
        ("b+bbr-linux+traces", "bench/b_sack10_10mbps",
         {"duration": "30s", "flows.sack.profile": "linux", "flows.sack.cc": "bbr",
          "trace.series": ALL_TRACES}),
    ]
    for name, src, sets in variants:
        sc = copy.deepcopy(base[src])
        for k, v in sets.items():
            _set(sc, k, v)
        out.append((name, sc))
    return out


def build() -> None:
    subprocess.run(["cargo", "build", "--release", "-q", "-p", "tcplab-engine",
                    "--example", "run_scenario"], cwd=ROOT, check=True)


def run_all(only: set[str] | None = None, exe: Path | None = None) -> dict:
    """Every case's summary, run by `exe` (default: the example, built first)."""
    if exe is None:
        build()
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, sc in cases():
            if only and name not in only:
                continue
            src = Path(tmp) / "sc.json"
            dst = Path(tmp) / "out.json"
            src.write_text(json.dumps(sc))
            r = subprocess.run([str(exe or EXAMPLE), str(src), "--summary", str(dst)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            if r.returncode != 0:
                # A piecewise rate with `file` is resolved by the Python loader
                # only; the example (engine alone) refuses it. Skip, say why.
                if "trace file is read by tcplab's scenario loader" in r.stderr:
                    print(f"  skipped {name}: its piecewise `file` is resolved only by "
                          "the Python loader, which this script does not use",
                          file=sys.stderr, flush=True)
                    continue
                sys.stderr.write(r.stderr)
                raise subprocess.CalledProcessError(r.returncode, r.args)
            results[name] = json.loads(dst.read_text())
            print(f"  ran {name}", file=sys.stderr, flush=True)
    return results


def compare(base: dict, new: dict) -> list[str]:
    problems = []
    for name, b in base.items():
        n = new.get(name)
        if n is None:
            problems.append(f"{name}: missing")
            continue
        be, ne = b["summary"].pop("events"), n["summary"].pop("events")
        if b != n:
            for key in ("flows", "links"):
                for i, (x, y) in enumerate(zip(b["summary"][key], n["summary"][key])):
                    if x != y:
                        diff = {k: (x[k], y.get(k)) for k in x if x[k] != y.get(k)}
                        problems.append(f"{name}: {key}[{i}] differs: {diff}")
                        break
            if b["traces"] != n["traces"]:
                problems.append(f"{name}: traces differ")
            if not problems or not problems[-1].startswith(name):
                problems.append(f"{name}: summary differs")
        else:
            note = "" if be == ne else f" (events {be} -> {ne})"
            print(f"  identical: {name}{note}")
    return problems


def train_replays(exe: Path) -> None:
    """The profile's share of paper A as `tcplab reproduce` runs it: one process runs
    a sweep's points one after another, so a sine's departures are solved once and
    replayed after (traffic/schedule.rs). Each case here runs three times in one
    process (`--repeat 3`: solve, record, replay); one at paper A's 10 Mb/s links.
    Without these the profile never sees a replay, and A's runs gained ~1 % against
    ~8 % with them (bench/NOTES.md, "Profile-guided builds")."""
    base = dict(cases())
    fast = copy.deepcopy(base["scenarios/a-sine-background"])
    for link in ("bottleneck", "access", "sink_access"):
        fast["topology"][link]["rate"] = "10Mbps"
    fast["flows"]["background"]["rate"] = {"shape": "sine", "mean": "5Mbps", "amplitude": "5Mbps",
                                           "frequency": "2Hz"}
    runs = [base["scenarios/a-sine-background"], base["scenarios/a-two-sines"], fast]
    with tempfile.TemporaryDirectory() as tmp:
        for sc in runs:
            src = Path(tmp) / "sc.json"
            src.write_text(json.dumps(sc))
            subprocess.run([str(exe), str(src), "--summary", str(Path(tmp) / "out.json"), "--repeat", "3"],
                           stdout=subprocess.DEVNULL, check=True)
            print(f"  ran {sc['name']} three times in one process", file=sys.stderr, flush=True)


def main(argv: list[str]) -> int:
    if len(argv) < 2 or argv[0] not in ("record", "compare", "train"):
        print(__doc__)
        return 2
    if argv[0] == "train":
        run_all(exe=Path(argv[1]))
        train_replays(Path(argv[1]))
        return 0
    exe = None
    if "--exe" in argv:  # another build of the example (scripts/pgo.sh's, say)
        i = argv.index("--exe")
        exe, argv = Path(argv[i + 1]), argv[:i] + argv[i + 2:]
    only = set(argv[2:]) or None
    if argv[0] == "record":
        Path(argv[1]).write_text(json.dumps(run_all(only, exe), indent=1) + "\n")
        print(f"recorded {argv[1]}")
        return 0
    base = json.loads(Path(argv[1]).read_text())
    if only:
        base = {k: v for k, v in base.items() if k in only}
    problems = compare(base, run_all(set(base), exe))
    for p in problems:
        print("DIFFERENT:", p)
    print("all identical" if not problems else f"{len(problems)} scenario(s) differ")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
