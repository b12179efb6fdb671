"""Traces are observations: a run's metrics are the same with every trace series on,
sampled or not, as without traces — all but `events`, the engine's count of its own
work: a traced run takes more events (a series on turns off the shortcuts that spare
senders and UDP sources an event per packet, a sampled one adds its ticks).

`tcplab reproduce` holds traced runs and sweep points under different keys (a traced
run's scenario sets `trace.series`). A traced run cannot give a sweep point its row:
the row's `events` would differ (issue 30, stop 31)."""

import math

import pytest

from tcplab.api import TRACE_SERIES, run
from tcplab.resources import data_dir
from tcplab.sweep.engines import flatten

#: the scenarios `tcplab reproduce` runs traced, shortened
SCENARIOS = ["a-sine-background", "a-two-sines", "b-friendliness", "b-handoff", "b-join", "b-leave",
             "b-wireless-per", "b-realtime", "c-parallel-sack", "c-red", "c-threshold-dropper",
             "d-tahoe-satellite"]


def _same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return a == b


@pytest.mark.parametrize("name", SCENARIOS)
def test_tracing_changes_no_metric(name):
    path = data_dir() / "scenarios" / f"{name}.toml"
    short = {"duration": "40s", "warmup": "10s"}
    plain = flatten(run(path, overrides=short).metrics)
    for trace, interval in ((TRACE_SERIES, None), (("cwnd", "drops"), None), (TRACE_SERIES, "0.5s")):
        traced = flatten(run(path, overrides=short, trace=trace, trace_interval=interval).metrics)
        assert traced.keys() == plain.keys()
        diff = {k: (plain[k], traced[k]) for k in plain if k != "events" and not _same(plain[k], traced[k])}
        assert not diff, f"{name}, trace {trace} every {interval or 'change'}: {diff}"
