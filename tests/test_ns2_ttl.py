"""A path of 32 links or more on ns-2: its default TTL (32 hops) once killed every
packet and the run reported 0 throughput without a word; the export now raises
ttl_ to the longest route, and the two engines deliver the same packets."""

from __future__ import annotations

import shutil

import pytest

import tcplab
from tcplab.backends.ns2 import export_tcl
from tcplab.scenario import resolve

pytestmark = [pytest.mark.ns2, pytest.mark.skipif(shutil.which("ns") is None, reason="needs ns-2 (`ns`)")]


def path(n: int) -> dict:
    link = {"rate": "10Mbps", "delay": "1ms", "buffer": 50}
    return {"duration": "20s", "warmup": "2s", "topology": {"kind": "path", "links": [link] * n},
            "flows": {"tcp": {"kind": "tcp"}}}


def test_ttl_is_written_only_where_the_default_would_kill_packets():
    assert "ttl_" not in export_tcl(resolve(path(31)))
    assert "Agent set ttl_ 33" in export_tcl(resolve(path(32)))


@pytest.mark.parametrize("n", [31, 32])
def test_a_long_path_delivers_the_same_packets_on_both_engines(n):
    pkt, ns2 = (tcplab.run(path(n), engine=e) for e in ("packet", "ns2"))
    assert pkt.flows["delivered_packets"].tolist() == ns2.flows["delivered_packets"].tolist()
    assert ns2.flows["delivered_packets"].iloc[0] > 10_000
