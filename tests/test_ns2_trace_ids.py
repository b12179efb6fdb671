"""ns-2's per-change TCP traces name each flow by the Plan's flow id on every
topology (the parser once took flow = source node - 2, a dumbbell's numbering:
a two-link path's flow came back as -2, a parking lot's as 1, 2, 3)."""

from __future__ import annotations

import shutil

import pytest

import tcplab
from tcplab.traces import canonical

pytestmark = [pytest.mark.ns2, pytest.mark.skipif(shutil.which("ns") is None, reason="needs ns-2 (`ns`)")]

CASES = [("scenarios/d-tahoe-two-link-path.toml", {"duration": "30s", "warmup": "1s"}),
         ("scenarios/parking-lot.toml", {"duration": "20s", "warmup": "1s"}),
         ("scenarios/two-way.toml", {"duration": "10s", "warmup": "1s"})]


@pytest.mark.parametrize("path, overrides", CASES, ids=[c[0].split("/")[1] for c in CASES])
def test_trace_flow_ids_are_the_plans_on_every_topology(path, overrides):
    runs = {e: tcplab.run(path, engine=e, overrides=overrides, trace=["cwnd"]) for e in ("packet", "ns2")}
    tcp = {e: canonical(r.traces, r.links)["tcp"] for e, r in runs.items()}
    want = sorted(runs["packet"].flows.query("kind == 'tcp'")["id"].tolist())
    assert sorted(tcp["ns2"]["flow"].unique().tolist()) == want
    # the same flow on both engines: its first window changes agree (the engines
    # deliver the same packets on these topologies), so a swapped label would show
    for f in want:
        a = tcp["packet"].loc[tcp["packet"]["flow"] == f, "cwnd"].drop_duplicates().head(30).tolist()
        b = tcp["ns2"].loc[tcp["ns2"]["flow"] == f, "cwnd"].drop_duplicates().head(30).tolist()
        assert a == pytest.approx(b), f"flow {f}"
