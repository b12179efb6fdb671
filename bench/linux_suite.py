"""The Linux-comparison suite: the packet engine under the `linux` profile
against the real kernel (`--engine linux`), case by case.

Each case is one dumbbell (bottleneck rate, round-trip propagation, buffer in
bandwidth-delay products, N flows, congestion control), run on `linux` and
on `packet` with the same scenario file — the bottleneck is the same code on
both, so only the TCP differs. Per case and engine it stores, in a results
store (`tcplab results DIR` reads it): goodput per flow and in total, Jain's
index, the retransmission rate, the mean queueing delay (estimated from the
flows' packets in flight above the path's BDP, the one series both engines
record) and the cwnd traces; per case it compares the engines (relative
goodput error, cwnd-trajectory distance: the mean absolute difference of the
time-aligned cwnd summed over a case's flows, divided by the BDP) and draws
the overlaid cwnd traces. It prints the median and 95th-percentile relative
goodput error per congestion control.

The kernel runs each case twice (`--no-repeat`: once): its second run, compared
with its first by the same measures, is the noise floor — how far two runs of
the real thing differ — printed beside the packet engine's error. A per-flow
error or a share difference no larger than the kernel's own is not a
difference the comparison can see.

    sudo .venv/bin/python bench/linux_suite.py --out runs/linux-suite           # default grid, ~35 min
    sudo .venv/bin/python bench/linux_suite.py --out runs/linux-suite --grid ci  # one 10 s case
    sudo .venv/bin/python bench/linux_suite.py --out runs/linux-suite --grid quick
    .venv/bin/python bench/linux_suite.py --out runs/linux-suite --list          # the cases, nothing run

Resumable: a case already stored (same resolved scenario, engine, engine
version and build) is not run again; kill it and run it again to go on.
A case whose congestion control an engine lacks (the packet engine has reno
and cubic; the kernel what /proc/sys/net/ipv4/tcp_available_congestion_control
lists) is skipped and listed as skipped.

Real time: every linux run takes its duration in wall time, and the emulator's
timing suffers on a loaded machine (`metrics.linux.emulator` records how late
deliveries were); the summary prints the load average seen.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent

PACKET = 1000  # bytes on the wire
ACCESS_DELAY_S = 0.001  # each access link, each way
RATES = {"10M": 10e6, "100M": 100e6}
RTTS = {"10ms": 0.010, "50ms": 0.050, "200ms": 0.200}
BUFFERS = {"0.25bdp": 0.25, "1bdp": 1.0, "4bdp": 4.0}
COUNTS = (1, 4, 16)
CCS = ("reno", "cubic", "bbr", "cubic+bbr")


def case_id(rate: str, rtt: str, buf: str, n: int, cc: str) -> str:
    return f"{rate}-{rtt}-{buf}-n{n}-{cc}"


def grid(name: str) -> list[tuple[str, str, str, int, str]]:
    """The cases of a grid: (rate, rtt, buffer, N, cc)."""
    if name == "full":  # every combination: 216 cases, well over an hour of real time
        return list(itertools.product(RATES, RTTS, BUFFERS, COUNTS, CCS))
    if name == "ci":
        return [("10M", "50ms", "1bdp", 1, "cubic")]
    if name == "quick":  # the loaded-machine subset: N = 1 and 4, reno and cubic
        return [("10M", "50ms", "1bdp", n, cc) for cc in ("reno", "cubic") for n in (1, 4)]
    if name != "default":
        raise SystemExit(f"--grid: unknown grid {name!r}; expected default, quick, ci or full")
    # one axis at a time around 10 Mb/s, 50 ms, 1 BDP, N = 4, and every rate × RTT
    out = []
    for cc in CCS:
        for rate, rtt in itertools.product(RATES, RTTS):
            out.append((rate, rtt, "1bdp", 4, cc))
        for buf in ("0.25bdp", "4bdp"):
            out.append(("10M", "50ms", buf, 4, cc))
        for n in (1, 16):
            out.append(("10M", "50ms", "1bdp", n, cc))
    return out


def bdp_packets(rate: str, rtt: str) -> float:
    return RATES[rate] * RTTS[rtt] / (8 * PACKET)


def scenario(rate: str, rtt: str, buf: str, n: int, cc: str, duration_s: float, warmup_s: float) -> dict:
    """The case as a scenario dict (Linux's defaults on every engine)."""
    r = RATES[rate]
    one_way = RTTS[rtt] / 2 - 2 * ACCESS_DELAY_S
    buffer = max(2, round(BUFFERS[buf] * bdp_packets(rate, rtt)))
    fast = {"rate": f"{10 * r / 1e6:g}Mbps", "delay": f"{ACCESS_DELAY_S * 1e3:g}ms", "buffer": 10000}
    groups = {}
    if "+" in cc:
        for k, name in enumerate(cc.split("+")):
            groups[name] = {"kind": "tcp", "cc": name, "profile": "linux", "count": max(1, n // 2),
                            "start_jitter": "0.5s"}
    else:
        groups[cc] = {"kind": "tcp", "cc": cc, "profile": "linux", "count": n, "start_jitter": "0.5s"}
    return {
        "name": case_id(rate, rtt, buf, n, cc),
        "seed": 1,
        "duration": f"{duration_s:g}s",
        "warmup": f"{warmup_s:g}s",
        "topology": {
            "bottleneck": {"rate": f"{r / 1e6:g}Mbps", "delay": f"{one_way * 1e3:g}ms", "buffer": buffer},
            "access": dict(fast),
            "sink_access": dict(fast),
        },
        "flows": groups,
        "trace": {"series": ["cwnd"], "interval": "0.1s"},
    }


def kernel_ccs() -> set[str]:
    try:
        return set(Path("/proc/sys/net/ipv4/tcp_available_congestion_control").read_text().split())
    except OSError:
        return set()


def packet_ccs() -> set[str]:
    """The congestion controls the packet engine's schema accepts (probed, not listed)."""
    from tcplab.errors import UserError
    from tcplab.scenario import load_scenario

    have = set()
    for cc in ("reno", "cubic", "bbr", "dctcp"):
        try:
            load_scenario(scenario("10M", "50ms", "1bdp", 1, cc, 2, 1))
            have.add(cc)
        except UserError:
            pass
    return have


def why_skip(cc: str, engine: str, have: dict[str, set[str]]) -> str | None:
    missing = [c for c in cc.split("+") if c not in have[engine]]
    if missing:
        return f"the {engine} engine has no cc {missing[0]!r}"
    return None


# ------------------------------------------------------------------ metrics

def jain(x: np.ndarray) -> float:
    x = np.asarray(x, dtype=float)
    return float(x.sum() ** 2 / (len(x) * (x ** 2).sum())) if len(x) and (x ** 2).sum() > 0 else float("nan")


def cwnd_series(res, warmup_s: float, end_s: float, step: float = 0.1) -> dict[int, np.ndarray]:
    """flow id → cwnd (packets) on the grid warmup, warmup + step, …, end (last value held)."""
    grid_t = np.arange(warmup_s, end_s + 1e-9, step)
    tcp = res.traces.get("tcp")
    out = {}
    if tcp is None or not len(tcp):
        return out
    for fid, d in tcp.groupby("flow"):
        d = d.sort_values("t")
        idx = np.searchsorted(d["t"].to_numpy(), grid_t, side="right") - 1
        vals = d["cwnd"].to_numpy(dtype=float)
        out[int(fid)] = np.where(idx >= 0, vals[np.clip(idx, 0, None)], np.nan)
    return out


def inflight_total(res, warmup_s: float, end_s: float, step: float = 0.1) -> np.ndarray:
    grid_t = np.arange(warmup_s, end_s + 1e-9, step)
    tcp = res.traces.get("tcp")
    total = np.zeros(len(grid_t))
    if tcp is None or "inflight" not in tcp:
        return total * np.nan
    for _, d in tcp.groupby("flow"):
        d = d.sort_values("t")
        idx = np.searchsorted(d["t"].to_numpy(), grid_t, side="right") - 1
        vals = d["inflight"].to_numpy(dtype=float)
        total += np.where(idx >= 0, vals[np.clip(idx, 0, None)], 0.0)
    return total


def engine_metrics(res, case: tuple, warmup_s: float, duration_s: float) -> dict:
    rate, rtt, *_ = case
    tcp = res.flows[res.flows["kind"] == "tcp"]
    good = tcp["goodput_bps"].to_numpy(dtype=float)
    # the kernel reports no packets sent: retransmissions per packet delivered
    sent = float(tcp["delivered_packets"].sum())
    rtx = float(tcp["retransmissions"].sum())
    bdp = bdp_packets(rate, rtt)
    queue = np.clip(inflight_total(res, warmup_s, duration_s) - bdp, 0, None)
    return {
        "goodput_bps": float(good.sum()),
        "goodput_per_flow_bps": [float(g) for g in good],
        "goodput_by_cc_bps": {str(g): float(d["goodput_bps"].sum()) for g, d in tcp.groupby("group")},
        "jain_index": jain(good),
        "retransmission_rate": rtx / sent if sent else float("nan"),
        # packets in flight beyond the BDP wait in the bottleneck's queue
        "queueing_delay_s": float(np.nanmean(queue)) * PACKET * 8 / RATES[rate] if len(queue) else float("nan"),
    }


def cwnd_distance(a, b, case: tuple, warmup_s: float, duration_s: float) -> float:
    """Mean |cwnd_a(t) − cwnd_b(t)| summed over the case's flows, over the BDP."""
    rate, rtt, *_ = case
    ca, cb = cwnd_series(a, warmup_s, duration_s), cwnd_series(b, warmup_s, duration_s)
    common = sorted(set(ca) & set(cb))
    if not common:
        return float("nan")
    diff = np.nansum([np.abs(ca[f] - cb[f]) for f in common], axis=0)
    return float(np.nanmean(diff) / bdp_packets(rate, rtt))


def plot_case(name: str, runs: dict, out: Path, warmup_s: float, duration_s: float) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 3.5))
    colors = {"linux": "black", "packet": "tab:red", "linux-repeat": "tab:grey"}
    for engine, res in runs.items():
        tcp = res.traces.get("tcp")
        if tcp is None:
            continue
        for k, (fid, d) in enumerate(tcp.groupby("flow")):
            if k >= 4:  # four flows are enough to see the shape
                break
            ax.step(d["t"], d["cwnd"], where="post", lw=0.8, color=colors[engine], alpha=0.9 - 0.15 * k,
                    label=engine if k == 0 else None)
    ax.axvline(warmup_s, color="grey", lw=0.5, ls=":")
    ax.set_xlabel("time (s)")
    ax.set_ylabel("cwnd (packets)")
    ax.set_title(name)
    ax.legend(loc="upper right")
    fig.tight_layout()
    path = out / "plots" / f"{name}.png"
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


# ------------------------------------------------------------------ the run

def run_case(case, args, store, have, stored, build) -> dict:
    import tcplab
    from tcplab.scenario import load_scenario
    from tcplab.sweep.engines import engine_version
    from tcplab.sweep.keys import point_key

    name = case_id(*case)
    sc_dict = scenario(*case, args.duration, args.warmup)
    row = {"case": name, "rate": case[0], "rtt": case[1], "buffer": case[2], "n": case[3], "cc": case[4]}
    runs = {}
    # a case one engine cannot run has nothing to compare: neither runs it
    skips = {e: why_skip(case[4], e, have) for e in ("linux", "packet")}
    if any(skips.values()):
        row.update({f"{e}_skipped": why for e, why in skips.items() if why})
        return row
    # the kernel twice: what its second run differs from its first by is the
    # noise floor the packet engine's error is read against
    labels = ("linux", "packet", "linux-repeat") if args.repeat else ("linux", "packet")
    for label in labels:
        engine = label.split("-")[0]
        sc = load_scenario(sc_dict)
        key = point_key(sc, engine, engine_version(engine) + ("#repeat" if label != engine else ""), build)
        cached = stored.get(key)
        if cached is not None:
            runs[label] = cached
            continue
        t0 = time.perf_counter()
        try:
            res = tcplab.run(sc_dict, engine=engine)
        except Exception as exc:  # a failed case is stored as failed and reported
            row[f"{label}_error"] = f"{type(exc).__name__}: {exc}"
            store.write_batch([{"key": key, "case": name, "engine": engine, "run": label, "status": "failed",
                                "error": str(exc), "scenario": json.dumps(sc)}])
            continue
        m = engine_metrics(res, case, args.warmup, args.duration)
        rec = {"key": key, "case": name, "engine": engine, "run": label,
               "engine_version": str(res.engine_version),
               "build": build, "status": "ok", "error": "", "wall_s": time.perf_counter() - t0,
               "load_avg": os.getloadavg()[0], **{k: json.dumps(v) if isinstance(v, (list, dict)) else v
                                                    for k, v in m.items()},
               "cwnd_trace": res.traces["tcp"][["t", "flow", "cwnd", "inflight"]].to_json(orient="split"),
               "scenario": json.dumps(sc)}
        if engine == "linux":
            rec["emulator"] = json.dumps((res.metrics.get("linux") or {}).get("emulator"), default=str)
        store.write_batch([rec])
        runs[label] = _Stored(rec)
    for label, r in runs.items():
        row[label] = r.metrics
    if "linux" in runs and "packet" in runs:
        lin = runs["linux"]
        row.update(compare(lin, runs["packet"], case, args))
        row["jain_linux"], row["jain_packet"] = lin.metrics["jain_index"], runs["packet"].metrics["jain_index"]
        if "linux-repeat" in runs:
            # the same measures between the kernel's two runs
            row.update({f"kernel_{k}": v for k, v in compare(lin, runs["linux-repeat"], case, args).items()})
        row["plot"] = str(plot_case(name, runs, Path(args.out), args.warmup, args.duration))
    return row


def compare(ref, other, case, args) -> dict:
    """`other` against `ref`: relative total goodput error, mean relative per-flow
    error, cwnd distance and (mixed cases) the second cc's share difference."""
    out = {}
    gl, gp = ref.metrics["goodput_bps"], other.metrics["goodput_bps"]
    out["goodput_error"] = (gp - gl) / gl if gl > 0 else float("nan")
    # per flow (the same flow ids start at the same instants on every run)
    fl = np.array(ref.metrics["goodput_per_flow_bps"])
    fp = np.array(other.metrics["goodput_per_flow_bps"])
    if len(fl) == len(fp) and (fl > 0).all():
        out["flow_goodput_error"] = float(np.mean(np.abs(fp - fl) / fl))
    out["cwnd_distance_bdp"] = cwnd_distance(ref, other, case, args.warmup, args.duration)
    if "+" in case[4]:
        def share(m, cc):
            by = m["goodput_by_cc_bps"]
            return by.get(cc, 0.0) / max(1e-9, sum(by.values()))
        second = case[4].split("+")[1]
        out["share"] = share(other.metrics, second)
        out["share_error"] = out["share"] - share(ref.metrics, second)
    return out


class _Stored:
    """A run as the store holds it: its metrics and its cwnd trace."""

    def __init__(self, rec: dict):
        import io

        import pandas as pd

        self.metrics = {k: (json.loads(rec[k]) if k in ("goodput_per_flow_bps", "goodput_by_cc_bps") else rec[k])
                        for k in ("goodput_bps", "goodput_per_flow_bps", "goodput_by_cc_bps", "jain_index",
                                  "retransmission_rate", "queueing_delay_s")}
        self.traces = {"tcp": pd.read_json(io.StringIO(rec["cwnd_trace"]), orient="split")}


def stored_runs(store) -> dict:
    if not store.files():
        return {}
    df = store.frame()
    df = df[df["status"] == "ok"]
    return {r["key"]: _Stored(r) for r in df.to_dict("records")}


def summarize(rows: list[dict]) -> dict:
    by_cc: dict[str, list[dict]] = {}
    for r in rows:
        if "goodput_error" in r and math.isfinite(r["goodput_error"]):
            by_cc.setdefault(r["cc"], []).append(r)
    out = {}
    for cc, rs in sorted(by_cc.items()):
        e = np.array([abs(r["goodput_error"]) for r in rs])
        f = np.array([r.get("flow_goodput_error", np.nan) for r in rs])
        d = np.array([r.get("cwnd_distance_bdp", np.nan) for r in rs])
        worst = sorted(rs, key=lambda r: -abs(r["goodput_error"]))[:3]
        out[cc] = {"cases": len(e), "median": float(np.median(e)), "p95": float(np.percentile(e, 95)),
                   "flow_median": float(np.nanmedian(f)), "flow_p95": float(np.nanpercentile(f, 95)),
                   "cwnd_distance_median": float(np.nanmedian(d)),
                   "worst": [(w["case"], round(w["goodput_error"], 4)) for w in worst]}
        s = np.array([abs(r["share_error"]) for r in rs if "share_error" in r])
        if len(s):
            out[cc]["share_within_005"] = int((s <= 0.05).sum())
            out[cc]["share_error_mean"] = float(s.mean())
        # the kernel against itself (cases run twice)
        ks = [r for r in rs if "kernel_goodput_error" in r]
        if ks:
            ke = np.array([abs(r["kernel_goodput_error"]) for r in ks])
            kf = np.array([r.get("kernel_flow_goodput_error", np.nan) for r in ks])
            kd = np.array([r.get("kernel_cwnd_distance_bdp", np.nan) for r in ks])
            out[cc]["kernel"] = {"cases": len(ks), "median": float(np.median(ke)),
                                 "p95": float(np.percentile(ke, 95)),
                                 "flow_median": float(np.nanmedian(kf)), "flow_p95": float(np.nanpercentile(kf, 95)),
                                 "cwnd_distance_median": float(np.nanmedian(kd))}
            kse = np.array([abs(r["kernel_share_error"]) for r in ks if "kernel_share_error" in r])
            if len(kse):
                out[cc]["kernel"]["share_error_mean"] = float(kse.mean())
                out[cc]["kernel"]["share_within_005"] = int((kse <= 0.05).sum())
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True, help="results directory (store, plots, summary.json)")
    ap.add_argument("--grid", default="default", help="default | quick | ci | full")
    ap.add_argument("--duration", type=float, default=25.0, help="seconds per run (default 25)")
    ap.add_argument("--warmup", type=float, default=5.0, help="seconds not measured (default 5)")
    ap.add_argument("--only", default="", help="run only cases whose name contains this")
    ap.add_argument("--list", action="store_true", help="list the cases and exit")
    ap.add_argument("--no-repeat", dest="repeat", action="store_false",
                    help="run the kernel once per case, not twice (no noise floor; about 40%% less time)")
    args = ap.parse_args(argv)
    if args.grid == "ci":
        args.duration, args.warmup = min(args.duration, 10.0), min(args.warmup, 2.0)
    cases = [c for c in grid(args.grid) if args.only in case_id(*c)]
    if args.list:
        for c in cases:
            print(case_id(*c))
        runs = 2 if args.repeat else 1
        print(f"{len(cases)} cases, {len(cases) * runs * args.duration / 60:.0f} min of real time on linux"
              + (" (each case twice)" if args.repeat else ""))
        return 0
    from tcplab.backends.linux import available
    from tcplab.provenance import build as build_id
    from tcplab.sweep.store import Store

    why = available()
    if why:
        print(f"linux_suite: skipped — the linux engine cannot run here: {why}")
        return 0
    out = Path(args.out)
    store = Store(out)
    have = {"linux": kernel_ccs(), "packet": packet_ccs()}
    rows = []
    with store.lock():
        stored = stored_runs(store)
        build = build_id()
        for k, case in enumerate(cases):
            t0 = time.time()
            row = run_case(case, args, store, have, stored, build)
            rows.append(row)
            skip = "; ".join(v for k2, v in row.items() if k2.endswith("_skipped"))
            err = row.get("goodput_error")
            print(f"[{k + 1}/{len(cases)}] {row['case']}: "
                  + (f"SKIPPED ({skip})" if skip else
                     f"goodput error {err:+.3f}, cwnd distance {row.get('cwnd_distance_bdp', float('nan')):.2f} BDP"
                     + (f" (kernel vs itself {row['kernel_goodput_error']:+.3f}, "
                        f"{row.get('kernel_cwnd_distance_bdp', float('nan')):.2f} BDP)"
                        if "kernel_goodput_error" in row else "")
                     if err is not None else f"failed: {row.get('linux_error') or row.get('packet_error')}")
                  + f"  [{time.time() - t0:.0f} s, load {os.getloadavg()[0]:.1f}]", flush=True)
    summary = {"grid": args.grid, "duration_s": args.duration, "warmup_s": args.warmup,
               "load_avg_end": os.getloadavg(), "per_cc": summarize(rows), "cases": rows}
    (out / "summary.json").write_text(json.dumps(summary, indent=1, default=str) + "\n")
    print("\nrelative goodput error, packet (linux profile) vs the kernel "
          "(total; per flow, mean over a case's flows; cwnd distance in BDPs):")
    print(f"{'cc':<10} {'cases':>5} {'median':>8} {'p95':>8} {'flow med':>9} {'flow p95':>9} {'cwnd d':>7}  worst")
    for cc, s in summary["per_cc"].items():
        print(f"{cc:<10} {s['cases']:>5} {s['median']:>8.3f} {s['p95']:>8.3f} {s['flow_median']:>9.3f} "
              f"{s['flow_p95']:>9.3f} {s['cwnd_distance_median']:>7.2f}  {s['worst']}")
        if "share_within_005" in s:
            print(f"{'':<10} share of {cc.split('+')[1]} within 0.05 of the kernel's in "
                  f"{s['share_within_005']} of {s['cases']} (mean distance {s['share_error_mean']:.3f})")
    if any("kernel" in s for s in summary["per_cc"].values()):
        print("\nthe noise floor: the kernel's second run against its first (same measures):")
        print(f"{'cc':<10} {'cases':>5} {'median':>8} {'p95':>8} {'flow med':>9} {'flow p95':>9} {'cwnd d':>7}")
        for cc, s in summary["per_cc"].items():
            k = s.get("kernel")
            if not k:
                continue
            print(f"{cc:<10} {k['cases']:>5} {k['median']:>8.3f} {k['p95']:>8.3f} {k['flow_median']:>9.3f} "
                  f"{k['flow_p95']:>9.3f} {k['cwnd_distance_median']:>7.2f}")
            if "share_within_005" in k:
                print(f"{'':<10} share within 0.05 of the first run's in {k['share_within_005']} of "
                      f"{k['cases']} (mean distance {k['share_error_mean']:.3f})")
    skipped = [r["case"] for r in rows if any(k.endswith("_skipped") for k in r)]
    if skipped:
        print(f"skipped ({len(skipped)}): " + ", ".join(skipped))
    print(f"wrote {out / 'summary.json'}, plots in {out / 'plots'}, results store in {out / 'store'}")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT / "python"))
    sys.exit(main())
