"""The combination matrix (tcplab.matrix, docs/matrix.md): every cc × profile ×
variant × topology × queue × engine runs and passes the physical invariants, or is
refused before the run by the key that makes the combination.

CI samples the matrix (hypothesis, derandomized: the same sample on every run)
and checks one clean long flow per congestion control, profile and variant; the
slow tier runs every case on the packet engine and on ns-2."""

from __future__ import annotations

import re
import shutil

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tcplab import matrix

HAVE_NS2 = shutil.which("ns") is not None
ENGINES = ("packet", "ns2") if HAVE_NS2 else ("packet",)
#: a refusal names a key path: "scenario: flows.tcp.cc: ..." or "topology.kind: ..."
KEYED = re.compile(r"^(scenario: )?(flows|topology|measure|trace|linux)\.[\w.\[\]-]+: \S")


def _one(case: matrix.Case) -> list[str]:
    """What is wrong with a case: [] when it is refused by key or runs within the invariants."""
    sc = matrix.scenario(case)
    why = matrix.refusal(case, sc)
    if why is not None:
        return [] if KEYED.match(why) else [f"refused without a key path: {why}"]
    if case.engine == "linux":
        return []  # runs need root and real time: tests/test_linux_engine.py
    return matrix.check(case, sc, matrix.run(case, sc)).problems


@settings(max_examples=40, derandomize=True, deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(matrix.cases(engines=ENGINES + ("linux",))))
def test_a_sample_of_the_matrix_runs_right_or_is_refused_by_key(case):
    assert _one(case) == [], case.label


CLEAN = [(cc, profile, variant) for cc in matrix.CCS for profile in matrix.PROFILES for variant in matrix.VARIANTS]


@pytest.mark.parametrize("cc, profile, variant", CLEAN, ids=["/".join(c) for c in CLEAN])
def test_one_clean_long_flow_fills_its_link(cc, profile, variant):
    case, sc = matrix.clean_case(cc, profile, variant)
    why = matrix.refusal(case, sc)
    if why is not None:
        assert KEYED.match(why), why
        return
    verdict = matrix.check(case, sc, matrix.run(case, sc), clean=True)
    assert verdict.ok, verdict.problems


def test_the_collapses_that_were_silent_are_refused_by_key():
    # BBR under ns-2's profiles collapsed to 4 % of the link (c-parallel-sack) and
    # 0.01 % (one flow); CUBIC over Reno's recovery kept a clean link 64-78 % busy
    for case, key in [(matrix.Case("bbr", "ns2-2.35", "sack", "dumbbell", "droptail", "packet"), "flows.tcp.cc"),
                      (matrix.Case("bbr", "linux", "reno", "dumbbell", "droptail", "packet"), "flows.tcp.variant"),
                      (matrix.Case("cubic", "ns2-2001", "newreno", "dumbbell", "droptail", "packet"),
                       "flows.tcp.variant")]:
        why = matrix.refusal(case)
        assert why is not None and key in why, (case.label, why)


def test_the_invariants_catch_a_link_above_its_rate():
    # the check is not vacuous: a result claiming 1.2 of a link fails it
    case = matrix.Case("reno", "ns2-2.35", "sack", "dumbbell", "droptail", "packet")
    sc = matrix.scenario(case)
    res = matrix.run(case, sc)
    assert matrix.check(case, sc, res).ok
    res.links.loc[0, "utilization"] = 1.2
    assert not matrix.check(case, sc, res).ok


@pytest.mark.slow
@pytest.mark.parametrize("engine", ENGINES)
def test_the_whole_matrix(engine):
    bad = {}
    for case in matrix.cases(engines=(engine,)):
        problems = _one(case)
        if problems:
            bad[case.label] = problems
    assert bad == {}
