"""scripts/pgo.sh, the profile-guided build's first half: when it gives a profile,
when it reuses one, and when it steps aside so that setup.sh builds plainly.

Run on a copy of the script in a scratch tree, with a fake `rustc` (its sysroot
holding a fake `llvm-profdata`) and a fake `cargo` that records that it was
called: seconds, not the minutes of a real instrumented build (which CI's
set-up runs anyway)."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _tree(tmp: Path) -> tuple[Path, dict]:
    repo = tmp / "repo"
    (repo / "scripts").mkdir(parents=True)
    shutil.copy(ROOT / "scripts" / "pgo.sh", repo / "scripts" / "pgo.sh")
    for d in ("crates/engine/src", "scenarios", "bench/scenarios"):
        (repo / d).mkdir(parents=True)
    (repo / "crates/engine/src/lib.rs").write_text("// engine\n")
    (repo / "Cargo.toml").write_text("[workspace]\n")
    (repo / "Cargo.lock").write_text("\n")
    (repo / "bench/check_identical.py").write_text("import sys; sys.exit(0)\n")
    fake = tmp / "bin"
    host = "x86_64-unknown-linux-gnu"
    tools = tmp / "sysroot" / "lib" / "rustlib" / host / "bin"
    tools.mkdir(parents=True)
    calls = tmp / "calls"
    fake.mkdir()
    (fake / "rustc").write_text(
        f"#!/bin/sh\ncase \"$1\" in --print) echo {tmp / 'sysroot'};; -vV) echo 'host: {host}';; esac\n")
    (fake / "cargo").write_text(f"#!/bin/sh\necho cargo >> {calls}\nexit 1\n")  # a build would fail here
    (tools / "llvm-profdata").write_text(f"#!/bin/sh\necho merge >> {calls}\n")
    for f in (fake / "rustc", fake / "cargo", tools / "llvm-profdata"):
        f.chmod(0o755)
    env = dict(os.environ, PATH=f"{fake}:{os.environ['PATH']}", TCPLAB_PGO="1")
    return repo, env


def _run(repo: Path, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "scripts/pgo.sh"], cwd=repo, env=env, capture_output=True, text=True,
                          timeout=60)


def test_a_current_profile_is_reused_without_building(tmp_path):
    repo, env = _tree(tmp_path)
    prof = repo / "target" / "pgo" / "engine.profdata"
    prof.parent.mkdir(parents=True)
    prof.write_bytes(b"profile")
    later = time.time() + 10
    os.utime(prof, (later, later))  # newer than every source
    r = _run(repo, env)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == str(prof)
    assert not (tmp_path / "calls").exists()  # neither cargo nor the merge ran


def test_a_source_newer_than_the_profile_makes_it_build_again(tmp_path):
    repo, env = _tree(tmp_path)
    prof = repo / "target" / "pgo" / "engine.profdata"
    prof.parent.mkdir(parents=True)
    prof.write_bytes(b"profile")
    earlier = time.time() - 100
    os.utime(prof, (earlier, earlier))
    r = _run(repo, env)
    # the instrumented build was attempted (the fake cargo fails): no path printed
    assert (tmp_path / "calls").read_text().split() == ["cargo"]
    assert r.returncode != 0 and r.stdout == ""


def test_off_unless_asked_or_without_the_merge_tool_it_prints_nothing(tmp_path):
    repo, env = _tree(tmp_path)
    for off in ("0", None):  # asked for by TCPLAB_PGO=1 only (scripts/pgo.sh says why)
        r = _run(repo, {k: v for k, v in dict(env, TCPLAB_PGO=off).items() if v is not None})
        assert (r.returncode, r.stdout) == (1, "")
    for f in (tmp_path / "sysroot").rglob("llvm-profdata"):
        f.unlink()
    no_rustup = dict(env, PATH=":".join(p for p in env["PATH"].split(":")
                                        if not (Path(p) / "rustup").exists()))
    r = _run(repo, no_rustup)
    assert (r.returncode, r.stdout) == (1, "")
    assert "profile-guided build skipped" in r.stderr
    assert not (tmp_path / "calls").exists()
