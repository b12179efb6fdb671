"""The C allocator's thresholds for a process that runs many simulations.

A run allocates its trace columns, the engine's rings and the arrays built from
them, frees them, and the next run allocates as much again. glibc's malloc
returns large freed blocks to the system (blocks above its mmap threshold are
unmapped at once; the heap's free top is trimmed above its trim threshold), so
the next run maps the memory again and the kernel zeroes every page on first
touch: `reproduce all --full` spent 8 % of its CPU in the kernel, most of it
zeroing pages. :func:`keep_freed_memory` raises both thresholds, so freed blocks
are reused by the next allocation instead (on `reproduce D --claims D1 --quick`:
359 k page faults and 1.4 s of system time before, 50 k and 0.4 s after; peak
memory about the same).

Only the command line calls it, for its own process: a program importing
tcplab keeps its allocator as it set it.
"""

from __future__ import annotations

import ctypes
import os

# mallopt(3) parameters (malloc.h)
M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3

# Blocks up to this size come from the heap (glibc's largest allowed value on
# 64-bit, HEAP_MAX_SIZE / 2); larger ones are still mapped and unmapped.
MMAP_THRESHOLD = 32 << 20
# Free memory kept at the top of a heap before it is given back.
TRIM_THRESHOLD = 128 << 20


def keep_freed_memory() -> bool:
    """Raise glibc malloc's mmap and trim thresholds for this process (see the
    module docstring). Returns whether both were set: False on a C library other
    than glibc, where nothing is changed."""
    try:
        if not os.confstr("CS_GNU_LIBC_VERSION"):
            return False
        libc = ctypes.CDLL(None)
        mallopt = libc.mallopt
    except (OSError, ValueError, AttributeError):
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    # mallopt returns 1 on success; setting either turns off glibc's dynamic
    # adjustment of both, so they are set together
    return bool(mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD)) & bool(
        mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD)
    )
