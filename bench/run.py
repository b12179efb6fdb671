"""Speed suite: the same scenarios in tcplab's packet engine, in ns-2 2.35 and (where
Debian's libns3-dev is installed) in an ns-3 3.37 twin, alternating runs, each run in a
child process of its own. Per scenario: wall time and CPU time (median and spread) of
each simulator, the ratios (whole runs, and per delivered packet), packets delivered,
events and packets per CPU second and peak memory. Then a scale series (N = 10, 100, 1000
flows x 1, 10, 100 Mb/s) showing CPU time against packets delivered, with linear fits and
a log-log plot in bench/results/scale.png. CPU time (user + system of the run's process)
is the robust measure on a shared machine; wall time is printed beside it.

    .venv/bin/python bench/run.py                  # everything (scenarios + scale series)
    .venv/bin/python bench/run.py --no-scale       # the scenarios only
    .venv/bin/python bench/run.py --scale-only     # the scale series only
    .venv/bin/python bench/run.py --quick --reps 1 --min-ratio 2   # CI's regression guard
    .venv/bin/python bench/run.py --sweep-scaling  # `tcplab reproduce all` with 1 vs 2 workers
    .venv/bin/python bench/run.py --flows-series [--htsim BIN]   # ns per packet against N, 10 ... 10^4

What is timed: tcplab, `tcplab.run` in-process (scenario in, a Result with its metrics out;
its flow/link DataFrames are built on first read, after the timing; interpreter start-up excluded, since a sweep pays it once); ns-2, the whole `ns`
process (its Tcl set-up is part of what a run costs there); ns-3, the whole twin process
(bench/ns3/dumbbell.cc, built with g++ on first use). Ratios, not absolute times, are
what to compare across machines. `--quick` runs a tenth of each scenario, tcplab and
ns-2 only (ns-3 with `--sims tcplab,ns2,ns3`), and fails with --min-ratio only on a
ns-2/tcplab CPU-time ratio measured in this same run.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(HERE))

import htsim  # noqa: E402
import ns3  # noqa: E402
import tcplab.units  # noqa: E402
from tcplab.errors import UserError  # noqa: E402
from tcplab.scenario import apply_overrides, load_scenario, read_toml  # noqa: E402

SCENARIOS = ["a_reno_1mbps", "b_sack10_10mbps", "c_reno100_100mbps",
             "d_sine_background", "e_per100_100mbps", "f_threshold10"]
SIMS = ["tcplab", "ns2", "ns3"]
LABEL = {"tcplab": "tcplab", "ns2": "ns-2", "ns3": "ns-3"}
RESULTS = HERE / "results"
CHILD_TIMEOUT_S = 1800
SCALE_FLOWS = (10, 100, 1000)
SCALE_RATES_MBPS = (1, 10, 100)
FLOWS_SERIES = (10, 100, 1000, 3000, 10000)  # N for the cost-per-packet-against-N series
FLOWS_RATE_MBPS = 10000


# ------------------------------------------------------------------ one run each

def _child(sim: str, scenario_file: Path) -> dict:
    proc = subprocess.run([sys.executable, str(HERE / "child.py"), sim, str(scenario_file)],
                          capture_output=True, text=True, timeout=CHILD_TIMEOUT_S)
    if proc.returncode != 0:
        raise RuntimeError(f"{LABEL[sim]} failed: " + (proc.stderr.strip().splitlines() or ["?"])[-1])
    return json.loads(proc.stdout.strip().splitlines()[-1])


def run_once(sim: str, scenario_file: Path, ns3_plan: Path | None) -> dict:
    if sim == "ns3":
        return ns3.run(ns3_plan)
    return _child(sim, scenario_file)


def why_not(sim: str, sc: dict, workdir: Path) -> tuple[str | None, Path | None]:
    """(reason this simulator cannot run `sc`, or None; the ns-3 plan)."""
    if sim == "ns2":
        from tcplab.backends.ns2 import Ns2Error, _ns_binary, export_tcl

        try:
            _ns_binary(None)
            export_tcl(sc)
        except Ns2Error as exc:
            return str(exc).splitlines()[0], None
        return None, None
    if sim == "ns3":
        try:
            ns3.binary()
            return None, ns3.write_plan(sc, workdir)
        except ns3.Unavailable as exc:
            return str(exc), None
    return None, None


def _note_ns3(sc: dict) -> str | None:
    """What the ns-3 twin runs differently from the scenario (printed with its row)."""
    notes = []
    for label, g in sc["flows"].items():
        if g.get("kind") == "tcp" and (g.get("alpha", 1.0) != 1.0 or g.get("beta", 0.5) != 0.5):
            notes.append(f"flows.{label}: NewReno in place of TCP({g['alpha']:g}, {g['beta']:g})")
    return "; ".join(notes) or None


def measure(name: str, sc: dict, sims: list[str], reps: int, workdir: Path) -> dict:
    """Alternating runs of every available simulator on one resolved scenario."""
    path = workdir / f"{name}.json"
    path.write_text(json.dumps(sc))
    row: dict = {"scenario": name, "duration_s": tcplab.units.parse_duration(sc["duration"]),
                 "flows": sum(int(g.get("count", 1)) for g in sc["flows"].values()), "sims": {}}
    avail, plans = [], {}
    for sim in sims:
        reason, plan = why_not(sim, sc, workdir)
        if reason:
            row["sims"][sim] = {"unavailable": reason}
        else:
            avail.append(sim)
            plans[sim] = plan
    runs: dict[str, list[dict]] = {s: [] for s in avail}
    for _ in range(reps):  # alternate, so load changes hit every simulator alike
        for sim in list(avail):
            try:
                runs[sim].append(run_once(sim, path, plans.get(sim)))
            except (RuntimeError, subprocess.TimeoutExpired) as exc:
                row["sims"][sim] = {"unavailable": f"failed: {exc}"}
                avail.remove(sim)
    for sim in avail:
        rs = runs[sim]
        walls = [r["wall_s"] for r in rs]
        med = statistics.median(walls)
        last = rs[-1]
        cpus = [r["cpu_s"] for r in rs]
        d = {"wall_s": med, "spread_s": max(walls) - min(walls), "walls_s": walls,
             "cpu_s": statistics.median(cpus), "cpu_spread_s": max(cpus) - min(cpus),
             "delivered": last["delivered"], "events": last.get("events"),
             # per CPU second of the whole run (set-up and, for tcplab, the Python around
             # the engine included): robust on a shared machine, and conservative
             "events_per_s": last["events"] / statistics.median(cpus) if last.get("events") else None,
             "packets_per_s": last["delivered"] / statistics.median(cpus) if min(cpus) > 0 else None,
             "s_per_packet": med / last["delivered"] if last["delivered"] else None,
             "peak_rss_mb": max((r["peak_rss_mb"] for r in rs if r.get("peak_rss_mb") is not None),
                                default=None)}
        for k in ("engine_s", "run_s", "setup_s", "run_rss_mb", "goodput"):
            if last.get(k) is not None:
                d[k] = statistics.median([r[k] for r in rs]) if k != "goodput" else last[k]
        if sim == "ns3":
            d["note"] = _note_ns3(sc)
        row["sims"][sim] = d
    base = row["sims"].get("tcplab", {})
    for sim in ("ns2", "ns3"):
        other = row["sims"].get(sim, {})
        if "wall_s" in base and "wall_s" in other:
            row[f"ratio_{sim}"] = other["wall_s"] / base["wall_s"]
            row[f"ratio_{sim}_cpu"] = other["cpu_s"] / base["cpu_s"]
            if base["s_per_packet"] and other["s_per_packet"]:
                row[f"ratio_{sim}_per_packet"] = other["s_per_packet"] / base["s_per_packet"]
                row[f"ratio_{sim}_cpu_per_packet"] = (other["cpu_s"] / other["delivered"]) / \
                    (base["cpu_s"] / base["delivered"])
    return row


# ------------------------------------------------------------------ printing

def _fmt_sim(sim: str, d: dict) -> str:
    if "unavailable" in d:
        return f"  {LABEL[sim]:7s} n/a: {d['unavailable']}"
    ev = f"{d['events_per_s'] / 1e6:5.2f} M ev/cpu-s" if d.get("events_per_s") else "   — ev/cpu-s   "
    mem = (f"peak {d['peak_rss_mb']:6.0f} MB" if d.get("peak_rss_mb") is not None
           else "peak n/a (needs /usr/bin/time)")
    if "run_rss_mb" in d:
        mem += f" (run +{d['run_rss_mb']:.0f})"
    s = (f"  {LABEL[sim]:7s} {d['wall_s']:8.3f} s ±{d['spread_s']:.3f}  cpu {d['cpu_s']:8.3f} s  "
         f"{d['delivered']:>10d} pkts  "
         f"{(d['packets_per_s'] or 0) / 1e6:6.3f} M pkt/cpu-s  {ev}  {mem}")
    if d.get("note"):
        s += f"\n          ({d['note']})"
    return s


def print_row(row: dict) -> None:
    print(f"{row['scenario']}  ({row['flows']} flows, {row['duration_s']:g} s simulated)")
    if "skipped" in row:
        print(f"  skipped: {row['skipped']}")
        return
    for sim, d in row["sims"].items():
        print(_fmt_sim(sim, d))
    for sim in ("ns2", "ns3"):
        if f"ratio_{sim}" in row:
            pp = row.get(f"ratio_{sim}_per_packet")
            cp = row.get(f"ratio_{sim}_cpu_per_packet")
            print(f"  {LABEL[sim]}/tcplab  {row[f'ratio_{sim}_cpu']:6.1f}x CPU, {row[f'ratio_{sim}']:6.1f}x wall"
                  + (f"; per delivered packet {cp:6.1f}x CPU, {pp:6.1f}x wall" if pp else ""))
    print(flush=True)


def markdown(rows: list[dict]) -> str:
    """The README's table: CPU time (robust on a shared machine) and wall time."""
    lines = ["| scenario | packets delivered tcplab / ns-2 / ns-3 | CPU s tcplab / ns-2 / ns-3 "
             "| ns-2 ÷ tcplab CPU (wall) | ns-3 ÷ tcplab CPU per packet (wall per packet) "
             "| peak MB tcplab / ns-2 / ns-3 |",
             "| --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        if "skipped" in r:
            lines.append(f"| {r['scenario']} | {r['skipped']} | | | | |")
            continue
        s = r["sims"]

        def f(key, sim, fmt):
            d = s.get(sim, {})
            return fmt.format(d[key]) if d.get(key) is not None else "—"

        def each(key, fmt):
            return " / ".join(f(key, x, fmt) for x in SIMS)

        r2 = f"{r['ratio_ns2_cpu']:.1f}× ({r['ratio_ns2']:.1f}×)" if "ratio_ns2" in r else "—"
        r3 = (f"{r['ratio_ns3_cpu_per_packet']:.0f}× ({r['ratio_ns3_per_packet']:.0f}×)"
              if "ratio_ns3_per_packet" in r else "—")
        lines.append(f"| {r['scenario']} | {each('delivered', '{:d}')} | {each('cpu_s', '{:.3f}')} | "
                     f"{r2} | {r3} | {each('peak_rss_mb', '{:.0f}')} |")
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------ scenarios

def prepare(name: str, quick: bool) -> tuple[dict | None, str | None]:
    path = HERE / "scenarios" / f"{name}.toml"
    raw = read_toml(path)
    overrides = []
    if quick:
        dur = tcplab.units.parse_duration(raw["duration"]) / 10
        overrides = [f"duration={dur}s", f"warmup={dur / 10}s"]
    try:
        return load_scenario(path, overrides), None
    except UserError as exc:
        queue = str(raw.get("topology", {}).get("bottleneck", {}).get("queue", ""))
        if queue == "threshold":
            return None, f"needs threshold dropper (this tcplab says: {str(exc).splitlines()[0]})"
        raise


def scale_packets(rate_mbps: float, base: float) -> float:
    """Packets a scale run aims at: `base` at 1 Mb/s, 5x that at 10 Mb/s, 25x at
    100 Mb/s, so the work spans 25x at every N (a fit in packets needs a range)
    while the shortest tcplab run stays above noise and the longest under ~20 s."""
    return base * 5 ** math.log10(rate_mbps)


def scale_scenario(n: int, rate_mbps: float, packets: float, duration: float | None = None,
                   warmup: float | None = None) -> dict:
    """Reno flows on a dumbbell: bottleneck `rate_mbps`, 20 ms, a buffer of one
    bandwidth-delay product (RTT 60 ms, at least 20 packets), access links 10x faster;
    long enough that about `packets` data packets cross the bottleneck (or `duration` s);
    metrics after a tenth of it (or `warmup` s)."""
    duration = duration or max(20.0, packets * 8000 / (rate_mbps * 1e6))
    bdp = max(20, int(rate_mbps * 1e6 * 0.06 / 8000))
    fast = {"rate": f"{rate_mbps * 10:g}Mbps", "delay": "5ms", "buffer": 1000}
    sc = {"name": f"scale_n{n}_{rate_mbps:g}mbps", "seed": 1, "duration": f"{duration:g}s",
          "warmup": f"{duration / 10 if warmup is None else warmup:g}s",
          "topology": {"bottleneck": {"rate": f"{rate_mbps:g}Mbps", "delay": "20ms", "buffer": bdp},
                       "access": fast, "sink_access": dict(fast)},
          "flows": {"reno": {"kind": "tcp", "variant": "reno", "count": n, "window": 10000,
                             "start_jitter": "1s"}}}
    return load_scenario(apply_overrides(sc, []))


def fit(points: list[tuple[float, float]]) -> dict | None:
    """Least squares t = a + b * packets (t: CPU seconds), and the log-log slope."""
    import numpy as np

    if len(points) < 2:
        return None
    x = np.array([p[0] for p in points], float)
    y = np.array([p[1] for p in points], float)
    b, a = np.polyfit(x, y, 1)
    slope = np.polyfit(np.log(x), np.log(y), 1)[0] if (x > 0).all() and (y > 0).all() else None
    return {"intercept_s": float(a), "s_per_packet": float(b),
            "loglog_slope": float(slope) if slope is not None else None}


def plot_scale(rows: list[dict], out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7.2, 5.0))
    colors = {"tcplab": "tab:blue", "ns2": "tab:orange", "ns3": "tab:green"}
    for sim in SIMS:
        for n, marker in zip(SCALE_FLOWS, "os^"):
            pts = sorted((r["sims"][sim]["delivered"], r["sims"][sim]["cpu_s"])
                         for r in rows if r["n"] == n and "wall_s" in r["sims"].get(sim, {}))
            if pts:
                ax.loglog([p[0] for p in pts], [p[1] for p in pts], marker=marker, linestyle="-",
                          color=colors[sim], label=f"{LABEL[sim]}, N = {n}")
    ax.set_xlabel("packets delivered")
    ax.set_ylabel("CPU time (s)")
    ax.set_title("Cost against work (points: 1, 10, 100 Mb/s)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8, ncol=2)
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    plt.close(fig)


def run_scale(sims: list[str], reps: int, base: float, budget_s: float, workdir: Path) -> dict:
    """The scale grid. A simulator is skipped at a point (visibly) when its cost per
    packet at the previous point of the same N projects a run longer than `budget_s`."""
    rows = []
    print(f"== scale series ({base:.0e} packets at 1 Mb/s, x5 per decade of rate; "
          f"budget {budget_s:g} s a run)")
    print(f"{'N':>5s} {'rate':>8s} {'sim s':>8s}  " + "  ".join(
        f"{LABEL[s]:>7s} cpu s {'pkts':>9s} {'µs/pkt':>7s}" for s in sims))
    for n in SCALE_FLOWS:
        last: dict[str, float] = {}
        for rate in SCALE_RATES_MBPS:
            packets = scale_packets(rate, base)
            sc = scale_scenario(n, rate, packets)
            skip = [s for s in sims if s != "tcplab" and s in last and last[s] * packets > budget_s]
            row = measure(sc["name"], sc, [s for s in sims if s not in skip], reps, workdir)
            for s in skip:
                row["sims"][s] = {"unavailable": f"skipped: projected {last[s] * packets:.0f} s "
                                                 f"> --scale-budget {budget_s:g} s"}
            row.update(n=n, rate_mbps=rate)
            rows.append(row)
            cells = []
            for s in sims:
                d = row["sims"].get(s, {})
                if "wall_s" in d and d["s_per_packet"]:
                    last[s] = d["s_per_packet"]
                cells.append(f"{d['cpu_s']:11.2f}   {d['delivered']:9d} {d['cpu_s'] / d['delivered'] * 1e6:7.2f}"
                             if "wall_s" in d and d["delivered"] else f"{'n/a':>11s}   {'':9s} {'':7s}")
            print(f"{n:5d} {rate:6g}Mb {row['duration_s']:8g}  " + "  ".join(cells), flush=True)
            for s in sims:
                if "unavailable" in row["sims"].get(s, {}):
                    print(f"      {LABEL[s]}: {row['sims'][s]['unavailable']}")
    fits: dict = {}
    for s in sims:
        for n in (None,) + SCALE_FLOWS:
            pts = [(r["sims"][s]["delivered"], r["sims"][s]["cpu_s"]) for r in rows
                   if "wall_s" in r["sims"].get(s, {}) and n in (None, r["n"])]
            f = fit(pts) if len(pts) >= 3 or (n is not None and len(pts) >= 2) else None
            fits[f"{s}/{'all' if n is None else n}"] = f
            if f:
                print(f"  fit {LABEL[s]:7s} {'all N' if n is None else f'N = {n}':9s} cpu = {f['intercept_s']:7.3f} s"
                      f" + {f['s_per_packet'] * 1e6:7.3f} µs x packets"
                      + (f"; log-log slope {f['loglog_slope']:.2f} (1 = linear)"
                         if f["loglog_slope"] is not None else ""))
    RESULTS.mkdir(parents=True, exist_ok=True)
    plot_scale(rows, RESULTS / "scale.png")
    print(f"  plot: {RESULTS / 'scale.png'}")
    return {"rows": rows, "fits": fits}


# ------------------------------------------------------------------ cost per packet against N

def _pair(sc: dict, name: str, reps: int, htsim_bin: str | None, workdir: Path) -> dict:
    """Alternating runs of tcplab and (if given) the htsim twin's lean form on one
    dumbbell: CPU ns per delivered packet of each (medians)."""
    path = workdir / f"{name}.json"
    path.write_text(json.dumps(sc))
    runs: dict[str, list[dict]] = {"tcplab": [], "htsim": []}
    why = None
    for _ in range(reps):
        runs["tcplab"].append(_child("tcplab", path))
        if htsim_bin and why is None:
            try:
                runs["htsim"].append(htsim.run(sc, lean=True, given=htsim_bin))
            except (htsim.Unavailable, RuntimeError, subprocess.TimeoutExpired) as exc:
                why = str(exc)
    row: dict = {"scenario": name, "sims": {}}
    for sim, rs in runs.items():
        if rs:
            cpu = statistics.median(r["cpu_s"] for r in rs)
            row["sims"][sim] = {"cpu_s": cpu, "delivered": rs[-1]["delivered"],
                                "ns_per_packet": cpu / rs[-1]["delivered"] * 1e9,
                                "peak_rss_mb": rs[-1].get("peak_rss_mb")}
    if why:
        row["sims"]["htsim"] = {"unavailable": why}
    return row


def flows_series(reps: int, seconds: float, htsim_bin: str | None, workdir: Path) -> dict:
    """CPU time per delivered packet against the number of flows N at 10 Gb/s (the
    bottleneck and the work per packet fixed, only N moving), tcplab and the htsim twin,
    with a plot in bench/results/scale-flows.png."""
    print(f"== cost per packet against N ({FLOWS_RATE_MBPS / 1000:g} Gb/s, {seconds:g} s simulated, "
          f"{reps} alternating run(s) per point)")
    print(f"{'N':>6s}  {'tcplab ns/pkt':>13s} {'pkts':>10s} {'RSS MB':>7s}  {'htsim ns/pkt':>12s} "
          f"{'pkts':>10s}  {'htsim/tcplab':>12s}")
    rows = []
    for n in FLOWS_SERIES:
        # no warm-up: the packets counted are every packet the run's CPU time paid for,
        # as the twin counts them
        sc = scale_scenario(n, FLOWS_RATE_MBPS, 0, duration=seconds, warmup=0)
        row = _pair(sc, sc["name"], reps, htsim_bin, workdir)
        row["n"] = n
        rows.append(row)
        t, h = row["sims"]["tcplab"], row["sims"].get("htsim", {})
        hcells = (f"{h['ns_per_packet']:12.0f} {h['delivered']:10d}  {h['ns_per_packet'] / t['ns_per_packet']:11.2f}x"
                  if "ns_per_packet" in h else f"{'n/a':>12s}")
        print(f"{n:6d}  {t['ns_per_packet']:13.0f} {t['delivered']:10d} {t['peak_rss_mb'] or 0:7.0f}  {hcells}",
              flush=True)
    first = rows[0]["sims"]["tcplab"]["ns_per_packet"]
    print("  tcplab, cost per packet relative to N = {}: ".format(FLOWS_SERIES[0])
          + ", ".join(f"N = {r['n']} {r['sims']['tcplab']['ns_per_packet'] / first:.2f}x" for r in rows))
    for r in rows:
        if "unavailable" in r["sims"].get("htsim", {}):
            print(f"  htsim: {r['sims']['htsim']['unavailable']}")
            break
    RESULTS.mkdir(parents=True, exist_ok=True)
    plot_flows(rows, RESULTS / "scale-flows.png")
    print(f"  plot: {RESULTS / 'scale-flows.png'}")
    return {"rate_mbps": FLOWS_RATE_MBPS, "seconds": seconds, "rows": rows}


def plot_flows(rows: list[dict], out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7.2, 4.6))
    for sim, color, label in (("tcplab", "tab:blue", "tcplab (packet engine)"),
                              ("htsim", "tab:red", "htsim twin, lean form")):
        pts = [(r["n"], r["sims"][sim]["ns_per_packet"]) for r in rows if "ns_per_packet" in r["sims"].get(sim, {})]
        if pts:
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", color=color, label=label)
    base = rows[0]["sims"]["tcplab"]["ns_per_packet"]
    ax.axhline(1.5 * base, color="tab:blue", linestyle=":", linewidth=1,
               label=f"1.5 x tcplab at N = {rows[0]['n']} (issue's target)")
    ax.set_xscale("log")
    ax.set_ylim(bottom=0)
    ax.set_xlabel("flows N (dumbbell, 10 Gb/s bottleneck)")
    ax.set_ylabel("CPU ns per delivered packet")
    ax.set_title("Cost per packet as the number of flows grows")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    plt.close(fig)


def htsim_pairs(names: list[str], reps: int, htsim_bin: str, workdir: Path) -> list[dict]:
    """tcplab against the htsim twin's lean form on the single-group dumbbell scenarios
    (b and c), alternating runs: the per-packet CPU ratio."""
    out = []
    for name in names:
        sc, _ = prepare(name, False)
        if sc is None or len([g for g in sc["flows"].values() if g.get("kind") == "tcp"]) != 1 \
                or any(g.get("kind") != "tcp" for g in sc["flows"].values()):
            continue
        row = _pair(sc, name, reps, htsim_bin, workdir)
        t, h = row["sims"]["tcplab"], row["sims"].get("htsim", {})
        if "ns_per_packet" in h:
            row["ratio_htsim_cpu_per_packet"] = h["ns_per_packet"] / t["ns_per_packet"]
            print(f"{name}: tcplab {t['ns_per_packet']:.0f} ns/pkt ({t['delivered']} pkts), htsim lean "
                  f"{h['ns_per_packet']:.0f} ns/pkt ({h['delivered']} pkts): "
                  f"htsim/tcplab {row['ratio_htsim_cpu_per_packet']:.2f}x per packet", flush=True)
        else:
            print(f"{name}: htsim n/a: {h.get('unavailable')}")
        out.append(row)
    return out


# ------------------------------------------------------------------ sweep throughput

def sweep_scaling(mode: str, jobs_list: list[int]) -> list[dict]:
    """Wall time of `tcplab reproduce all --MODE` with each worker count, each into a
    fresh report directory with a fresh cache (so everything is computed again)."""
    out = []
    exe = Path(sys.executable).parent / "tcplab"
    for jobs in jobs_list:
        with tempfile.TemporaryDirectory(prefix="tcplab-sweep-") as d:
            r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
            t0 = time.perf_counter()
            proc = subprocess.run([str(exe), "reproduce", "all", f"--{mode}", "--jobs", str(jobs),
                                   "--out", d, "--cache", str(Path(d) / "cache")], capture_output=True, text=True)
            wall = time.perf_counter() - t0
            r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (r1.ru_utime + r1.ru_stime) - (r0.ru_utime + r0.ru_stime)
        out.append({"mode": mode, "jobs": jobs, "wall_s": wall, "cpu_s": cpu, "exit": proc.returncode})
        print(f"tcplab reproduce all --{mode} --jobs {jobs}: {wall:.1f} s wall, {cpu:.1f} s CPU "
              f"(exit {proc.returncode})", flush=True)
    if len(out) > 1 and out[0]["wall_s"] > 0:
        print(f"speed-up {out[0]['wall_s'] / out[-1]['wall_s']:.2f}x with {jobs_list[-1]} workers")
    return out


# ------------------------------------------------------------------ main

def machine() -> str:
    cpu = "?"
    try:
        for ln in Path("/proc/cpuinfo").read_text().splitlines():
            if ln.startswith("model name"):
                cpu = ln.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return f"{cpu}, {os.cpu_count()} cores, {mem:.0f} GiB"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=5, help="alternating runs per scenario (default 5)")
    ap.add_argument("--quick", action="store_true",
                    help="a tenth of each scenario's duration, tcplab and ns-2, no scale series")
    ap.add_argument("--only", default="", help="comma-separated scenario names")
    ap.add_argument("--sims", default=None,
                    help="comma-separated simulators (tcplab,ns2,ns3; default all, --quick: tcplab,ns2)")
    ap.add_argument("--no-scale", action="store_true", help="skip the scale series")
    ap.add_argument("--scale-only", action="store_true", help="only the scale series")
    ap.add_argument("--scale-reps", type=int, default=1, help="runs per scale point (default 1)")
    ap.add_argument("--scale-packets", type=float, default=2e5,
                    help="packets a scale run at 1 Mb/s delivers, about; x5 at 10 Mb/s, x25 at "
                         "100 Mb/s (default 2e5)")
    ap.add_argument("--scale-budget", type=float, default=600,
                    help="skip ns-2/ns-3 at a scale point projected to run longer (s, default 600)")
    ap.add_argument("--flows-series", action="store_true",
                    help="only the cost per packet against N (10 ... 10^4 flows at 10 Gb/s), "
                         "with the htsim twin if given")
    ap.add_argument("--flows-seconds", type=float, default=10.0,
                    help="simulated seconds per point of --flows-series (default 10)")
    ap.add_argument("--htsim", default=os.environ.get(htsim.ENV),
                    help=f"the htsim twin's binary (default ${htsim.ENV}; built outside the "
                         "repository, see bench/NOTES.md): adds htsim to --flows-series, and "
                         "paired tcplab/htsim runs on (b) and (c) after the scenarios")
    ap.add_argument("--min-ratio", type=float, default=None,
                    help="fail (exit 1) if any scenario's ns-2/tcplab CPU-time ratio is below this")
    ap.add_argument("--sweep-scaling", action="store_true",
                    help="time `tcplab reproduce all` with 1 and 2 workers instead")
    ap.add_argument("--sweep-mode", choices=("quick", "full"), default="quick")
    ap.add_argument("--json", default=None, metavar="FILE",
                    help="results as JSON (default bench/results/results.json)")
    args = ap.parse_args(argv)

    print(f"machine: {machine()}; ns-3: "
          + (f"libns3-dev {ns3.version()}" if ns3.HEADER.exists() else "not installed"), flush=True)
    if args.sweep_scaling:
        rows = sweep_scaling(args.sweep_mode, [1, 2])
        RESULTS.mkdir(parents=True, exist_ok=True)
        (RESULTS / f"sweep-{args.sweep_mode}.json").write_text(json.dumps(rows, indent=2) + "\n")
        return 0 if all(r["exit"] == 0 for r in rows) else 1

    if args.flows_series:
        with tempfile.TemporaryDirectory(prefix="tcplab-bench-") as tmp:
            rows = flows_series(args.scale_reps, args.flows_seconds, args.htsim, Path(tmp))
        RESULTS.mkdir(parents=True, exist_ok=True)
        (RESULTS / "scale-flows.json").write_text(json.dumps(rows, indent=2) + "\n")
        return 0

    sims = (args.sims.split(",") if args.sims else
            (["tcplab", "ns2"] if args.quick else list(SIMS)))
    bad = [s for s in sims if s not in SIMS]
    if bad or "tcplab" not in sims:
        ap.error(f"--sims: expected tcplab and any of ns2, ns3; got {args.sims!r}")
    names = [n for n in (args.only.split(",") if args.only else SCENARIOS) if n]
    results: dict = {"machine": machine(), "quick": args.quick, "reps": args.reps, "scenarios": []}
    with tempfile.TemporaryDirectory(prefix="tcplab-bench-") as tmp:
        work = Path(tmp)
        if not args.scale_only:
            for name in names:
                sc, skipped = prepare(name, args.quick)
                if sc is None:
                    row = {"scenario": name, "skipped": skipped, "flows": 0, "duration_s": 0}
                else:
                    row = measure(name, sc, sims, args.reps, work)
                results["scenarios"].append(row)
                print_row(row)
            print(markdown(results["scenarios"]))
            if args.htsim and not args.quick:
                results["htsim"] = htsim_pairs([n for n in names if n[0] in "bc"], args.reps,
                                               args.htsim, work)
        if not (args.quick or args.no_scale):
            results["scale"] = run_scale(sims, args.scale_reps, args.scale_packets, args.scale_budget, work)
    out = Path(args.json) if args.json else RESULTS / ("results-quick.json" if args.quick else "results.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=2) + "\n")
    (out.parent / "table.md").write_text(markdown(results["scenarios"]))
    if args.min_ratio is not None:
        measured = [r for r in results["scenarios"] if "ratio_ns2_cpu" in r]
        if not measured:
            print("FAIL: --min-ratio given but no ns-2/tcplab ratio was measured")
            return 1
        slow = [r for r in measured if r["ratio_ns2_cpu"] < args.min_ratio]
        if slow:
            print(f"FAIL: ns-2/tcplab CPU-time ratio below {args.min_ratio} for "
                  + ", ".join(f"{r['scenario']} ({r['ratio_ns2_cpu']:.1f}x)" for r in slow))
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
