"""Running ns-2: `run_ns2(scenario)` writes the exported script into a work
directory, runs Debian's `ns` there and parses what the script wrote."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import threading
import time
from pathlib import Path

from tcplab import progress
from tcplab.backends.ns2.errors import Ns2Error
from tcplab.backends.ns2.export import COUNTERS_FILE, _tcl
from tcplab.backends.ns2.parse import _parse
from tcplab.backends.ns2.view import _plan

#: Environment variable naming the `ns` binary to use instead of the one on PATH.
NS_BINARY_ENV = "TCPLAB_NS2"

#: Default wall-time limit for one ns-2 run, seconds.
DEFAULT_TIMEOUT_S = 3600.0


def _ns_binary(ns_binary: str | None) -> str:
    name = ns_binary or os.environ.get(NS_BINARY_ENV) or "ns"
    path = shutil.which(name)
    if path is None:
        raise Ns2Error(
            f"ns-2 not found: no executable {name!r}"
            + (f" (from ${NS_BINARY_ENV})" if not ns_binary and os.environ.get(NS_BINARY_ENV) else "")
            + "; install it with `apt-get install ns2` or point "
            f"${NS_BINARY_ENV} at an ns-2 2.35 binary")
    return path


#: how many progress lines a watched run prints (see `tcplab.progress`)
PROGRESS_STEPS = 200


def _run_reporting(ns: str, script: str, wd: Path, limit: float, duration_s: float):
    """`subprocess.run` for a watched run: ns-2's `tcplab-progress` lines are passed to
    `tcplab.progress.report` as they come; other output is kept. TimeoutExpired past `limit`."""
    lines: list[str] = []
    expired = threading.Event()
    with open(wd / "ns-stderr.txt", "w+") as err, \
            subprocess.Popen([ns, script], cwd=wd, stdout=subprocess.PIPE, stderr=err, text=True) as p:
        def expire():
            expired.set()
            p.kill()

        timer = threading.Timer(limit, expire)
        timer.start()
        try:
            for line in p.stdout:
                if line.startswith("tcplab-progress "):
                    progress.report(float(line.split()[1]), duration_s)
                else:
                    lines.append(line)
            p.wait()
        finally:
            timer.cancel()
        err.seek(0)
        stderr = err.read()
    if expired.is_set():
        raise subprocess.TimeoutExpired([ns, script], limit)
    return subprocess.CompletedProcess([ns, script], p.returncode, "".join(lines), stderr)


def run_ns2(scenario: dict, workdir: str | None = None, keep: bool = False, *,
            ns_binary: str | None = None, timeout_s: float | None = None) -> dict:
    """Run a resolved scenario in ns-2 and return the raw result dict.

    `workdir`: where to write the script and ns-2's outputs (kept); by default
    a temporary directory, removed afterwards unless `keep`. `ns_binary`
    overrides $TCPLAB_NS2 and PATH; `timeout_s` bounds ns-2's wall time.
    """
    plan = _plan(scenario)
    ns = _ns_binary(ns_binary)
    own_dir = workdir is None
    wd = Path(tempfile.mkdtemp(prefix="tcplab-ns2-") if own_dir else workdir)
    wd.mkdir(parents=True, exist_ok=True)
    try:
        script = wd / "scenario.tcl"
        watched = progress.wanted()
        script.write_text(_tcl(plan, PROGRESS_STEPS if watched else 0))
        limit = DEFAULT_TIMEOUT_S if timeout_s is None else float(timeout_s)
        t0 = time.perf_counter()
        try:
            if watched:
                proc = _run_reporting(ns, script.name, wd, limit, plan.duration_s)
            else:
                proc = subprocess.run([ns, script.name], cwd=wd, capture_output=True,
                                      text=True, timeout=limit)
        except subprocess.TimeoutExpired:
            raise Ns2Error(f"ns-2 did not finish within {limit:g} s "
                           f"(scenario {plan.name!r}; raise timeout_s)") from None
        except OSError as exc:
            raise Ns2Error(f"could not run ns-2 ({ns}): {exc}") from None
        wall_s = time.perf_counter() - t0
        counters = wd / COUNTERS_FILE
        text = counters.read_text() if counters.exists() else ""
        if proc.returncode != 0 or not text.rstrip().endswith("E"):
            tail = "\n".join((proc.stderr or proc.stdout or "").strip().splitlines()[-15:])
            raise Ns2Error(f"ns-2 ({ns}) failed on scenario {plan.name!r} "
                           f"(exit status {proc.returncode}); "
                           f"script kept in {wd if not own_dir or keep else 'a removed temp dir'}:\n{tail}")
        result = _parse(plan, text, wd)
        result["wall_s"] = wall_s
        if keep or not own_dir:
            result["workdir"] = str(wd)
        return result
    finally:
        if own_dir and not keep:
            shutil.rmtree(wd, ignore_errors=True)
