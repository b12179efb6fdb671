"""The ns-2 oracle: run a tcplab scenario in ns-2 2.35 and read back the result.

`export_tcl(scenario)` translates a *resolved* scenario (every default filled
in) into one self-contained ns-2 Tcl script; `run_ns2(scenario)` writes it into
a work directory, runs Debian's `ns` there and parses what the script wrote
into the raw result dict every tcplab engine returns.

The script does no per-packet work in Tcl. Counters are read from ns-2's own
C++ agents and monitors (TCP sender counters, the sink's in-order byte count,
LossMonitor, QueueMonitor) by one Tcl procedure at the end of warm-up, at the
end of the run, and at a few checkpoints in between when a 32-bit ns-2
counter could otherwise wrap. Traces are written by ns-2's own tracing
(`$agent trace cwnd_`, `$ns trace-queue`) when `trace.interval` is 0, or by a
sampler that runs once per interval otherwise, and are parsed with pandas.

One module per job:

* `refuse`: what ns-2 cannot run, refused before anything starts;
* `view`: the export's view of the engine's Plan (`_plan`);
* `export`: the Tcl script (`export_tcl`), and the translation it makes;
* `run`: finding and running `ns` (`run_ns2`);
* `parse`: reading the counters and traces the script wrote;
* `errors`: `Ns2Error` and `Ns2CannotRun`.
"""

from __future__ import annotations

from tcplab.backends.ns2.errors import Ns2CannotRun, Ns2Error
from tcplab.backends.ns2.export import export_tcl
from tcplab.backends.ns2.run import run_ns2

# Private names the bench, the sweep's engine list and the tests import from
# here (as they did before the backend was split into modules).
from tcplab.backends.ns2.export import _errors_seed  # noqa: F401, E402
from tcplab.backends.ns2.parse import _package_version, _unwrap  # noqa: F401, E402
from tcplab.backends.ns2.run import NS_BINARY_ENV, _ns_binary  # noqa: F401, E402
from tcplab.backends.ns2.view import _plan  # noqa: F401, E402

__all__ = [
    "Ns2Error",
    "Ns2CannotRun",
    "run_ns2",
    "export_tcl",
]
