"""htsim (csg-htsim) as a second point of comparison: a dumbbell twin built outside the
repository (how: bench/NOTES.md, "htsim twin"), pointed to by $TCPLAB_HTSIM or --htsim.

The twin takes the dumbbell's numbers on its command line and prints `delivered N`
(packets the sinks acknowledged cumulatively). It runs htsim's own TCP (NewReno-like,
no SACK), so it delivers different packets than tcplab's; the comparison is per
delivered packet. `lean` drops the access links (one queue and one pipe each way):
htsim's cheapest form of the same bottleneck.
"""

from __future__ import annotations

import os
import resource
import shutil
import subprocess
import time
from pathlib import Path

ENV = "TCPLAB_HTSIM"


class Unavailable(Exception):
    pass


def binary(given: str | None = None) -> Path:
    path = given or os.environ.get(ENV)
    if not path:
        raise Unavailable(f"no htsim twin (set ${ENV} or --htsim; bench/NOTES.md says how to build it)")
    p = Path(path)
    if not (p.is_file() and os.access(p, os.X_OK)):
        found = shutil.which(path)
        if not found:
            raise Unavailable(f"htsim twin {path!r} is not an executable file")
        p = Path(found)
    return p


def args_of(sc: dict, lean: bool) -> list[str]:
    """The twin's arguments for a resolved tcplab dumbbell of one TCP group."""
    from tcplab.units import parse_duration, parse_rate

    topo = sc["topology"]
    (group,) = [g for g in sc["flows"].values() if g.get("kind") == "tcp"]
    bn, acc = topo["bottleneck"], topo["access"]

    def ms(d):
        return f"{parse_duration(d) * 1e3:g}"

    def mbps(r):
        return f"{parse_rate(r) / 1e6:g}"

    out = ["-n", str(int(group.get("count", 1))), "-rate", mbps(bn["rate"]),
           "-delay", ms(bn["delay"]), "-buffer", str(int(bn["buffer"])),
           "-access-rate", mbps(acc["rate"]), "-access-delay", ms(acc["delay"]),
           "-time", f"{parse_duration(sc['duration']):g}"]
    return out + (["-lean"] if lean else [])


def run(sc: dict, lean: bool = True, given: str | None = None) -> dict:
    """One run of the twin: wall and CPU time of its process, packets delivered."""
    exe = binary(given)
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run([str(exe)] + args_of(sc, lean), capture_output=True, text=True, timeout=3600)
    wall = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise RuntimeError(f"htsim twin failed: {(proc.stderr.strip().splitlines() or ['?'])[-1]}")
    delivered = next(int(ln.split()[1]) for ln in proc.stdout.splitlines() if ln.startswith("delivered "))
    return {"wall_s": wall, "cpu_s": (r1.ru_utime + r1.ru_stime) - (r0.ru_utime + r0.ru_stime),
            "delivered": delivered}
