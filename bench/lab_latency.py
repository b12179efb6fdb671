"""How live `tcplab lab` feels: the issue's targets, measured on this machine.

    .venv/bin/python bench/lab_latency.py [--repeat 10] [--no-browser]

Starts `tcplab lab --no-browser` (127.0.0.1 only) and measures, as medians over
--repeat tries:

1. a control change to the updated closed forms and fluid model: POST /api/analyze
   with the buffer moved (server, worker and back), target < 100 ms;
2. the packet engine's answer for a 60 s, 10 Mb/s, 10-flow dumbbell
   (scenarios/c-parallel-sack.toml, 60 s): POST /api/run to the result event, and in
   headless Chromium from the buffer control's change to the plots drawn
   (the page's own clock), target < 1 s including plots;
3. a 100-flow, 100 Mb/s, 100 s case: the first progress event, the number of
   progress events and the answer; and a cancel of the same case at 3000 s
   mid-run: POST cancel to the cancelled event, target < 200 ms.

Timings are reported here and in docs/lab.md, never asserted in tests.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))

from tcplab.lab.local import LabProcess  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
C = (ROOT / "scenarios" / "c-parallel-sack.toml").read_text()
DUMBBELL_60S = {"duration": "60s", "warmup": "5s"}
BIG = {"duration": "100s", "warmup": "5s", "flows.sack.count": 100, "topology.bottleneck.rate": "100Mbps"}


def ms(x: float) -> str:
    return f"{x * 1e3:.0f} ms"


def control_change(lab: LabProcess, repeat: int) -> list[float]:
    out = []
    for i in range(repeat):
        t0 = time.perf_counter()
        status, body, _ = lab.post("/api/analyze", {"toml": C, "set": {**DUMBBELL_60S, "topology.bottleneck.buffer": 20 + i}})
        out.append(time.perf_counter() - t0)
        assert status == 200, body
        assert any(r["engine"].startswith("fluid") for r in body["quick"]["rows"])
    return out


def run_once(lab: LabProcess, sets: dict, cancel_after_progress: bool = False) -> dict:
    t0 = time.perf_counter()
    status, job, _ = lab.post("/api/run", {"toml": C, "set": sets})
    assert status == 200, job
    first = None
    progress = 0
    cancel_t = None
    for ev in lab.events(job["job"], timeout=600):
        now = time.perf_counter()
        if ev["event"] == "progress":
            progress += 1
            if first is None:
                first = now - t0
                if cancel_after_progress:
                    cancel_t = time.perf_counter()
                    lab.post(f"/api/jobs/{job['job']}/cancel", {})
        if ev["event"] in ("result", "failed", "cancelled"):
            return {"event": ev["event"], "total": now - t0, "first_progress": first, "progress_events": progress,
                    "cancel": (now - cancel_t) if cancel_t and ev["event"] == "cancelled" else None,
                    "wall_s": ev.get("wall_s")}
    raise RuntimeError("the event stream ended without an answer")


def browser_change_to_plots(lab: LabProcess, repeat: int) -> list[float] | None:
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.options import Options
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        return None
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    if not (chromium and driver):
        return None
    opts = Options()
    opts.binary_location = chromium
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1400,1700"):
        opts.add_argument(arg)
    drv = webdriver.Chrome(service=Service(driver), options=opts)
    try:
        sets = "".join(f"&set={k}={json.dumps(v)}" for k, v in DUMBBELL_60S.items())
        drv.get(f"{lab.base}?token={lab.token}#scenario=c-parallel-sack{sets}")
        wait = ("return +(document.body.dataset.plotSeq || 0) > arguments[0] && "
                "document.getElementById('packet-status').dataset.state === 'done'")
        deadline = time.monotonic() + 60
        while not drv.execute_script(wait, 0) and time.monotonic() < deadline:
            time.sleep(0.05)
        out = []
        for i in range(repeat):
            seq = int(drv.execute_script("return +document.body.dataset.plotSeq"))
            took = drv.execute_async_script(
                "const [seq, value, done] = arguments;"
                "const el = document.querySelector(\".ctl[data-key='topology.bottleneck.buffer'] input.num\");"
                "const t0 = performance.now(); el.value = value; el.dispatchEvent(new Event('change'));"
                "(function poll() { if (+document.body.dataset.plotSeq > seq) requestAnimationFrame(() => done(performance.now() - t0));"
                " else setTimeout(poll, 2); })();", seq, 25 + i)
            out.append(took / 1e3)
        return out
    finally:
        drv.quit()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--no-browser", action="store_true")
    ap.add_argument("--json", metavar="FILE", help="also write the numbers as JSON")
    args = ap.parse_args()
    cores = len(os.sched_getaffinity(0))
    load = os.getloadavg()[0]
    print(f"tcplab lab latency, {cores} cores available, load average {load:.2f} at the start, median of {args.repeat}")
    res: dict = {"cores": cores, "load_average": load}
    with LabProcess() as lab:
        control_change(lab, 3)  # warm
        cc = control_change(lab, args.repeat)
        res["control_change_s"] = statistics.median(cc)
        print(f"control change → closed forms + fluid (POST /api/analyze):   {ms(res['control_change_s'])}   (target < 100 ms; max {ms(max(cc))})")
        runs = [run_once(lab, DUMBBELL_60S) for _ in range(args.repeat)]
        res["packet_60s_answer_s"] = statistics.median(r["total"] for r in runs)
        res["packet_60s_engine_s"] = statistics.median(r["wall_s"] for r in runs)
        print(f"packet engine, 60 s 10 Mb/s 10 flows, run → answer (API):   {ms(res['packet_60s_answer_s'])}   "
              f"(engine and reading its traces: {ms(res['packet_60s_engine_s'])})")
        if not args.no_browser:
            br = browser_change_to_plots(lab, args.repeat)
            if br:
                res["browser_change_to_plots_s"] = statistics.median(br)
                print(f"  in Chromium, buffer change → table and plots drawn:        {ms(res['browser_change_to_plots_s'])}   "
                      f"(target < 1 s; max {ms(max(br))})")
            else:
                print("  (no headless Chromium: the page's own timing skipped)")
        big = [run_once(lab, BIG) for _ in range(max(3, args.repeat // 3))]
        res["big_first_progress_s"] = statistics.median(r["first_progress"] or float("nan") for r in big)
        res["big_progress_events"] = statistics.median(r["progress_events"] for r in big)
        res["big_answer_s"] = statistics.median(r["total"] for r in big)
        print(f"100 flows, 100 Mb/s, 100 s: first progress {ms(res['big_first_progress_s'])}, "
              f"{res['big_progress_events']:.0f} progress events, answer {ms(res['big_answer_s'])}")
        cancels = [run_once(lab, {**BIG, "duration": "3000s"}, cancel_after_progress=True) for _ in range(args.repeat)]
        c = [r["cancel"] for r in cancels if r["cancel"] is not None]
        res["cancel_s"] = statistics.median(c) if c else None
        print(f"cancel mid-run (100 flows, 100 Mb/s, 3000 s): cancel → cancelled event {ms(res['cancel_s'])}   "
              f"(target < 200 ms; max {ms(max(c))}; {len(c)} of {len(cancels)} cancelled mid-run)")
    if args.json:
        Path(args.json).write_text(json.dumps(res, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
