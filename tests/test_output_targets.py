"""Every command that writes answers an output it cannot write with one clear error:
exit 2, the path and the cause named, no traceback, nothing partial left behind.

Each command's output option is pointed at a read-only file system, a full one,
a path a file stands in the way of, and a dangling symbolic link. The file systems
are small tmpfs mounts (root only: chmod does not stop root from writing), unmounted
after each test.
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCENARIO = ROOT / "scenarios" / "a-constant-udp.toml"
TINY_SWEEP = ROOT / "tests" / "hostile" / "_tiny-sweep.toml"

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="mounting a read-only or a full tmpfs needs root")


def tcplab(*args, cwd, timeout=300):
    return subprocess.run([sys.executable, "-m", "tcplab.cli", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, timeout=timeout, env=dict(os.environ, COLUMNS="200"))


def mount(where: Path, options: str) -> None:
    where.mkdir(parents=True, exist_ok=True)
    p = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(where)], capture_output=True, text=True)
    if p.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {p.stderr.strip()}")


def umount(where: Path) -> None:
    subprocess.run(["umount", "-l", str(where)], capture_output=True)


def fill(where: Path, leave_bytes: int = 0) -> None:
    """Fill the tmpfs at `where` until `leave_bytes` (about) are free."""
    st = os.statvfs(where)
    free = st.f_bavail * st.f_frsize
    with open(where / "fill", "wb") as fh:
        try:
            fh.write(b"\0" * max(0, free - leave_bytes))
        except OSError:
            pass


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    """A run folder with traces (for plot) and a sweep folder (for results)."""
    base = tmp_path_factory.mktemp("inputs")
    p = tcplab("run", SCENARIO, "--set", "duration=150s", "--trace", "cwnd", "--out", base / "run", cwd=base)
    assert p.returncode == 0, p.stderr
    p = tcplab("sweep", TINY_SWEEP, "--out", base / "sw", "--no-plot", "--jobs", "1", cwd=base)
    assert p.returncode == 0, p.stderr
    return base


#: command → (arguments with {T} the output, "dir" or "file": what the output is)
COMMANDS = {
    "run": (["run", SCENARIO, "--set", "duration=150s", "--out", "{T}"], "dir"),
    "run-trace": (["run", SCENARIO, "--set", "duration=150s", "--trace", "cwnd,queue", "--out", "{T}"], "dir"),
    "compare": (["compare", SCENARIO, "--set", "duration=150s", "--engines", "packet", "--out", "{T}"], "dir"),
    "plot": (["plot", "{inputs}/run", "--out", "{T}.png"], "file"),
    "sweep": (["sweep", TINY_SWEEP, "--out", "{T}", "--no-plot", "--jobs", "1"], "dir"),
    "reproduce": (["reproduce", "D", "--claims", "D3", "--tiny", "--out", "{T}", "--cache", "{tmp}/cache"], "dir"),
    "fluid-trace": (["fluid", "--n", "2", "--events", "2000", "--trace", "{T}.csv"], "file"),
    "export-ns2": (["export-ns2", SCENARIO, "--out", "{T}.tcl"], "file"),
    "results-export": (["results", "{inputs}/sw", "--csv", "{T}.csv"], "file"),
}
TARGETS = ["read-only", "full", "file-in-the-way", "dangling-link"]


def snapshot(folder: Path) -> dict:
    return {p.relative_to(folder).as_posix(): (p.read_bytes() if p.is_file() and not p.is_symlink() else
                                               os.readlink(p) if p.is_symlink() else None)
            for p in sorted(folder.rglob("*"))}


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("command", list(COMMANDS))
def test_an_output_that_cannot_be_written_is_a_clear_error(command, target, inputs, tmp_path):
    args, kind = COMMANDS[command]
    place = tmp_path / "place"
    place.mkdir()
    mounted = None
    if target == "read-only":
        mounted = place / "ro"
        mount(mounted, "ro,size=1m")
        t = mounted / "out"
    elif target == "full":
        mounted = place / "full"
        mount(mounted, "size=256k")
        fill(mounted)
        t = mounted / "out"
    elif target == "file-in-the-way":
        (place / "afile").write_text("a user's file\n")
        # a folder output where a file stands; a file output under a file
        t = place / "afile" if kind == "dir" else place / "afile" / "out"
    else:
        suffix = {"plot": ".png", "fluid-trace": ".csv", "export-ns2": ".tcl", "results-export": ".csv"}
        name = "link" + (suffix.get(command, "") if kind == "file" else "")
        (place / name).symlink_to(place / "missing" / "target")
        t = place / "link"
    try:
        before = snapshot(place)
        words = [str(a).format(T=t, inputs=inputs, tmp=tmp_path) for a in args]
        p = tcplab(*words, cwd=tmp_path)
        said = p.stderr + p.stdout
        assert "Traceback" not in said, said[-3000:]
        assert p.returncode in (1, 2), f"exit {p.returncode}\n{said[-2000:]}"
        assert str(t) in p.stderr or t.name in p.stderr, f"the path is not named:\n{p.stderr[-2000:]}"
        assert snapshot(place) == before, "nothing written, nothing partial left, the user's file untouched"
        assert not (place / "missing").exists(), "a dangling link's target is not created"
    finally:
        if mounted is not None:
            umount(mounted)


@pytest.mark.parametrize("command", ["run-trace", "fluid-trace", "sweep"])
def test_a_disk_that_fills_during_the_write_leaves_nothing_partial(command, inputs, tmp_path):
    """The free-space check passes (a few kB are free) but the write runs out of space
    (--force skips the estimate): the error names the cause, and no file is left that
    looks complete."""
    args = {
        "run-trace": ["run", SCENARIO, "--set", "duration=200s", "--trace", "cwnd,queue,seq", "--force",
                      "--out", "{T}"],
        "fluid-trace": ["fluid", "--n", "4", "--events", "40000", "--trace", "{T}.csv", "--trace-events", "40000"],
        "sweep": ["sweep", "{tmp}/many.toml", "--out", "{T}", "--no-plot", "--jobs", "1", "--batch", "1"],
    }[command]
    # 40 points, a part each (about 10 kB): more than the 96 kB left
    betas = ", ".join(f"{0.3 + i * 0.01:.2f}" for i in range(40))
    (tmp_path / "many.toml").write_text(f'name = "many"\nengine = "fluid"\nscenario = {{ n = 2, events = 500 }}\n'
                                        f"[axes]\nbeta = [{betas}]\n")
    mounted = tmp_path / "full"
    mount(mounted, "size=1m")
    try:
        fill(mounted, leave_bytes=96 << 10)
        before = snapshot(mounted)
        t = mounted / "out"
        p = tcplab(*[str(a).format(T=t, tmp=tmp_path) for a in args], cwd=tmp_path)
        said = p.stderr + p.stdout
        assert "Traceback" not in said, said[-3000:]
        assert p.returncode in (1, 2), f"exit {p.returncode}\n{said[-2000:]}"
        assert "No space left on device" in p.stderr and str(t) in p.stderr, p.stderr[-2000:]
        after = snapshot(mounted)
        if command == "sweep":
            # whole parts may stay (they are results, and a re-run resumes from them): no temporary file
            assert not [n for n in after if n.endswith(".tmp") or "tcplab-tmp" in n], after.keys()
            assert "interrupted" not in p.stderr
        else:
            assert after == before, "no partial output left"
    finally:
        umount(mounted)


def test_sweep_into_a_file_or_a_folder_whose_store_is_a_file(tmp_path):
    (tmp_path / "afile").write_text("mine\n")
    p = tcplab("sweep", TINY_SWEEP, "--out", tmp_path / "afile", "--no-plot", cwd=tmp_path)
    assert p.returncode == 2 and "Traceback" not in p.stderr and "not a folder" in p.stderr, p.stderr
    assert (tmp_path / "afile").read_text() == "mine\n"
    (tmp_path / "sw").mkdir()
    (tmp_path / "sw" / "store").write_text("mine\n")
    p = tcplab("sweep", TINY_SWEEP, "--out", tmp_path / "sw", "--no-plot", cwd=tmp_path)
    assert p.returncode == 2 and "Traceback" not in p.stderr and "store" in p.stderr, p.stderr
    assert sorted(x.name for x in (tmp_path / "sw").iterdir()) == ["store"]
