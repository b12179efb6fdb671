"""ns-3 twin of the bench scenarios: build bench/ns3/dumbbell.cc on first use
(g++ against Debian's libns3-dev 3.37), write its plan from a resolved scenario
(the same start times and UDP departure times the ns-2 export uses), run it.

`available()` says why not when ns-3 cannot be used here; the suite then reports
ns-3 as unavailable with that reason.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import shutil
import subprocess
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SOURCE = HERE / "ns3" / "dumbbell.cc"
BUILD_DIR = HERE / "results" / ".build"       # gitignored with bench/results/
HEADER = Path("/usr/include/ns3/core-module.h")
LIBS = ["ns3-core", "ns3-network", "ns3-internet", "ns3-point-to-point",
        "ns3-applications", "ns3-traffic-control", "ns3-nix-vector-routing"]


class Unavailable(Exception):
    """ns-3 cannot run this here (the message says why)."""


def _version() -> str | None:
    try:
        r = subprocess.run(["dpkg-query", "-W", "-f", "${Version}", "libns3-dev"],
                           capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return r.stdout.strip() or None if r.returncode == 0 else None


@functools.lru_cache(maxsize=None)
def binary() -> Path:
    """The compiled twin, built once per source version (raises Unavailable)."""
    if not HEADER.exists():
        raise Unavailable("libns3-dev is not installed (apt-get install -y libns3-dev)")
    gxx = shutil.which("g++")
    if gxx is None:
        raise Unavailable("no g++ to build bench/ns3/dumbbell.cc")
    digest = hashlib.sha256(SOURCE.read_bytes()).hexdigest()[:12]
    exe = BUILD_DIR / f"dumbbell-{digest}"
    if exe.exists():
        return exe
    BUILD_DIR.mkdir(parents=True, exist_ok=True)
    # Link the ns-3 libraries by name: Debian's .pc files also name libgsl.so, whose
    # development symlink is not installed with libns3-dev (and ns-3 does not need it here).
    cmd = [gxx, "-O2", "-std=c++17", "-o", str(exe) + ".tmp", str(SOURCE)] + [f"-l{x}" for x in LIBS]
    print(f"(building the ns-3 twin: {' '.join(cmd[:4])} ... {SOURCE.name})", flush=True)
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        err = [ln for ln in r.stderr.splitlines() if "error" in ln][:5]
        raise Unavailable("bench/ns3/dumbbell.cc did not build: " + " | ".join(err))
    os.replace(str(exe) + ".tmp", exe)
    return exe


def version() -> str:
    return _version() or "?"


def write_plan(scenario: dict, workdir: Path) -> Path:
    """The plan file for `scenario` (resolved); raises Unavailable for what the
    twin does not model."""
    from tcplab.backends.ns2 import Ns2Error, _plan
    from tcplab.scenario import _core

    try:
        plan = _plan(scenario)
    except Ns2Error as exc:  # the ns-2 export's own limits are the twin's too
        raise Unavailable(str(exc).split("\n")[0]) from None
    lines = [f"duration {plan.duration_s!r}", f"seed {plan.seed}",
             f"bottleneck {plan.bottleneck.rate_bps!r} {plan.bottleneck.delay_s!r} "
             f"{plan.bottleneck.buffer_pkts}"]
    links = [plan.bottleneck] + [x for f in plan.flows for x in (f.access, f.sink_access)]
    odd = sorted({x.queue for x in links if x.queue != "droptail"})
    if odd:
        raise Unavailable(f"queue {', '.join(odd)} is not modelled in the ns-3 twin (DropTail only)")
    if plan.bottleneck.per > 0:
        raise Unavailable("errors on the bottleneck are not modelled in the ns-3 twin")
    variants = set()
    for f in plan.flows:
        times = "-"
        if f.kind == "udp":
            import numpy as np

            raw = _core().udp_departures(json.dumps(plan.scenario), int(f.id))
            t = np.frombuffer(raw, dtype="<i8") / 1e9
            path = workdir / f"udp-{f.id}.txt"
            path.write_text("\n".join(repr(float(x)) for x in t) + "\n")
            times = str(path)
            variant = "udp"
        else:
            variant = f.variant
            variants.add(variant)
            if variant not in ("reno", "newreno", "sack"):
                raise Unavailable(f"TCP variant {variant!r} has no ns-3 counterpart here")
        a, s = f.access, f.sink_access
        if a.per > 0:
            raise Unavailable("errors on access links are not modelled in the ns-3 twin")
        lines.append(" ".join(str(x) for x in (
            "flow", f.kind, variant, repr(f.start_s), repr(f.stop_s), f.packet_size,
            repr(a.rate_bps), repr(a.delay_s), a.buffer_pkts,
            repr(s.rate_bps), repr(s.delay_s), s.buffer_pkts, repr(s.per), times)))
    if len(variants) > 1:
        raise Unavailable("more than one TCP variant in a run")
    path = workdir / "plan.txt"
    path.write_text("\n".join(lines) + "\n")
    return path


def run(plan_path: Path) -> dict:
    """Run the twin on a plan as a child process: wall time of the whole process
    (set-up included, as for ns-2), its CPU time (wait4), its peak RSS (GNU time's
    %M), and what it printed."""
    from child import peak_rss

    exe = binary()
    cmd, rss = peak_rss([str(exe), str(plan_path)], plan_path.parent)
    out_path, err_path = plan_path.with_suffix(".out"), plan_path.with_suffix(".err")
    with open(out_path, "w") as out, open(err_path, "w") as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd or [str(exe), str(plan_path)], stdout=out, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)  # includes the twin reaped by GNU time
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise RuntimeError(f"ns-3 twin failed (exit {proc.returncode}): "
                           f"{err_path.read_text().strip()[-500:]}")
    head = out_path.read_text().splitlines()[0].split()
    kv = dict(zip(head[2::2], head[3::2]))
    return {"wall_s": wall, "cpu_s": usage.ru_utime + usage.ru_stime, "events": int(kv["events"]),
            "setup_s": float(kv["setup_s"]), "run_s": float(kv["run_s"]),
            "delivered": int(kv["delivered"]), "peak_rss_mb": rss()}
