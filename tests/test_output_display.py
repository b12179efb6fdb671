"""Names, labels and titles are cut for display, kept whole in the outputs: a
scenario named with a megabyte of text is answered in seconds (drawing the
whole name in a terminal title took 73 s for 100 kB, over 60 s for 1 MB)."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCENARIO = ROOT / "scenarios" / "a-constant-udp.toml"
BIG = 1_000_000


def tcplab(*args, cwd, timeout=60):
    try:
        return subprocess.run([sys.executable, "-m", "tcplab.cli", *map(str, args)], capture_output=True,
                              text=True, cwd=cwd, timeout=timeout, env=dict(os.environ, COLUMNS="120"))
    except subprocess.TimeoutExpired:
        pytest.fail(f"no answer within {timeout} s: tcplab {' '.join(map(str, args))[:200]}")


@pytest.fixture
def big_name(tmp_path):
    text = SCENARIO.read_text()
    name = "n" * (BIG // 2) + "[bold]" + "m" * (BIG // 2)  # and rich markup is shown, not applied
    path = tmp_path / "big.toml"
    path.write_text(re.sub(r'^name\s*=.*$', f'name = "{name}"', text, count=1, flags=re.M))
    return path, name


def test_a_megabyte_name_is_cut_on_screen_and_kept_in_the_output(big_name, tmp_path):
    path, name = big_name
    p = tcplab("run", path, "--trace", "cwnd", "--out", tmp_path / "run", cwd=tmp_path)
    assert p.returncode == 0, p.stderr[-2000:]
    assert len(p.stdout) < 20_000 and "more characters" in p.stdout
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["scenario"]["name"] == name, "the output keeps the whole name"
    p = tcplab("plot", tmp_path / "run", "--out", tmp_path / "cwnd.png", cwd=tmp_path)
    assert p.returncode == 0, p.stderr[-2000:]
    p = tcplab("compare", path, "--engines", "packet", "--out", tmp_path / "cmp", cwd=tmp_path)
    assert p.returncode == 0, p.stderr[-2000:]


def test_a_megabyte_sweep_name_is_cut_on_screen(tmp_path):
    sweep = tmp_path / "s.toml"
    sweep.write_text(f'name = "{"s" * BIG}"\nengine = "fluid"\nscenario = {{ n = 2, events = 500 }}\n'
                     "[axes]\nbeta = [0.5, 0.6]\n")
    p = tcplab("sweep", sweep, "--out", tmp_path / "sw", "--jobs", "1", cwd=tmp_path)
    assert p.returncode == 0, p.stderr[-2000:]
    assert len(p.stdout) + len(p.stderr) < 50_000


@pytest.mark.parametrize("text", ["", "short", "x" * 120, "x" * 121, "a\nb\tc", "y" * BIG, "é" * 5000])
def test_shown_is_one_bounded_line(text):
    from tcplab.console import DISPLAY_CHARS, shown

    assert DISPLAY_CHARS == 120
    s = shown(text)
    assert "\n" not in s and "\t" not in s
    assert len(s) <= DISPLAY_CHARS + 30
    if len(text) <= DISPLAY_CHARS:
        assert s == " ".join(text.split()) or s == text
    else:
        assert f"{len(text) - (len(s.split('…[')[0]) + len(s.split(']…')[1]))} more characters" in s
