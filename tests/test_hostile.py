"""The hostile-input corpus (tests/hostile/): every case runs the CLI in a
subprocess under a time limit and a memory limit (RLIMIT_AS), and must end as
its header says — the exit code, each `names` text in the message, no
traceback, and, for a refused input (exit 2), nothing written.

A case is one file whose first lines are `# key: value` headers (the rest is
the case's content: a scenario, a sweep, a CSV, bytes; a `.cli` file has only
headers). Keys (see tests/hostile/README.md):

    args:     the tcplab arguments (shell words; {case} {tmp} {scenarios} {hostile} are replaced)
    exit:     the expected exit code (default 2)
    names:    a text the message (stderr, or stdout) must contain; repeatable
    setup:    `tcplab ARGS` | `copy SRC DST` | `truncate PATH BYTES` | `write PATH TEXT` | `link PATH TARGET`;
              repeatable, in order (truncate and write take a glob pattern: its first match)
    signal:   `INT SECONDS` or `TERM SECONDS`: send the signal that long after the start
    timeout:  seconds (default 60)
    writes:   `yes` if the case may write into {tmp} (checked only for exit 2)
    xfail:    a reason: the case is expected to fail until that is fixed
"""

from __future__ import annotations

import glob
import os
import resource
import shlex
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
HOSTILE = Path(__file__).resolve().parent / "hostile"
#: address space of one case: the interpreter, numpy, pandas, pyarrow, DuckDB and the
#: engine fit in ~1.5 GB; an input that asks for more must be refused, not allocated
MEMORY_LIMIT = 3 << 30
HEADER_KEYS = {"args", "exit", "names", "setup", "signal", "timeout", "writes", "xfail"}


def parse_case(path: Path) -> dict:
    """The header of a case file (bytes up to the first line that is not a `# key:` line)."""
    case: dict = {"names": [], "setup": [], "exit": 2, "timeout": 60.0}
    for raw in path.read_bytes().split(b"\n"):
        line = raw.decode("utf-8", "replace").strip()
        if not line.startswith("#") or ":" not in line:
            break
        key, _, value = line[1:].partition(":")
        key, value = key.strip(), value.strip()
        if key not in HEADER_KEYS:
            break
        if key in ("names", "setup"):
            case[key].append(value)
        elif key == "exit":
            case[key] = int(value)
        elif key == "timeout":
            case[key] = float(value)
        else:
            case[key] = value
    assert "args" in case, f"{path.name}: no `# args:` header"
    return case


def _cases():
    out = []
    for p in sorted(HOSTILE.iterdir()):
        if p.is_dir() or p.name.startswith((".", "_")) or p.name == "README.md":
            continue
        case = parse_case(p)
        marks = [pytest.mark.xfail(strict=False, reason=case["xfail"])] if "xfail" in case else []
        out.append(pytest.param(p, case, id=p.name, marks=marks))
    return out


def _limits():
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def _words(text: str, subst: dict) -> list[str]:
    return [w.format(**subst) for w in shlex.split(text)]


def _tree(folder: Path) -> dict:
    out = {}
    for p in sorted(folder.rglob("*")):
        st = p.lstat()
        out[p.relative_to(folder).as_posix()] = (st.st_size, st.st_mtime_ns) if p.is_file() else None
    return out


def _tcplab(args: list[str], cwd: Path, timeout: float, sig: tuple | None = None):
    env = dict(os.environ, PYTHONUNBUFFERED="1", COLUMNS="200")
    proc = subprocess.Popen([sys.executable, "-m", "tcplab.cli", *args], cwd=cwd, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=_limits)
    try:
        if sig is not None:
            try:
                proc.wait(timeout=sig[1])
            except subprocess.TimeoutExpired:
                proc.send_signal(sig[0])
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        pytest.fail(f"no answer within {timeout:.0f} s: {shlex.join(args)}")
    return proc.returncode, out, err


def _setup(step: str, subst: dict, tmp: Path) -> None:
    verb, _, rest = step.partition(" ")
    if verb == "tcplab":
        code, out, err = _tcplab(_words(rest, subst), tmp, 120)
        assert code == 0, f"setup failed: {step}\n{err}"
    elif verb == "copy":
        src, dst = _words(rest, subst)
        Path(dst).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(src, dst)
    elif verb == "truncate":
        pattern, size = _words(rest, subst)
        files = sorted(glob.glob(pattern))
        assert files, f"setup: nothing matches {pattern}"
        with open(files[0], "r+b") as fh:
            fh.truncate(int(size))
    elif verb == "write":
        path, _, text = rest.partition(" ")
        path = path.format(**subst)
        matches = sorted(glob.glob(path))  # a pattern writes over the first file it matches
        target = Path(matches[0]) if matches else Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text.format(**subst) + "\n")
    elif verb == "link":
        path, target = _words(rest, subst)
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        os.symlink(target, path)
    else:
        raise AssertionError(f"unknown setup step {step!r}")


@pytest.mark.parametrize("path, case", _cases())
def test_hostile_case(path: Path, case: dict, tmp_path: Path):
    subst = {"case": str(path), "tmp": str(tmp_path), "scenarios": str(ROOT / "scenarios"),
             "hostile": str(HOSTILE), "sweeps": str(ROOT / "sweeps")}
    for step in case["setup"]:
        _setup(step, subst, tmp_path)
    before = _tree(tmp_path)
    sig = None
    if "signal" in case:
        name, after = case["signal"].split()
        sig = (getattr(signal, f"SIG{name}"), float(after))
    t0 = time.monotonic()
    code, out, err = _tcplab(_words(case["args"], subst), tmp_path, case["timeout"], sig)
    took = time.monotonic() - t0
    said = err + out
    assert "Traceback" not in said, f"a traceback:\n{err[-3000:]}"
    assert code == case["exit"], f"exit {code}, expected {case['exit']} ({took:.1f} s)\n{err[-2000:]}"
    for text in case["names"]:
        assert text in said, f"the message does not name {text!r}:\n{err[-2000:]}"
    if code == 2 and case.get("writes") != "yes":
        assert _tree(tmp_path) == before, "a refused input wrote or deleted files"


def test_the_corpus_covers_the_issue():
    """At least the 51 classes of hostile input the issue lists, each a case."""
    assert len(_cases()) >= 51
