"""The command line keeps freed memory for the next run (tcplab.malloc)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

# A worker thread (as `reproduce`'s are) allocates sixteen 1 MB blocks, writing
# every page, and frees them, nine times; the child prints the minor page faults.
# With glibc's defaults the thread's heap is given back and mapped again each
# round (a fault per page); kept, the first round's pages are reused.
CHILD = """
import resource, sys, threading
from tcplab.malloc import keep_freed_memory
if sys.argv[1] == "keep":
    assert keep_freed_memory()
def work():
    for _ in range(9):
        blocks = [bytearray(1 << 20) for _ in range(16)]  # zero-filled
        del blocks
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
t = threading.Thread(target=work)
t.start()
t.join()
print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
"""


def _faults(mode: str) -> int:
    out = subprocess.run(
        [sys.executable, "-c", CHILD, mode], capture_output=True, text=True, check=True
    )
    return int(out.stdout)


@pytest.mark.skipif(not os.confstr("CS_GNU_LIBC_VERSION"), reason="glibc's mallopt only")
def test_freed_blocks_are_reused_not_mapped_again():
    pages = 9 * 16 * (1 << 20) // 4096
    # the premise: by default most rounds fault their pages in again
    assert _faults("default") > pages // 2
    # kept: about the first round's pages only
    assert _faults("keep") < pages // 5


def test_the_command_line_keeps_freed_memory(monkeypatch, capsys):
    import tcplab.malloc
    from tcplab.cli import main

    calls = []
    monkeypatch.setattr(tcplab.malloc, "keep_freed_memory", lambda: calls.append(1) or True)
    assert main(["plan", "scenarios/a-sine-background.toml"]) == 0
    assert calls == [1]
