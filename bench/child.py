"""One timed run in a process of its own, so that peak memory is this run's:
`python bench/child.py tcplab|ns2 SCENARIO.json` prints one JSON line.

tcplab: timed in-process around `tcplab.run` (scenario in, a Result with its
metrics out: what a sweep point pays, interpreter start-up excluded; the flow and
link DataFrames are built when first read, after the timing, ~1 ms) after one
tiny warm-up run, so lazy imports are not charged to the scenario; CPU time
is the process's (`time.process_time`). Peak memory:
this process's peak RSS during the run (interpreter, numpy/pandas and the engine;
the peak is reset before the run) and how far the run raised it above the RSS of
the warm interpreter just before.
ns-2: the `ns` process alone (tcplab's export wrote its Tcl; parsing its output
afterwards is not timed); CPU time: that process's user + system time
(RUSAGE_CHILDREN, with the GNU time wrapper's few ms); peak memory: that process's, from GNU time's %M
(`peak_rss` below: rusage of a child started from Python would count the forked
interpreter's pages too, since Linux carries the pre-exec high-water mark over).
"""

from __future__ import annotations

import gc
import json
import os
import resource
import shlex
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "python"))


GNU_TIME = Path("/usr/bin/time")


def _mb(kb: int) -> float:
    return kb / 1024  # Linux reports ru_maxrss in KiB


def _status_kb(field: str) -> int:
    for ln in Path("/proc/self/status").read_text().splitlines():
        if ln.startswith(field + ":"):
            return int(ln.split()[1])
    raise KeyError(field)


def _reset_peak() -> bool:
    """Reset this process's peak RSS (VmHWM) to its current RSS (Linux >= 4.0), so
    that the peak read after the run is the run's, not the imports' high-water mark."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
        return True
    except OSError:
        return False


def peak_rss(cmd: list[str], workdir: Path):
    """(cmd wrapped in GNU time, a function giving its peak RSS in MB afterwards);
    (None, lambda: None) without /usr/bin/time (Debian package `time`)."""
    if not GNU_TIME.exists():
        return None, lambda: None
    out = workdir / "peak-rss.txt"

    def read():
        try:
            return _mb(int(out.read_text().split()[-1]))
        except (OSError, ValueError, IndexError):
            return None

    return [str(GNU_TIME), "-q", "-f", "%M", "-o", str(out)] + cmd, read


def main() -> None:
    sim, path = sys.argv[1], sys.argv[2]
    sc = json.loads(Path(path).read_text())
    if sim == "tcplab":
        import tcplab

        warm = dict(sc, duration="0.1s", warmup="0s")
        tcplab.run(warm)
        gc.collect()
        reset = _reset_peak()
        before = _status_kb("VmRSS") if reset else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        c0, t0 = time.process_time(), time.perf_counter()
        res = tcplab.run(sc)
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        peak = _status_kb("VmHWM") if reset else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        out = {"wall_s": wall, "cpu_s": cpu, "engine_s": res.wall_s,
               "delivered": int(res.flows["delivered_packets"].sum()),
               "events": int(res.metrics["events"]),
               "goodput": res.metrics["normalized_goodput"],
               "peak_rss_mb": _mb(peak), "run_rss_mb": _mb(max(0, peak - before))}
    elif sim == "ns2":
        import tcplab.result
        from tcplab.backends.ns2 import run_ns2

        from tcplab.backends.ns2 import NS_BINARY_ENV, _ns_binary, _package_version

        _package_version()  # its dpkg-query child is not ns-2's CPU time

        with tempfile.TemporaryDirectory(prefix="tcplab-bench-ns2-") as d:
            wrapper, rss = peak_rss([_ns_binary(None)], Path(d))
            if wrapper:
                w = Path(d) / "ns"
                w.write_text("#!/bin/sh\nexec " + " ".join(shlex.quote(x) for x in wrapper) + ' "$@"\n')
                w.chmod(0o755)
                os.environ[NS_BINARY_ENV] = str(w)
            r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
            raw = run_ns2(sc)
            r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
            peak = rss()
        res = tcplab.result.Result.from_raw(raw)
        cpu = (r1.ru_utime + r1.ru_stime) - (r0.ru_utime + r0.ru_stime)
        out = {"wall_s": raw["wall_s"], "cpu_s": cpu, "delivered": int(res.flows["delivered_packets"].sum()),
               "events": None, "goodput": res.metrics["normalized_goodput"], "peak_rss_mb": peak}
    else:
        raise SystemExit(f"unknown simulator {sim!r}")
    print(json.dumps(out))


if __name__ == "__main__":
    main()
