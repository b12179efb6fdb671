"""Check that a change to the rate shapes leaves every UDP departure time identical.

A shaped UDP source (sine, sums of sines, piecewise tables, on/off) sends its next
packet when the integral of its rate reaches the packet's size; the departure is
rounded to the ns. This records the departure sequences (integer ns) of a fixed set
of sources with one build and compares them, exactly, with another:

    python3 bench/udp_identical.py record /tmp/udp-baseline.npz
    python3 bench/udp_identical.py compare /tmp/udp-baseline.npz

The set: every shaped UDP flow of scenarios/*.toml and bench/scenarios/*.toml (at
least 1000 s), paper A's reproduce sweeps (A1's frequency grid at 1800 s, A4's link
rates, A6's packet sizes, A2's two-sine plane — clipped sums of sines), clipped single
sines (amplitude above the mean, down to 0.1 % above it, where a dip is shorter than
the zero-crossing search's bracket), unclipped and touching sums of sines, phases,
piecewise tables with and without repeat, and on/off sources. The departures come from
the engine's `udp_departures` (the ignored test `scenario::tests::dump_departures`,
built with cargo; no Python bindings needed).
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "python"))


def _grid(n: int) -> list[float]:
    # as python/tcplab/reproduce/adaptivity/runs.py
    return [float(f"{f:.3g}") for f in np.geomspace(0.05, 10, n)]


def _hz(f: float) -> str:
    return f"{float(f):.3g}Hz"


def _base() -> dict:
    sc = tomllib.loads((ROOT / "scenarios" / "a-sine-background.toml").read_text())
    sc["duration"] = "1800s"
    return sc


def _with_rate(rate, duration="1800s", size=None, extra=None) -> dict:
    sc = _base()
    sc["duration"] = duration
    sc["flows"]["background"]["rate"] = rate
    if size is not None:
        sc["flows"]["background"]["packet_size"] = size
    sc["flows"]["background"].update(extra or {})
    return sc


def _sine(mean, amp, f, phase=None) -> dict:
    r = {"shape": "sine", "mean": f"{mean}Mbps", "amplitude": f"{amp}Mbps", "frequency": _hz(f)}
    if phase is not None:
        r["phase"] = phase
    return r


def _sines(offset, comps) -> dict:
    return {"shape": "sines", "offset": f"{offset}Mbps",
            "components": [{"amplitude": f"{a}Mbps", "frequency": _hz(f), "phase": p} for a, f, p in comps]}


def cases() -> list[tuple[str, dict]]:
    from tcplab.scenario import read_rate_files

    out = []
    for d in ("scenarios", "bench/scenarios"):
        for f in sorted((ROOT / d).glob("*.toml")):
            sc = read_rate_files(tomllib.loads(f.read_text()), f.parent)
            rates = [g.get("rate") for g in sc.get("flows", {}).values() if g.get("kind") == "udp"]
            if any(isinstance(r, dict) for r in rates):
                if float(sc["duration"].rstrip("s")) < 1000:
                    sc["duration"] = "1000s"
                out.append((f"{d}/{f.stem}", sc))
    # paper A, A1: m = a = C/2 over the frequency grid, 30 min
    for f in _grid(30):
        out.append((f"A1 f={f}", _with_rate(_sine(0.5, 0.5, f))))
    # A4: link rate C, background C/2 (1 + sin)
    for c in (2, 5, 10):
        for f in _grid(6):
            out.append((f"A4 C={c} f={f}", _with_rate(_sine(c / 2, c / 2, f))))
    # A6: packet sizes
    for size in (250, 500, 1500):
        for f in _grid(8):
            out.append((f"A6 size={size} f={f}", _with_rate(_sine(0.5, 0.5, f), size=size)))
    # A2: C/4 sin 2πf1t + C/4 sin 2πf2t + C/4, f1 ≤ f2 (clipped sums of sines)
    fs = _grid(8)
    for i, f1 in enumerate(fs):
        for f2 in fs[i:]:
            out.append((f"A2 f1={f1} f2={f2}", _with_rate(_sines(0.25, [(0.25, f1, 0.0), (0.25, f2, 0.0)]))))
    # clipped single sines (a > m), one with a dip shorter than a search bracket
    for amp in (0.5005, 0.502, 0.6, 0.75, 1.0, 2.0):
        for f in (0.05, 0.4, 2.0, 10.0):
            for phase in (0.0, 1.3):
                out.append((f"clipped a={amp} f={f} phase={phase}",
                            _with_rate(_sine(0.5, amp, f, phase), duration="1000s")))
    # m > a, with a phase; a start time inside the run
    out.append(("m>a phase", _with_rate(_sine(0.5, 0.2, 0.7, 2.0), duration="1000s")))
    out.append(("start 3.7s", _with_rate(_sine(0.5, 0.5, 0.4), duration="1000s", extra={"start": "3.7s"})))
    out.append(("jitter", _with_rate(_sine(0.5, 0.5, 0.4), duration="1000s", extra={"send_jitter": "2ms"})))
    # sums of sines: never clipped, touching zero, clipped with phases
    out.append(("sines unclipped", _with_rate(_sines(1.0, [(0.3, 0.4, 0.0), (0.2, 2.0, 0.5)]), duration="1000s")))
    out.append(("sines touching", _with_rate(_sines(0.5, [(0.3, 0.4, 0.0), (0.2, 2.0, 0.5)]), duration="1000s")))
    out.append(("sines clipped 3", _with_rate(
        _sines(0.3, [(0.3, 0.1, 0.2), (0.2, 1.0, 0.5), (0.1, 7.0, 2.0)]), duration="1000s")))
    # piecewise tables and on/off sources
    pts = [["0s", "0.1Mbps"], ["3s", "0.9Mbps"], ["3s", "0.3Mbps"], ["4s", "0.3Mbps"], ["4s", "0Mbps"],
           ["5s", "0Mbps"], ["7s", "0.6Mbps"], ["8s", "0Mbps"]]
    out.append(("piecewise repeat", _with_rate({"shape": "piecewise", "points": pts, "repeat": True}, "1000s")))
    out.append(("piecewise once", _with_rate({"shape": "piecewise", "points": pts + [["9s", "0.4Mbps"]]}, "1000s")))
    for on, off in ((("fixed", "0.3s"), ("fixed", "0.7s")), (("exponential", "1s"), ("exponential", "1s")),
                    (("pareto", "0.5s"), ("exponential", "0.5s"))):
        rate = {"shape": "onoff", "rate": "1Mbps", "on": {"distribution": on[0], "mean": on[1], **({"alpha": 1.5} if on[0] == "pareto" else {})},
                "off": {"distribution": off[0], "mean": off[1]}}
        out.append((f"onoff {on[0]}/{off[0]}", _with_rate(rate, "1000s")))
    return out


def run_all() -> dict[str, np.ndarray]:
    with tempfile.TemporaryDirectory() as tmp:
        cs = cases()
        (Path(tmp) / "cases.json").write_text(json.dumps(cs))
        env = dict(os.environ, TCPLAB_UDP_CASES=str(Path(tmp) / "cases.json"), TCPLAB_UDP_OUT=tmp)
        subprocess.run(["cargo", "test", "-q", "-p", "tcplab-engine", "--lib", "--",
                        "--ignored", "--exact", "scenario::tests::dump_departures"],
                       cwd=ROOT, env=env, check=True, stdout=subprocess.DEVNULL)
        out = {}
        for f in Path(tmp).glob("*.bin"):
            i, flow = (int(x) for x in f.stem.split("_"))
            out[f"{cs[i][0]} #{flow}"] = np.fromfile(f, dtype="<i8")
    if len(out) < len(cs):
        raise SystemExit(f"only {len(out)} departure sequences for {len(cs)} cases")
    return out


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 2 or argv[0] not in ("record", "compare"):
        print(__doc__)
        return 2
    mode, path = argv
    got = run_all()
    n = sum(len(v) for v in got.values())
    if mode == "record":
        np.savez_compressed(path, **got)
        print(f"recorded {len(got)} sequences, {n} departures -> {path}")
        return 0
    want = dict(np.load(path))
    bad = 0
    for k in sorted(set(want) | set(got)):
        a, b = want.get(k), got.get(k)
        if a is None or b is None:
            print(f"{k}: only in {'new' if a is None else 'recorded'}")
            bad += 1
            continue
        if len(a) == len(b) and np.array_equal(a, b):
            continue
        bad += 1
        m = min(len(a), len(b))
        diff = np.nonzero(a[:m] != b[:m])[0]
        first = int(diff[0]) if len(diff) else m
        d = np.abs(a[:m] - b[:m])
        print(f"{k}: {len(a)} vs {len(b)} departures, {len(diff)} differ, first at #{first} "
              f"(t = {a[first] / 1e9 if first < len(a) else float('nan'):.9f} s), max |diff| {int(d.max())} ns")
    print(f"{len(got)} sequences, {n} departures: " + ("all identical" if not bad else f"{bad} differ"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
