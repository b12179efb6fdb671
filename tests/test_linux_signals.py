"""The linux engine leaves nothing behind, however its run ends: SIGINT,
SIGTERM and SIGHUP (the terminal closed) stop the run and clean up at once;
after SIGKILL, its tcplab-emu processes die with it (PR_SET_PDEATHSIG) and
the next sweep (`tcplab linux cleanup`, or any linux run) removes its
namespaces, with their TUN devices, and its temporary folder.

Needs root, /dev/net/tun and network namespaces; skipped with the reason elsewhere."""

from __future__ import annotations

import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from tcplab.backends import linux

ROOT = Path(__file__).resolve().parent.parent
WHY_NOT = linux.available()
pytestmark = pytest.mark.skipif(WHY_NOT is not None, reason=f"linux engine unavailable: {WHY_NOT}")


def namespaces(pid: int) -> list[str]:
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    names = [line.split()[0] for line in out.splitlines() if line.split()]
    return [n for n in names if n.startswith(linux.NS_PREFIXES) and n.split("-")[2] == str(pid)]


def emulators(pid: int) -> list[int]:
    """tcplab-emu processes started by `pid` (their environment names it)."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            if not (proc / "exe").resolve().name == "tcplab-emu":
                continue
            env = (proc / "environ").read_bytes().split(b"\0")
        except OSError:
            continue
        if f"TCPLAB_PARENT_PID={pid}".encode() in env:
            found.append(int(proc.name))
    return found


def folders(pid: int) -> list[Path]:
    return list(Path(tempfile.gettempdir()).glob(f"{linux.DIR_PREFIX}{pid}-*"))


def alive(pids: list[int]) -> list[int]:
    out = []
    for p in pids:
        try:
            state = Path(f"/proc/{p}/stat").read_text().split(")")[-1].split()[0]
        except OSError:
            continue
        if state != "Z":
            out.append(p)
    return out


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGKILL],
                         ids=lambda s: s.name)
def test_a_signal_leaves_nothing_behind(sig):
    p = subprocess.Popen([sys.executable, "-m", "tcplab.cli", "run", str(ROOT / "scenarios" / "linux-reno.toml"),
                          "--engine", "linux", "--set", "duration=30s", "--set", "warmup=1s"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
                         start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        # wait until the run is underway: both namespaces, all three emulators, its folder
        while time.monotonic() < deadline and p.poll() is None:
            if len(namespaces(p.pid)) == 2 and len(emulators(p.pid)) == 3 and folders(p.pid):
                break
            time.sleep(0.1)
        assert p.poll() is None, p.stderr.read()
        emus = emulators(p.pid)
        assert len(emus) == 3 and len(namespaces(p.pid)) == 2 and folders(p.pid)
        time.sleep(0.5)
        p.send_signal(sig)
        rc = p.wait(timeout=30)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    if sig == signal.SIGKILL:
        assert rc == -signal.SIGKILL
        # the processes die with their parent at once; the rest waits for the next sweep
        deadline = time.monotonic() + 5
        while alive(emus) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not alive(emus), "tcplab-emu outlived a SIGKILLed run"
        assert namespaces(p.pid) and folders(p.pid), "expected leftovers for the sweep to remove"
        r = subprocess.run([sys.executable, "-m", "tcplab.cli", "linux", "cleanup"], capture_output=True,
                           text=True, cwd=ROOT)
        assert r.returncode == 0, r.stderr
        assert f"tl-snd-{p.pid}-" in r.stdout and f"{linux.DIR_PREFIX}{p.pid}-" in r.stdout
    else:
        assert rc == 130, p.stderr.read()
        assert not alive(emus)
    assert namespaces(p.pid) == []
    assert not alive(emus)
    assert folders(p.pid) == []


def test_cleanup_keeps_what_a_live_process_owns_and_what_is_not_tcplabs(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    mine = tmp_path / f"{linux.DIR_PREFIX}1-abc"  # pid 1 is always alive
    other = tmp_path / f"{linux.DIR_PREFIX}notapid-abc"
    user = tmp_path / "tcplab-linux-report.txt"
    gone = tmp_path / f"{linux.DIR_PREFIX}99999999-xyz"  # beyond pid_max: never running
    for d in (mine, other, gone):
        d.mkdir()
    user.write_text("a user's file")
    removed = linux.cleanup_stale()
    assert str(gone) in removed and not gone.exists()
    assert mine.exists() and other.exists() and user.exists()
