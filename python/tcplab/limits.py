"""What this machine can hold: the memory budget a run is checked against
before it starts, so that an absurd input is refused with a message instead
of an abort on allocation."""

from __future__ import annotations

import resource


def memory_budget_bytes() -> int:
    """Memory a run may plan to use: the smaller of the memory available now
    (/proc/meminfo MemAvailable) and the process's address-space limit
    (RLIMIT_AS), less a quarter for the interpreter and the libraries."""
    budget = None
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    budget = int(line.split()[1]) * 1024
                    break
    except (OSError, ValueError, IndexError):
        pass
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    if soft != resource.RLIM_INFINITY:
        budget = soft if budget is None else min(budget, soft)
    if budget is None:
        budget = 4 << 30
    return budget * 3 // 4


def human_bytes(n: float) -> str:
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n:.0f} B"
