"""Ctrl-C and SIGTERM: a stopped command is not a finished one.

Python turns Ctrl-C (SIGINT) into `KeyboardInterrupt`; `handle_sigterm` makes
SIGTERM raise `Terminated`, a `KeyboardInterrupt` too, so that one `except` or
`finally` cleans up after either (temporary files removed, what was computed
whole kept) and nothing built from partial data is written. A command then exits
130 (SIGINT) or 143 (SIGTERM), as a shell reports a process killed by the signal
(`exit_code`). The packet engine polls for pending signals as it runs, so both
reach it within milliseconds.
"""

from __future__ import annotations

import contextlib
import signal
import threading


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where the program was (`handle_sigterm`)."""

    signum = signal.SIGTERM


def exit_code(exc: BaseException) -> int:
    """130 for Ctrl-C, 143 for SIGTERM (128 + the signal's number)."""
    return 128 + int(getattr(exc, "signum", signal.SIGINT))


def signal_name(exc: BaseException) -> str:
    return "SIGTERM" if exit_code(exc) == 143 else "Ctrl-C"


def _raise_terminated(signum, frame):
    raise Terminated()


@contextlib.contextmanager
def handle_sigterm():
    """While inside, SIGTERM raises `Terminated` in the main thread (elsewhere: no change)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _raise_terminated)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
