"""The `linux` engine: real Linux TCP between two network namespaces, with the
bottleneck emulated in user space by tcplab's own code.

`run_linux(scenario)` takes a *resolved* scenario and

1. creates two network namespaces, ``tl-snd-ID`` and ``tl-rcv-ID`` (nothing else
   in them: loopback, one TUN device ``tl0`` each, IPv6 off), and sets the
   sender namespace's TCP sysctls from the scenario's ``[linux]`` table;
2. starts ``tcplab-emu emulate`` (crates/linuxemu), which opens the TUN device in
   each namespace and moves IP packets between them through the engine's own
   forward and reverse bottleneck ``Link`` (rate, buffer, queue discipline,
   errors, delay) and injects the scenario's UDP background into the forward
   queue as emulated packets, with the engine's own ``UdpSource``s;
3. gives the devices their addresses (10.77.0.1 ↔ 10.77.0.2, point to point) and
   the route options (``rto_min``, ``initcwnd``, ``quickack``);
4. starts ``tcplab-emu recv`` in the receiver namespace and ``tcplab-emu send``
   in the sender namespace (one connection per TCP flow, source port
   ``PORT_BASE + flow id``, its congestion control set with TCP_CONGESTION,
   TCP_INFO sampled at a fixed interval), tells all three the same time 0, and
   waits until the run's end;
5. always tears everything down again (kills the three processes, deletes the
   namespaces), also on an error or Ctrl-C; namespaces left by a killed run are
   removed at the next start.

The access links are not emulated packet by packet: their propagation delays
and one packet's serialization are added to the bottleneck's delay (forward:
a full data packet, reverse: an ack of the Plan's `ack_bytes`, as the packet
engine's sink sends it), the same for every flow. So every
TCP flow must have the same access and sink-access links, without errors.
"""

from __future__ import annotations

import json
import os
import platform
import selectors
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from pathlib import Path

from tcplab import progress
from tcplab.errors import UserError
from tcplab.plan import Plan

__all__ = ["run_linux", "LinuxError", "emulator_binary", "available"]

#: Environment variable naming the tcplab-emu binary.
EMU_ENV = "TCPLAB_EMU"
SND_ADDR, RCV_ADDR = "10.77.0.1", "10.77.0.2"
PORT, PORT_BASE = 5001, 40000
#: Measured (kernel 6.18): 500 flows start and run; with 1,000 a third of the senders'
#: binds got EADDRNOTAVAIL (and a connect ENETUNREACH) for seconds, retries included
#: (crates/linuxemu/src/bulk.rs), though the address and route are set once, before.
MAX_TCP_FLOWS = 500
TUN = "tl0"
NS_PREFIXES = ("tl-snd-", "tl-rcv-", "tl-probe-")
#: Temporary folders of runs: tcplab-linux-<owner pid>-<random>.
DIR_PREFIX = "tcplab-linux-"
#: Real-time priority of the emulator (the senders get one less).
RT_PRIO = 50
#: Seconds after the run's end before the processes are killed.
GRACE_S = 20.0

_ns2_defaults = {  # TCP options the kernel cannot honour, accepted only at ns-2's default
    "alpha": 1.0, "beta": 0.5, "window": 100000, "max_cwnd": 0, "initial_ssthresh": 0,
    "dupack_threshold": 3,
}
_counter = iter(range(1 << 30))
_counter_lock = threading.Lock()


class LinuxError(UserError):
    """The linux engine cannot run here or cannot honour the scenario."""


def emulator_binary() -> str:
    """The tcplab-emu binary: $TCPLAB_EMU, the repository's target/release, the one
    shipped in the wheel (tcplab/bin), or PATH."""
    env = os.environ.get(EMU_ENV)
    if env:
        if not os.access(env, os.X_OK):
            raise LinuxError(f"${EMU_ENV}={env} is not an executable")
        return env
    here = Path(__file__).resolve()
    for root in here.parents:
        cand = root / "target" / "release" / "tcplab-emu"
        if cand.is_file() and os.access(cand, os.X_OK):
            return str(cand)
        if (root / "Cargo.toml").is_file():
            break
    from tcplab.resources import emulator

    packaged = emulator()
    if packaged is not None and os.access(packaged, os.X_OK):
        return str(packaged)
    path = shutil.which("tcplab-emu")
    if path:
        return path
    raise LinuxError("tcplab-emu not found: build it with `cargo build --release -p tcplab-linuxemu` "
                     f"(scripts/setup.sh does) or point ${EMU_ENV} at it")


def available() -> str | None:
    """None if the linux engine can run here, else the reason it cannot."""
    if os.geteuid() != 0:
        return "the linux engine needs root (network namespaces, TUN devices, real-time priority)"
    if not os.path.exists("/dev/net/tun"):
        return "no /dev/net/tun (TUN devices unavailable)"
    if shutil.which("ip") is None:
        return "no `ip` command (iproute2)"
    try:
        emulator_binary()
    except LinuxError as exc:
        return str(exc)
    name = f"tl-probe-{os.getpid()}"
    r = subprocess.run(["ip", "netns", "add", name], capture_output=True, text=True)
    if r.returncode != 0:
        return f"cannot create a network namespace: {r.stderr.strip()}"
    subprocess.run(["ip", "netns", "del", name], capture_output=True)
    return None


# ------------------------------------------------------------------ the plan

def _link(link: dict) -> tuple[float, float]:
    """(rate bit/s, delay s) of a link of the engine's plan."""
    return float(link["rate_bps"]), link["delay_ns"] / 1e9


def _folded_s(p: Plan, route: list[int], size: int) -> float:
    """Seconds a packet of `size` bytes spends on the first and last link of a
    route (the access and sink links the emulator folds into the bottleneck's
    delay): their propagation and its serialization on each."""
    (ar, ad), (sr, sd) = _link(p.links[route[0]]), _link(p.links[route[-1]])
    return ad + sd + size * 8 / ar + size * 8 / sr


def _plan(sc: dict) -> dict:
    """What the run needs, from the engine's Plan of a resolved scenario; refuses
    what Linux cannot honour, naming the scenario key."""
    p = Plan(sc)
    e = p.engine
    if e["topology"] != "dumbbell":
        raise LinuxError(f"topology.kind: the linux engine emulates a dumbbell only, got {e['topology']!r}")
    for f in e["flows"]:
        if p.links[f["route"]["forward"][0]]["role"] != "access":
            raise LinuxError(f"flows.{f['group']}.reverse: the linux engine sends data one way only "
                             "(sender namespace to receiver namespace)")
    for link in e["links"]:
        if link["role"] in ("access", "sink_access") and link["errors"]:
            raise LinuxError(f"{link['key']}.errors: the linux engine emulates errors on the "
                             "bottleneck only (its access links are constant delays)")
    series = list(e["trace"]["series"])
    bad = [s for s in series if s not in ("cwnd", "inflight", "seq", "drops")]
    if bad:
        raise LinuxError(f"trace.series: {bad[0]!r} is not recorded by the linux engine "
                         "(it records cwnd, inflight, seq from TCP_INFO samples, and drops)")
    for link in e["links"]:
        if link["queue"].get("ecn"):
            raise LinuxError(f"{link['key']}.red.ecn: the linux engine's emulated bottleneck does "
                             "not set ECN marks in the kernel's packets; run ECN on the packet engine")
    lx = e["linux"]
    sample_s = lx["sample_interval_ns"] / 1e9
    if sample_s < 0.001:
        key = "trace.interval" if e["trace"]["interval_ns"] > 0 else "linux.sample_interval"
        raise LinuxError(f"{key}: the linux engine samples TCP_INFO at most every 1 ms")

    # every flow's start and stop instants (start jitter, joins, leaves) as the
    # packet engine runs them
    extra = None
    tcp, udp = [], []
    sizes, variants = set(), set()
    kernel_profile = {}  # "linux" | "ns2" -> the first group that asks for it
    for f in e["flows"]:
        path = f"flows.{f['group']}"
        t = f["tcp"]
        if t is None:
            udp.append({"id": f["id"], "group": f["group"]})
            continue
        for key, default in _ns2_defaults.items():
            if t[key] != default:
                raise LinuxError(f"{path}.{key}: Linux TCP has no such setting (the linux engine "
                                 f"accepts only ns-2's default, {default!r})")
        if t["variant"] == "tahoe":
            raise LinuxError(f"{path}.variant: Linux has no Tahoe; use reno, newreno or sack")
        if t["ecn"]:
            raise LinuxError(f"{path}.ecn: the linux engine's emulated bottleneck does not set "
                             "ECN marks in the kernel's packets; run ECN on the packet engine")
        # the flow's access and sink links, folded into the bottleneck's delay:
        # a data packet forward, an ack (the Plan's ack_bytes) back
        size = int(f["packet_size"])
        fwd = _folded_s(p, f["route"]["forward"], size)
        rev = _folded_s(p, f["route"]["reverse"], int(t["ack_bytes"]))
        if extra is not None and abs(extra[0] - fwd) > 1e-9:
            raise LinuxError(f"{path}: every TCP flow must have the same access and sink-access "
                             "links and packet size on the linux engine (they are folded into one "
                             "constant delay)")
        extra = (fwd, rev)
        sizes.add(size)
        variants.add(t["variant"])
        kernel_profile.setdefault("linux" if t["profile"] == "linux" else "ns2", f["group"])
        if len(kernel_profile) > 1:
            a, b = kernel_profile.values()
            raise LinuxError(f"{path}.profile: the linux engine runs every TCP flow in one kernel "
                             f"namespace, with one profile; flows.{a} and flows.{b} differ (set the "
                             "same profile on every TCP group)")
        tcp.append({"id": f["id"], "group": f["group"], "variant": t["variant"], "cc": t["cc"],
                    "start_ns": f["start_ns"], "stop_ns": f["stop_ns"], "start_s": f["start_ns"] / 1e9,
                    "min_rto_s": t["min_rto_ns"] / 1e9, "initial_cwnd": int(t["initial_cwnd"])})
    if not tcp:
        raise LinuxError("flows: the linux engine needs at least one TCP flow (UDP is emulated "
                         "inside the bottleneck; without TCP there is nothing real to run)")
    if max(f["id"] for f in tcp) >= 65536 - PORT_BASE:
        raise LinuxError(f"flows: the linux engine numbers TCP flows by port; at most {65536 - PORT_BASE} flows")
    if len(tcp) > MAX_TCP_FLOWS:
        raise LinuxError(f"flows: the linux engine runs at most {MAX_TCP_FLOWS} TCP flows, this scenario has "
                         f"{len(tcp)} (with 1,000 the kernel refused a third of the senders' binds for "
                         "seconds; 500 run); the packet engine runs any number")
    mtu = sizes.pop()
    if sizes:
        raise LinuxError("flows: every TCP group must have the same packet_size on the linux engine "
                         "(it is the MTU of the emulated path)")
    if mtu < 576 or mtu > 9000:
        raise LinuxError(f"packet_size {mtu}: the linux engine needs an MTU in [576, 9000]")

    # the kernel's settings: the Plan's `linux` (the [linux] table resolved
    # under the TCP flows' kernel profile)
    ns2 = lx["profile"] == "ns2"
    if ns2 and (len({f["min_rto_s"] for f in tcp}) > 1 or len({f["initial_cwnd"] for f in tcp}) > 1):
        raise LinuxError("flows: under an ns-2 profile every TCP group must share min_rto and "
                         "initial_cwnd (they are options of the one route)")
    if ns2 and len(variants) > 1 and "sack" in variants and "sack" not in lx["explicit"]:
        raise LinuxError("flows: SACK is one switch of the sender namespace; under an ns-2 profile "
                         "the TCP groups cannot mix variant \"sack\" with others (set linux.sack)")
    opts = {
        "cc": tcp[0]["cc"],
        **{k: lx[k] for k in ("sack", "rack", "tlp", "frto", "timestamps", "initial_cwnd")},
        "min_rto_s": None if lx["min_rto_ns"] is None else lx["min_rto_ns"] / 1e9,
        "quickack": lx["quickack"],
    }
    bottleneck = next(l for l in e["links"] if l["role"] == "bottleneck" and l["direction"] == "forward")
    return {"profile": lx["profile"], "opts": opts, "tcp": tcp, "udp": udp, "mtu": mtu,
            "fwd_extra_s": extra[0], "rev_extra_s": extra[1], "series": series,
            "sample_s": sample_s, "duration_s": p.end_s, "warmup_s": p.warmup_s,
            "reference_bps": p.reference_bps, "bottleneck_bps": float(bottleneck["rate_bps"]),
            "engine": e}


def _sysctls(opts: dict) -> dict:
    return {
        "net.ipv6.conf.all.disable_ipv6": 1,
        "net.ipv6.conf.default.disable_ipv6": 1,
        "net.ipv4.tcp_sack": int(bool(opts["sack"])),
        "net.ipv4.tcp_recovery": 1 if opts["rack"] else 0,
        "net.ipv4.tcp_early_retrans": 3 if opts["tlp"] else 0,
        "net.ipv4.tcp_frto": 2 if opts["frto"] else 0,
        "net.ipv4.tcp_timestamps": int(bool(opts["timestamps"])),
        # no metrics carried over from an earlier connection to the same peer
        "net.ipv4.tcp_no_metrics_save": 1,
        # no cwnd reset after idle (flows are greedy; a stall would otherwise restart slow start)
        "net.ipv4.tcp_slow_start_after_idle": 0,
        # buffers large enough that no flow is limited by them (100 Mb/s × 1 s), and a
        # receive window that starts large (no autotuning bursts when it opens)
        "net.ipv4.tcp_rmem": "4096 4194304 16777216",
        "net.ipv4.tcp_wmem": "4096 65536 16777216",
        "net.core.rmem_max": 16777216,
        "net.core.wmem_max": 16777216,
    }


# ------------------------------------------------------------------- running

def _sh(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    r = subprocess.run(list(args), capture_output=True, text=True, timeout=30)
    if check and r.returncode != 0:
        raise LinuxError(f"`{' '.join(args)}` failed: {(r.stderr or r.stdout).strip()}")
    return r


def _owner_gone(pid_text: str) -> bool:
    """Whether the tcplab process `pid_text` (from a name) is no longer running."""
    try:
        pid = int(pid_text)
    except ValueError:
        return False
    return pid != os.getpid() and not Path(f"/proc/{pid}").exists()


def cleanup_stale() -> list[str]:
    """Delete what runs killed without a chance to clean up left behind: the
    tl-snd-/tl-rcv-/tl-probe-<pid>-... namespaces (and with them their TUN
    devices) and the tcplab-linux-<pid>-... temporary folders whose owner
    process is gone. Their processes died with their owner (tcplab-emu asks
    the kernel for that). Returns what was removed."""
    r = _sh("ip", "netns", "list", check=False)
    removed = []
    for line in r.stdout.splitlines():
        name = line.split()[0] if line.split() else ""
        if not name.startswith(NS_PREFIXES):
            continue
        parts = name.split("-")
        if len(parts) >= 3 and _owner_gone(parts[2]):
            _sh("ip", "netns", "del", name, check=False)
            removed.append(name)
    tmp = Path(tempfile.gettempdir())
    for d in tmp.glob(f"{DIR_PREFIX}*-*"):
        # only tcplab's own folders: tcplab-linux-<pid>-<mkdtemp suffix>
        pid = d.name[len(DIR_PREFIX):].split("-")[0]
        if pid.isdigit() and d.is_dir() and not d.is_symlink() and _owner_gone(pid):
            shutil.rmtree(d, ignore_errors=True)
            removed.append(str(d))
    return removed


def _read_ready(procs: dict, deadline: float, wd: Path) -> None:
    sel = selectors.DefaultSelector()
    for name, p in procs.items():
        sel.register(p.stdout, selectors.EVENT_READ, name)
    waiting = set(procs)
    while waiting:
        left = deadline - time.monotonic()
        if left <= 0:
            raise LinuxError(f"tcplab-emu {', '.join(sorted(waiting))} did not start in time")
        for key, _ in sel.select(timeout=left):
            name = key.data
            line = key.fileobj.readline()
            if line.strip() == "ready":
                waiting.discard(name)
                sel.unregister(key.fileobj)
            elif not line:
                procs[name].wait(timeout=10)
                err = (wd / f"{name}.err").read_text().strip()
                raise LinuxError(f"tcplab-emu {name} failed to start: {err}")
    sel.close()


def run_linux(scenario: dict, *, workdir: str | None = None, keep: bool = False) -> dict:
    """Run a resolved scenario on real Linux TCP; return the raw result dict."""
    why = available()
    if why:
        raise LinuxError(why)
    plan = _plan(scenario)
    have = Path("/proc/sys/net/ipv4/tcp_available_congestion_control").read_text().split()
    for f in plan["tcp"]:
        if f["cc"] not in have:
            raise LinuxError(f"flows.{f['group']}.cc: congestion control {f['cc']!r} is not available in this kernel "
                             f"(it has {', '.join(have)})")
    emu = emulator_binary()
    cleanup_stale()
    with _counter_lock:
        n = next(_counter)
    rid = f"{os.getpid()}-{n}"
    snd, rcv = f"tl-snd-{rid}", f"tl-rcv-{rid}"
    own_dir = workdir is None
    wd = Path(tempfile.mkdtemp(prefix=f"{DIR_PREFIX}{os.getpid()}-") if own_dir else workdir)
    wd.mkdir(parents=True, exist_ok=True)
    procs: dict[str, subprocess.Popen] = {}
    created: list[str] = []
    old_handlers = {}
    if threading.current_thread() is threading.main_thread():
        def _term(signum, frame):
            raise KeyboardInterrupt
        # SIGHUP (the terminal closed) stops a run as SIGTERM and Ctrl-C do:
        # children killed, namespaces and folder removed
        for sig in (signal.SIGTERM, signal.SIGHUP):
            old_handlers[sig] = signal.signal(sig, _term)
    t_wall = time.perf_counter()
    try:
        for ns in (snd, rcv):
            _sh("ip", "netns", "add", ns)
            created.append(ns)
            _sh("ip", "-n", ns, "link", "set", "lo", "up")
        ctl = _sysctls(plan["opts"])
        for ns in (snd, rcv):
            _sh("ip", "netns", "exec", ns, "sysctl", "-q", "-w", *[f"{k}={v}" for k, v in ctl.items()])
        d = plan["duration_s"]
        emu_cfg = {"plan": plan["engine"], "snd_ns": snd, "rcv_ns": rcv, "tun": TUN,
                   "port_base": PORT_BASE, "fwd_extra_ns": round(plan["fwd_extra_s"] * 1e9),
                   "rev_extra_ns": round(plan["rev_extra_s"] * 1e9), "mtu": plan["mtu"],
                   "rt_prio": RT_PRIO, "out": str(wd / "emu.json")}
        (wd / "emu-config.json").write_text(json.dumps(emu_cfg))

        def start(name: str, argv: list[str]) -> None:
            # tcplab-emu dies with this process (PR_SET_PDEATHSIG), even on SIGKILL
            env = dict(os.environ, TCPLAB_PARENT_PID=str(os.getpid()))
            procs[name] = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                           stderr=open(wd / f"{name}.err", "w"), text=True, env=env)

        start("emulate", [emu, "emulate", str(wd / "emu-config.json")])
        _read_ready({"emulate": procs["emulate"]}, time.monotonic() + 30, wd)
        route_opts = []
        o = plan["opts"]
        if o["min_rto_s"] is not None:
            route_opts += ["rto_min", f"{round(o['min_rto_s'] * 1000)}ms"]
        if o["initial_cwnd"] is not None:
            route_opts += ["initcwnd", str(int(o["initial_cwnd"]))]
        for ns, me, peer in ((snd, SND_ADDR, RCV_ADDR), (rcv, RCV_ADDR, SND_ADDR)):
            _sh("ip", "-n", ns, "link", "set", TUN, "mtu", str(plan["mtu"]), "up")
            _sh("ip", "-n", ns, "addr", "add", me, "peer", peer, "dev", TUN)
            opts = route_opts if ns == snd else (["quickack", "1"] if o["quickack"] else [])
            _sh("ip", "-n", ns, "route", "replace", peer, "dev", TUN, "src", me, *opts)
        recv_cfg = {"addr": RCV_ADDR, "port": PORT, "port_base": PORT_BASE,
                    "n_flows": max(f["id"] for f in plan["tcp"]) + 1,
                    "warmup_ns": round(plan["warmup_s"] * 1e9), "end_ns": round(d * 1e9),
                    "rt_prio": RT_PRIO - 1, "out": str(wd / "recv.json")}
        send_cfg = {"src": SND_ADDR, "dst": RCV_ADDR, "port": PORT, "port_base": PORT_BASE,
                    # a flow a join schedule never adds opens no connection
                    "flows": [{"id": f["id"], "start_ns": f["start_ns"], "stop_ns": f["stop_ns"],
                               "cc": f["cc"]} for f in plan["tcp"] if f["start_ns"] < f["stop_ns"]],
                    "sample_ns": round(plan["sample_s"] * 1e9), "end_ns": round(d * 1e9),
                    "rt_prio": RT_PRIO - 1, "out": str(wd / "send.json")}
        (wd / "recv-config.json").write_text(json.dumps(recv_cfg))
        (wd / "send-config.json").write_text(json.dumps(send_cfg))
        start("recv", ["ip", "netns", "exec", rcv, emu, "recv", str(wd / "recv-config.json")])
        start("send", ["ip", "netns", "exec", snd, emu, "send", str(wd / "send-config.json")])
        _read_ready({k: procs[k] for k in ("recv", "send")}, time.monotonic() + 30, wd)
        t0 = time.clock_gettime_ns(time.CLOCK_MONOTONIC) + 100_000_000
        for p in procs.values():
            p.stdin.write(f"go {t0}\n")
            p.stdin.flush()
        end = t0 / 1e9 + d + GRACE_S
        if progress.wanted():  # real time against the duration, until the sender is done
            while procs["send"].poll() is None and time.clock_gettime(time.CLOCK_MONOTONIC) < end:
                progress.report(max(0.0, time.clock_gettime(time.CLOCK_MONOTONIC) - t0 / 1e9), d)
                time.sleep(0.25)
        for name, p in procs.items():
            left = end - time.clock_gettime(time.CLOCK_MONOTONIC)
            try:
                rc = p.wait(timeout=max(left, 0.1))
            except subprocess.TimeoutExpired:
                raise LinuxError(f"tcplab-emu {name} did not finish within {GRACE_S:g} s of the "
                                 "run's end") from None
            if rc != 0:
                err = (wd / f"{name}.err").read_text().strip()
                raise LinuxError(f"tcplab-emu {name} failed (exit status {rc}): {err}")
        emu_out = json.loads((wd / "emu.json").read_text())
        recv_out = json.loads((wd / "recv.json").read_text())
        send_out = json.loads((wd / "send.json").read_text())
        if send_out["errors"]:
            raise LinuxError("sender: " + _summarize_flow_errors(send_out["errors"], plan))
        raw = _result(scenario, plan, emu_out, recv_out, send_out)
        raw["wall_s"] = time.perf_counter() - t_wall
        if keep or not own_dir:
            raw["workdir"] = str(wd)
        return raw
    finally:
        for p in procs.values():
            if p.poll() is None:
                p.kill()
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass
        # Processes inside a namespace (ip netns exec) are our children's
        # children only until exec: `ip netns exec` execs the command, so the
        # kill above reached them. Deleting the namespaces frees the devices.
        for ns in created:
            _sh("ip", "netns", "del", ns, check=False)
        for sig, old in old_handlers.items():
            signal.signal(sig, old)
        if own_dir and not keep:
            shutil.rmtree(wd, ignore_errors=True)


# ------------------------------------------------------------------ the result

def _summarize_flow_errors(errors: list[str], plan: dict) -> str:
    """The sender's per-flow errors in a few lines, however many flows failed:
    one line per distinct cause, with how many flows and which (the first few).
    Observed: several hundred flows connecting at once may get "bind: Cannot
    assign requested address" from the kernel for some of them (450 flows:
    intermittently, from about flow 445 on); fewer flows, or start_jitter, help."""
    import re

    by_cause: dict[str, list[str]] = {}
    for e in errors:
        m = re.match(r"flow (\d+): (.*)", e)
        flow, cause = (m.group(1), m.group(2)) if m else ("?", e)
        by_cause.setdefault(cause, []).append(flow)
    n = len(plan.get("tcp", [])) or len(errors)
    lines = []
    for cause, flows in by_cause.items():
        shown = ", ".join(sorted(flows, key=lambda x: int(x) if x.isdigit() else -1)[:8])
        more = f", … ({len(flows) - 8} more)" if len(flows) > 8 else ""
        lines.append(f"{len(flows)} of {n} flows failed: {cause} (flows {shown}{more})")
    hint = ""
    if any("Cannot assign requested address" in c for c in by_cause):
        hint = ("; the kernel refused some of many simultaneous connections: run fewer flows, or "
                "spread their starts (flows.GROUP.start_jitter)")
    return "; ".join(lines) + hint


def _kernel_version() -> str:
    return platform.release()


def _result(sc: dict, plan: dict, emu: dict, recv: dict, send: dict) -> dict:
    import numpy as np
    import pandas as pd

    measured = plan["duration_s"] - plan["warmup_s"]
    s = pd.DataFrame(send["samples"])
    flows = []
    emu_flows = {f["id"]: f for f in emu["flows"]}
    tcp_ids = {f["id"]: f for f in plan["tcp"]}
    for pf in plan["engine"]["flows"]:
        fid, label = pf["id"], pf["group"]
        e = emu_flows[fid]
        if pf["kind"] == "tcp":
            got = recv["end_bytes"][fid] - recv["warm_bytes"][fid]
            mine = s[s["flow"] == fid]
            mss = int(mine["mss"].iloc[-1]) if len(mine) else 0
            retrans = None
            if len(mine):
                before = mine[mine["t"] <= plan["warmup_s"] + 1e-9]
                r0 = int(before["total_retrans"].iloc[-1]) if len(before) else 0
                retrans = int(mine["total_retrans"].iloc[-1]) - r0
            flows.append({
                "id": fid, "group": label, "kind": "tcp", "variant": tcp_ids[fid]["cc"],
                "start_s": tcp_ids[fid]["start_s"],
                # whole segments' worth of the payload the application received
                "delivered_packets": int(got // mss) if mss else 0,
                "delivered_bytes": int(got),
                "sent_packets": None, "retransmissions": retrans,
                "timeouts": None, "fast_retransmits": None,
                "drops": int(e["drops"]),
            })
        else:
            flows.append({
                "id": fid, "group": label, "kind": "udp", "variant": None,
                "start_s": e["start_s"],
                "delivered_packets": int(e["delivered_packets"]),
                "delivered_bytes": int(e["delivered_bytes"]),
                "sent_packets": None, "retransmissions": None, "timeouts": None,
                "fast_retransmits": None, "drops": int(e["drops"]),
            })
    traces = {}
    tcp_series = [x for x in plan["series"] if x in ("cwnd", "inflight", "seq")]
    if tcp_series and len(s):
        ss = s["ssthresh"].astype("float64")
        ss[ss >= 2**31 - 1] = np.nan  # "infinite" before the first loss
        mss = s["mss"].where(s["mss"] > 0, 1).astype("float64")
        traces["tcp"] = pd.DataFrame({
            "t": s["t"].astype("float64"), "flow": s["flow"].astype("int64"),
            "cwnd": s["cwnd"].astype("float64"), "ssthresh": ss,
            "inflight": s["unacked"].astype("int64"),
            "ack": (s["bytes_acked"] // mss).astype("int64"),
            "rtt_ms": s["rtt_us"].astype("float64") / 1000.0,
            "ca_state": s["ca_state"].astype("int64"),
        })
    if "drops" in plan["series"]:
        dr = emu["drops"]
        traces["drops"] = pd.DataFrame({
            "t": np.asarray(dr["t"], dtype="float64"), "link": np.asarray(dr["link"], dtype="int64"),
            "flow": np.asarray(dr["flow"], dtype="int64"), "seq": np.asarray(dr["seq"], dtype="int64"),
            "cause": np.asarray(dr["cause"], dtype="int64"),
        })
    from tcplab.scenario import _core

    timing = dict(emu["timing"])
    # A delivery later than a bottleneck packet time batches packets that the
    # model spaced out (a burst a small buffer may not absorb): say so.
    tx_us = plan["mtu"] * 8 / plan["bottleneck_bps"] * 1e6
    if timing["late_p99_us_max"] > tx_us:
        timing["warning"] = (f"1% of deliveries were up to {timing['late_p99_us_max']} µs late, more than one "
                             f"bottleneck packet time ({tx_us:.0f} µs): the machine was too busy for exact timing")
    elif timing["late_max_us"] > 10 * tx_us:
        timing["warning"] = (f"the latest delivery was {timing['late_max_us'] / 1e3:.1f} ms late "
                             f"({timing['late_max_us'] / tx_us:.0f} packet times): expect occasional bursts")
    return {
        "engine": "linux",
        "engine_version": f"Linux {_kernel_version()} + tcplab-emu {_core().ENGINE_VERSION}",
        "scenario": sc,
        "measured_s": measured,
        "reference_bps": plan["reference_bps"],
        "flows": flows,
        "links": emu["links"],
        "traces": traces,
        "linux": {"profile": plan["profile"], **plan["opts"], "sysctls": _sysctls(plan["opts"]),
                  "emulator": timing, "sender_priority": send["realtime"],
                  "receiver_priority": recv["realtime"], "other_packets": emu["other_packets"]},
    }
