"""Closed-form throughput models from the papers tcplab reproduces.

Pure, vectorized (numpy) functions; each docstring states the assumptions, the
validity range and the equation (paper and number), and each raises a
ValueError outside its domain.

- :mod:`tcplab.models.aimd`      paper C: N parallel AIMD connections
- :mod:`tcplab.models.gaimd`     paper B: TCP(α,β), GAIMD, PFTK, Mathis
- :mod:`tcplab.models.slowstart` paper D: Tahoe with small buffers (triple slow start)
- :mod:`tcplab.models.cubic`     RFC 9438: CUBIC's response function
- :mod:`tcplab.models.bbr`       Ware et al. (IMC 2019): BBR's share against loss-based flows
- :mod:`tcplab.models.dctcp`     Alizadeh et al. (SIGCOMM 2010): DCTCP's steady state
- :mod:`tcplab.models.buffers`   Appenzeller et al. (SIGCOMM 2004): BDP and BDP/√N buffers
- :mod:`tcplab.models.registry`  the table `tcplab predict` reads
"""

from tcplab.models.aimd import (
    SECOND_MOMENTS_N2,
    aimd_all_utilization,
    aimd_connections_needed,
    aimd_one_utilization,
    beatdown_stationary_point,
    largest_rate_fixed_point,
    multtcp_utilization,
    second_moment_two_flows,
)
from tcplab.models.gaimd import (
    congestion_epoch_rtts,
    fair_share_window,
    friendly_alpha,
    gaimd_throughput,
    mathis_throughput,
    pftk_throughput,
    pftk_throughput_approx,
)
from tcplab.models.slowstart import (
    explain_slowstart_cycle,
    max_window,
    overflow_window,
    slowstart_cycle_throughput,
    slowstarts_per_cycle,
    triple_slowstart_ratio,
)

__all__ = [
    "SECOND_MOMENTS_N2",
    "aimd_all_utilization",
    "aimd_connections_needed",
    "aimd_one_utilization",
    "beatdown_stationary_point",
    "congestion_epoch_rtts",
    "explain_slowstart_cycle",
    "fair_share_window",
    "friendly_alpha",
    "gaimd_throughput",
    "largest_rate_fixed_point",
    "mathis_throughput",
    "max_window",
    "multtcp_utilization",
    "overflow_window",
    "pftk_throughput",
    "pftk_throughput_approx",
    "second_moment_two_flows",
    "slowstart_cycle_throughput",
    "slowstarts_per_cycle",
    "triple_slowstart_ratio",
]
