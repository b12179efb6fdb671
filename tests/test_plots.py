"""tcplab.plots and `tcplab plot`: figures render and hold the expected series
(checked on the matplotlib artists, not on pixels)."""

import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from matplotlib.collections import PolyCollection

import tcplab
from tcplab.errors import UserError
from tcplab.plots import plot
from tcplab.result import Result
from tcplab.scenario import resolve

ROOT = Path(__file__).resolve().parent.parent


def synthetic(engine="packet"):
    """Two TCP flows and a 0.5 Mb/s UDP background on a 1 Mb/s, 10-packet bottleneck."""
    sc = {"name": "synthetic", "duration": "4s", "warmup": "0s",
          "topology": {"bottleneck": {"rate": "1Mbps", "delay": "5ms", "buffer": 10},
                       "access": {"rate": "10Mbps", "delay": "5ms", "buffer": 100},
                       "sink_access": {"rate": "10Mbps", "delay": "5ms", "buffer": 100}},
          "flows": {"udp": {"kind": "udp", "rate": "0.5Mbps", "count": 1, "start": "0s", "stop": "4s"},
                    "tcp": {"kind": "tcp", "count": 2, "packet_size": 1000, "header_size": 40, "syn": True}}}
    sc = resolve(sc)  # a Result holds the resolved scenario
    flows = pd.DataFrame({"id": [0, 1, 2], "group": ["udp", "tcp", "tcp"], "kind": ["udp", "tcp", "tcp"],
                          "start_s": [0.0, 0.0, 0.0], "stop_s": [4.0, 4.0, 4.0],
                          "goodput_bps": [5e5, 1e5, 1e5], "throughput_bps": [5e5, 1e5, 1e5]})
    links = pd.DataFrame({"id": [0, 1], "name": ["bottleneck", "bottleneck"], "direction": ["forward", "reverse"]})
    # flow 1 delivers 10 packets a second, flow 2 25 a second after 2 s
    tcp = pd.DataFrame({"t": [0.0, 0.0, 1.0, 2.0, 3.0, 4.0, 3.0, 4.0],
                        "flow": [1, 2, 1, 1, 1, 1, 2, 2],
                        "cwnd": [1.0, 1.0, 4.0, 8.0, 2.0, 3.0, 5.0, 6.0],
                        "ssthresh": [20.0] * 8, "inflight": [1, 1, 4, 8, 2, 3, 5, 6],
                        "ack": [-1, -1, 10, 20, 30, 40, 25, 50]}).sort_values("t", kind="stable")
    sends = pd.DataFrame({"t": [0.1, 0.2, 0.3, 0.4], "flow": [1, 1, 1, 2], "seq": [1, 2, 2, 1], "rtx": [0, 0, 1, 0]})
    queue = pd.DataFrame({"t": [0.0, 1.0, 2.0], "link": [0, 0, 0], "tcp": [0, 3, 5], "udp": [1, 2, 4]})
    drops = pd.DataFrame({"t": [0.25], "link": [0], "flow": [1], "seq": [2]})
    traces = {"tcp": tcp, "sends": sends, "queue": queue, "drops": drops}
    return Result(engine, "test", sc, flows, links, {}, traces)


def labels(ax):
    return [l.get_label() for l in ax.get_lines()]


def test_cwnd_plot_has_one_line_per_flow_and_the_sum():
    fig = plot(synthetic(), "cwnd")
    top, bottom = fig.axes
    assert labels(top) == ["flow 1 (tcp)", "flow 2 (tcp)"]
    assert top.get_lines()[0].get_ydata().tolist() == [1, 4, 8, 2, 3]
    assert top.get_ylabel() == "congestion window (packets)"
    assert bottom.get_xlabel() == "time (s)"
    (total,) = bottom.get_lines()
    assert total.get_label() == "Σ cwnd"
    y = total.get_ydata()
    assert y[0] == 2 and y[-1] == 3 + 6                   # both flows at 0 s; 3 + 6 at 4 s
    assert [t.get_text() for t in top.get_legend().get_texts()] == ["flow 1 (tcp)", "flow 2 (tcp)"]
    one = plot(synthetic(), "cwnd", flows=[2])
    assert len(one.axes) == 1 and labels(one.axes[0]) == ["flow 2 (tcp)"]


def test_queue_plot_stacks_udp_under_tcp_with_the_buffer():
    ax = plot(synthetic(), "queue").axes[0]
    fills = [c for c in ax.collections if isinstance(c, PolyCollection)]
    assert [c.get_label() for c in fills] == ["UDP packets", "TCP packets"]
    assert "buffer B = 10" in labels(ax)
    assert ax.get_ylabel() == "queue occupancy (packets)"
    # TCP sits on top of UDP: its upper edge reaches tcp + udp = 9 packets
    assert fills[1].get_paths()[0].vertices[:, 1].max() == 9


def test_seq_plot_marks_sends_retransmissions_drops_and_acks():
    ax = plot(synthetic(), "seq", flows=[1]).axes[0]
    assert labels(ax) == ["sent", "retransmitted", "acked", "dropped"]
    sent, rtx, acked, dropped = ax.get_lines()
    assert sent.get_ydata().tolist() == [1, 2] and rtx.get_ydata().tolist() == [2]
    assert dropped.get_xdata().tolist() == [0.25]
    assert ax.get_ylabel() == "sequence number (packets)"


def test_rate_plot_draws_tcp_goodput_against_udp():
    ax = plot(synthetic(), "rate").axes[0]
    assert labels(ax) == ["flow 1 (tcp) goodput", "flow 2 (tcp) goodput", "TCP total goodput",
                          "UDP udp sending rate", "bottleneck capacity C"]
    f1, f2, total, udp, cap = ax.get_lines()
    # 10 packets of 960 payload bytes a second = 0.0768 Mb/s; steps repeat the last value
    assert f1.get_ydata() == pytest.approx([0.0768] * 5)
    # flow 2: acked up to 25 at 3 s (counts in (2, 3]), 50 at 4 s: 25 packets = 0.192 Mb/s
    assert f2.get_ydata() == pytest.approx([0, 0, 0.192, 0.192, 0.192])
    assert total.get_ydata() == pytest.approx([0.0768, 0.0768, 0.2688, 0.2688, 0.2688])
    assert udp.get_ydata()[:4] == pytest.approx([0.5] * 4)
    assert cap.get_ydata()[0] == 1.0
    assert ax.get_ylabel() == "rate (Mb/s, per 1 s)"


def test_ns2_shaped_traces_plot_too():
    res = synthetic("ns2")
    t = res.traces["tcp"]
    res.traces = {"cwnd": t[["t", "flow", "cwnd", "ssthresh"]],
                  "seq": t[["t", "flow", "ack"]].assign(seq=t["ack"] + 2),
                  "queue": pd.DataFrame({"t": [0.0, 1.0], "link": "bottleneck", "packets": [2, 7]})}
    assert labels(plot(res, "seq", flows=[1]).axes[0]) == ["highest sent", "acked"]
    q = plot(res, "queue").axes[0]
    assert [c.get_label() for c in q.collections] == ["all packets (class not traced)"]
    assert len(plot(res, "rate").axes[0].get_lines()) == 5


def test_plot_errors_are_user_errors():
    res = synthetic()
    with pytest.raises(UserError, match="unknown kind"):
        plot(res, "bogus")
    with pytest.raises(UserError, match="no TCP flow 7"):
        plot(res, "cwnd", flows=[7])
    res.traces = {}
    with pytest.raises(UserError, match="--trace queue"):
        plot(res, "queue")


def test_result_plot_and_cli_on_a_run_directory(tmp_path):
    res = tcplab.run(ROOT / "scenarios" / "a-constant-udp.toml", overrides=["duration=30s", "warmup=5s"],
                     trace=["cwnd", "queue", "seq", "drops"])
    fig = res.plot("queue", out=tmp_path / "q.svg")
    assert (tmp_path / "q.svg").stat().st_size > 0 and fig.axes[0].get_ylabel() == "queue occupancy (packets)"
    run_dir = tmp_path / "run"
    res.save(run_dir)
    for kind, out in (("cwnd", "c.png"), ("queue", "q.png"), ("seq", "s.svg"), ("rate", "r.png")):
        p = subprocess.run([sys.executable, "-m", "tcplab.cli", "plot", str(run_dir), "--trace", kind,
                            "--out", str(tmp_path / out), "--start", "5s", "--end", "25s", "--flows", "1"],
                           capture_output=True, text=True)
        assert p.returncode == 0, p.stderr
        assert (tmp_path / out).stat().st_size > 1000
    p = subprocess.run([sys.executable, "-m", "tcplab.cli", "plot", str(run_dir), "--flows", "0"],
                       capture_output=True, text=True)
    assert p.returncode == 2 and "no TCP flow 0" in p.stderr        # flow 0 is the UDP background
    p = subprocess.run([sys.executable, "-m", "tcplab.cli", "plot", str(tmp_path)], capture_output=True, text=True)
    assert p.returncode == 2 and "summary.json" in p.stderr


def test_sum_of_windows_carries_every_flows_window_into_the_start():
    """Σ cwnd at the start of a window counts each flow's last window before it, not
    only the flows that change after it (issue 17: C6/C8's sums started low)."""
    from tcplab.plots import sum_of_windows

    tcp = pd.DataFrame({"t": [0.0, 0.5, 1.0, 2.0, 2.5, 3.0], "flow": [0, 1, 0, 1, 0, 1],
                        "cwnd": [1.0, 2.0, 4.0, 8.0, 16.0, 1.0]})
    s = sum_of_windows(tcp, 1.5, 3.0)
    assert s.index.tolist() == [1.5, 2.0, 2.5, 3.0]
    assert s.tolist() == [4 + 2, 4 + 8, 16 + 8, 16 + 1]


def test_axis_labels_are_human_never_raw_keys():
    from tcplab.labels import label

    assert label("flows.sack.count") == "number of flows (sack)"
    assert label("topology.bottleneck.buffer") == "bottleneck buffer (packets)"
    assert label("axis.seed") == "seed"
    assert label("normalized_throughput").startswith("normalized throughput")
    # keys the table does not know are spelled out, not printed dotted
    assert label("topology.reverse.delay") == "reverse delay"
    assert label("flows.web.think_time") == "think time (web)"
