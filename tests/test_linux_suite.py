"""The Linux-comparison suite's CI subset (bench/linux_suite.py --grid ci): one
10 s CUBIC case on the kernel (twice: the noise floor) and on the packet engine's
`linux` profile. It needs root and TUN; without them it is skipped, saying why."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from tcplab.backends import linux

ROOT = Path(__file__).resolve().parent.parent


def suite():
    spec = importlib.util.spec_from_file_location("linux_suite", ROOT / "bench" / "linux_suite.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_the_grids_and_their_cases():
    s = suite()
    full = s.grid("full")
    assert len(full) == 2 * 3 * 3 * 3 * 4
    default = s.grid("default")
    assert len(default) == 40 and set(default) <= set(full)
    sc = s.scenario("10M", "50ms", "1bdp", 4, "cubic+bbr", 25, 5)
    # RTT 50 ms: 2 × (bottleneck + two access links); buffer one BDP of 1000-byte packets
    assert sc["topology"]["bottleneck"] == {"rate": "10Mbps", "delay": "23ms", "buffer": 62}
    assert {g: (f["cc"], f["count"], f["profile"]) for g, f in sc["flows"].items()} == {
        "cubic": ("cubic", 2, "linux"), "bbr": ("bbr", 2, "linux")}


def test_a_missing_cc_is_skipped_by_name():
    s = suite()
    have = {"packet": {"reno", "cubic"}, "linux": {"reno", "cubic", "bbr"}}
    assert s.why_skip("cubic+bbr", "packet", have) == "the packet engine has no cc 'bbr'"
    assert s.why_skip("cubic", "linux", have) is None


@pytest.mark.skipif(linux.available() is not None, reason=f"linux engine: {linux.available()}")
def test_ci_subset_against_the_kernel(tmp_path):
    s = suite()
    out = tmp_path / "suite"
    assert s.main(["--out", str(out), "--grid", "ci"]) == 0
    summary = json.loads((out / "summary.json").read_text())
    (case,) = summary["cases"]
    assert case["case"] == "10M-50ms-1bdp-n1-cubic"
    # one CUBIC flow keeps a one-BDP buffer busy on both: goodput within 5%
    assert abs(case["goodput_error"]) < 0.05, case
    assert case["cwnd_distance_bdp"] < 0.5, case
    assert Path(case["plot"]).stat().st_size > 0
    # the kernel ran twice: its two runs of one CUBIC flow agree as closely
    assert abs(case["kernel_goodput_error"]) < 0.05, case
    assert case["kernel_cwnd_distance_bdp"] < 0.5, case
    assert summary["per_cc"]["cubic"]["kernel"]["cases"] == 1
    # resumable: a second run reads all three runs from the store and runs nothing
    parts = sorted((out / "store").glob("part-*.parquet"))
    assert len(parts) == 3
    assert s.main(["--out", str(out), "--grid", "ci"]) == 0
    assert sorted((out / "store").glob("part-*.parquet")) == parts
    again = json.loads((out / "summary.json").read_text())["cases"][0]
    assert again["goodput_error"] == case["goodput_error"]
