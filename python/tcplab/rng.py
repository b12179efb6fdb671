"""splitmix64, as the engine's random streams seed themselves
(crates/rng): used where Python must derive seeds the same way (sweep
points). Flow start times and outage schedules are not redrawn in Python:
exporters ask the engine (`flow_times`, `link_outages`)."""

from __future__ import annotations

_M = (1 << 64) - 1


def _splitmix64(x: int) -> tuple[int, int]:
    x = (x + 0x9E3779B97F4A7C15) & _M
    z = x
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _M
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _M
    return x, z ^ (z >> 31)
