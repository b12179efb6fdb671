"""`tcplab linux cleanup`: remove what linux-engine runs killed without a
chance to clean up (SIGKILL, a crash) left behind: their network namespaces
(tl-snd-/tl-rcv-<pid>-...), with the TUN devices in them, and their
temporary folders (tcplab-linux-<pid>-...), where the owner process is gone.
Every linux run does the same sweep before it starts."""

from __future__ import annotations

from tcplab.errors import UserError


def register(sub) -> None:
    p = sub.add_parser("linux", help="housekeeping of the linux engine", description=__doc__)
    lsub = p.add_subparsers(dest="linux_command", metavar="ACTION", required=True)
    c = lsub.add_parser("cleanup", help="remove namespaces and folders left by killed runs",
                        description=__doc__)
    c.set_defaults(func=cleanup)


def cleanup(args) -> int:
    import os

    from tcplab.backends.linux import cleanup_stale

    if os.geteuid() != 0:
        raise UserError("linux cleanup: needs root (it deletes network namespaces)")
    removed = cleanup_stale()
    for r in removed:
        print(f"removed {r}")
    if not removed:
        print("nothing to clean up")
    return 0
