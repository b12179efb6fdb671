"""Numbers the documentation quotes, measured again. The packet engine and ns-2 are
deterministic (same scenario and seed, same result), so each number is checked at the
precision it is quoted with: a changed engine that moves a quoted result fails here,
and the quote is updated with the code (python/tcplab/data/scenarios/*.toml comments).

DCTCP's model numbers for scenarios/dctcp.toml are checked in tests/test_models_cli.py;
the `refused: …` estimates of docs/hostile-input.md by tests/test_doc_commands.py.
"""

from __future__ import annotations

import re
import statistics
from pathlib import Path

import pytest

import tcplab

ROOT = Path(__file__).resolve().parents[1]
A_CONSTANT = ROOT / "scenarios" / "a-constant-udp.toml"
COMMENT = A_CONSTANT.read_text()


def _quoted(pattern: str) -> tuple[str, ...]:
    m = re.search(pattern, COMMENT)
    assert m, f"a-constant-udp.toml no longer quotes {pattern!r}: update this test with the comment"
    return m.groups()


def _goodput(engine: str, **overrides) -> float:
    return tcplab.run(str(A_CONSTANT), engine=engine, overrides=overrides).metrics["normalized_goodput"]


@pytest.mark.parametrize("engine", ["packet", pytest.param("ns2", marks=pytest.mark.ns2)])
def test_a_constant_udp_phase_lock_numbers(engine):
    here, ns2 = _quoted(r"normalized\s+#?\s*goodput ([\d.]+) here and ([\d.]+) in ns-2")
    (loss,) = _quoted(r"the UDP source loses (\d+) % of its")
    res = tcplab.run(str(A_CONSTANT), engine=engine)
    assert f"{res.metrics['normalized_goodput']:.3f}" == (here if engine == "packet" else ns2)
    assert f"{100 * (1 - res.metrics['udp_throughput_bps'] / 0.5e6):.0f}" == loss


@pytest.mark.slow
@pytest.mark.ns2
@pytest.mark.parametrize("jitter, pattern", [
    ("4ms", r"send_jitter=4ms\s+→ ([\d.]+) vs ([\d.]+) in ns-2 \(seeds 1-8, sd ([\d.]+) and ([\d.]+)\)"),
    ("1ms", r"1 ms is not enough: ([\d.]+) vs ([\d.]+) on average, single runs still lock, sd ([\d.]+) and ([\d.]+)"),
])
def test_a_constant_udp_send_jitter_numbers(jitter, pattern):
    mean_p, mean_n, sd_p, sd_n = _quoted(pattern)
    digits = len(mean_p.split(".")[1])
    for engine, mean_q, sd_q in (("packet", mean_p, sd_p), ("ns2", mean_n, sd_n)):
        vals = [_goodput(engine, **{"flows.background.send_jitter": jitter, "seed": s}) for s in range(1, 9)]
        assert f"{statistics.mean(vals):.{digits}f}" == mean_q, (engine, vals)
        assert f"{statistics.stdev(vals):.{len(sd_q.split('.')[1])}f}" == sd_q, (engine, vals)


B_REALTIME = ROOT / "scenarios" / "b-realtime.toml"
FOUR = ((1, 0.5), (0.31, 0.875), (0.583, 0.75), (1.25, 0.25))


def _range_pct(text: str) -> tuple[float, float]:
    lo, _, hi = text.partition("-")
    return float(lo), float(hi or lo)


def test_b_realtime_success_numbers():
    comment = B_REALTIME.read_text()
    m = re.search(r"PER 0 → ([\d.-]+) % success for the four.*?PER 0\.01 → ([\d.-]+) %; PER 0\.05 → ([\d.-]+) %, "
                  r"smooth TCP\(0\.31, 0\.875\) lowest", comment, flags=re.S)
    assert m, "b-realtime.toml no longer quotes its measured success rates: update this test with the comment"
    for per, quoted in zip((0.0, 0.01, 0.05), m.groups()):
        lo, hi = _range_pct(quoted)
        digits = len(quoted.rpartition(".")[2]) if "." in quoted else 0
        got = {ab: tcplab.run(str(B_REALTIME), overrides={"topology.sink_access.errors.per": per,
                                                           "flows.rt.alpha": ab[0], "flows.rt.beta": ab[1]})
               .metrics["app_success_percentage"] for ab in FOUR}
        # the range as quoted: its ends are the lowest and highest of the four, rounded as written
        assert (round(min(got.values()), digits), round(max(got.values()), digits)) == (lo, hi), (per, got)
        if per == 0.05:
            assert min(got, key=got.get) == (0.31, 0.875), got
