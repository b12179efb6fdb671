"""Human labels for scenario keys and metrics, in one table, for figure axes and legends.

    >>> label("flows.sack.count")
    'number of flows (sack)'
    >>> label("topology.bottleneck.buffer")
    'bottleneck buffer (packets)'
    >>> label("normalized_throughput")
    'normalized throughput (of the reference rate)'

A key is matched against `LABELS` with its flow group (the component after
``flows.``) replaced by ``*``; the group is then added in parentheses. A key the
table does not know is spelled out from its path (``topology.access.delay`` →
"access delay"), so a label is never the raw dotted key.
"""

from __future__ import annotations

#: scenario key (flow group as *) or metric → label with its unit
LABELS: dict[str, str] = {
    # flows
    "flows.*.count": "number of flows",
    "flows.*.variant": "TCP variant",
    "flows.*.rate": "sending rate (bit/s)",
    "flows.*.packet_size": "packet size (bytes)",
    "flows.*.window": "receiver window (packets)",
    "flows.*.alpha": "increase α (packets per RTT)",
    "flows.*.beta": "decrease factor β",
    "flows.*.start": "start time (s)",
    "flows.*.stop": "stop time (s)",
    "flows.*.rate.frequency": "background frequency f (Hz)",
    "flows.*.rate.amplitude": "background amplitude (bit/s)",
    # links
    "topology.bottleneck.rate": "bottleneck rate (bit/s)",
    "topology.bottleneck.delay": "bottleneck delay (s)",
    "topology.bottleneck.buffer": "bottleneck buffer (packets)",
    "topology.bottleneck.queue": "bottleneck queue discipline",
    "topology.access.rate": "access link rate (bit/s)",
    "topology.access.delay": "access link delay (s)",
    "topology.access.buffer": "access link buffer (packets)",
    "topology.sink_access.delay": "sink access link delay (s)",
    "topology.sink_access.errors.per": "packet error rate on the sink link",
    "topology.bottleneck.errors.per": "packet error rate on the bottleneck",
    "topology.bottleneck.threshold.threshold": "dropper threshold Th (packets)",
    "topology.bottleneck.threshold.immunity": "dropper immunity τ (s)",
    # run
    "duration": "duration (s)",
    "warmup": "warm-up (s)",
    "seed": "seed",
    "protocol": "protocol",
    # metrics
    "normalized_throughput": "normalized throughput (of the reference rate)",
    "normalized_goodput": "normalized goodput (of the reference rate)",
    "tcp_throughput_bps": "TCP throughput (bit/s)",
    "tcp_goodput_bps": "TCP goodput (bit/s)",
    "bottleneck_utilization": "bottleneck utilization",
    "bottleneck_drops": "drops at the bottleneck (packets)",
    "bottleneck_loss_rate": "loss rate at the bottleneck",
    "tcp_retransmissions": "TCP retransmissions (packets)",
    "tcp_timeouts": "TCP timeouts",
    "jain_index": "Jain's fairness index",
    "reference_bps": "reference rate (bit/s)",
    "measured_s": "measured time (s)",
}


def label(key: str) -> str:
    """The human label of a scenario key or metric name (see the module doc)."""
    if key.startswith("axis."):
        key = key[5:]
    if key in LABELS:
        return LABELS[key]
    parts = key.split(".")
    group = None
    if len(parts) >= 3 and parts[0] == "flows":
        group = parts[1]
        generic = ".".join(["flows", "*", *parts[2:]])
        if generic in LABELS:
            return f"{LABELS[generic]} ({group})"
    words = [p.replace("_", " ") for p in parts if p not in ("topology", "flows")]
    if group is not None:
        words = [w for w in words if w != group.replace("_", " ")]
        return f"{' '.join(words)} ({group})"
    return " ".join(words)


def rate_text(bps: float) -> str:
    """A rate for people to read: "10.000 Mb/s", "500.000 kb/s", "12 b/s"."""
    for scale, unit in ((1e9, "Gb/s"), (1e6, "Mb/s"), (1e3, "kb/s")):
        if bps >= scale:
            return f"{bps / scale:.3f} {unit}"
    return f"{bps:.0f} b/s"
