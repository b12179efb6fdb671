"""Where points run: local threads or processes, or a Ray cluster.

Each executor takes an iterable of tasks (`{key, engine, scenario}`) and yields
rows from `engines.run_task` as they complete, keeping a bounded number of tasks
in flight so that a sweep of a million points does not queue a million futures.
A worker that dies (a crashed process, a lost Ray node) yields a failed row for
the task it held; the sweep goes on.

Local mode: the bindings release the GIL while the Rust engine runs, but the
Python around it (result tables and metrics with pandas, ~8 ms a point) holds it.
Measured on 2 cores, paper C's 60-point sweep (README, "Sweeps"): with 600 s of
simulated time (0.19 s a point, 96% in Rust) threads took 5.9 s, processes 6.5 s,
one worker 11.7 s; with 20 s (14 ms a point, mostly Python) processes won, 0.60 s
against 0.74 s (threads) and 0.86 s. Points worth parallelizing are long ones, so
threads are the default; `--pool process` is there for sweeps of many tiny points.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator

from tcplab.errors import UserError
from tcplab.sweep.engines import run_task

POOLS = ("process", "thread")
DEFAULT_POOL = "thread"


def default_jobs() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def _crash_row(task: dict, why: str) -> dict:
    return {"key": task["key"], "status": "failed", "error": why, "wall_s": None, "metrics": {}}


def run_local(tasks: Iterable[dict], jobs: int | None = None, pool: str = DEFAULT_POOL) -> Iterator[dict]:
    """Run tasks on this machine: `jobs` workers (default: every core)."""
    import concurrent.futures as cf
    import multiprocessing as mp
    from concurrent.futures.process import BrokenProcessPool

    jobs = jobs or default_jobs()
    if pool not in POOLS:
        raise UserError(f"--pool: expected one of {', '.join(POOLS)}, got {pool!r}")
    if jobs == 1:
        for task in tasks:
            yield run_task(task)
        return

    def make():
        if pool == "thread":
            return cf.ThreadPoolExecutor(max_workers=jobs)
        # forkserver: the parent runs threads (the progress bar), which fork must not copy
        ctx = mp.get_context("forkserver")
        ctx.set_forkserver_preload(["tcplab.sweep.engines", "tcplab.api", "tcplab.fluid"])
        return cf.ProcessPoolExecutor(max_workers=jobs, mp_context=ctx)

    it = iter(tasks)
    ex = make()
    inflight: dict = {}
    try:
        while True:
            while len(inflight) < 2 * jobs:
                task = next(it, None)
                if task is None:
                    break
                try:
                    inflight[ex.submit(run_task, task)] = task
                except BrokenProcessPool:
                    ex.shutdown(wait=False, cancel_futures=True)
                    ex = make()
                    inflight[ex.submit(run_task, task)] = task
            if not inflight:
                return
            done, _ = cf.wait(inflight, return_when=cf.FIRST_COMPLETED)
            broken = False
            for fut in done:
                task = inflight.pop(fut)
                try:
                    yield fut.result()
                except BrokenProcessPool as exc:
                    broken = True
                    yield _crash_row(task, f"worker crashed: {exc}")
            if broken:
                # every task of a broken pool is lost: record them, go on with a new pool
                for fut, task in list(inflight.items()):
                    yield _crash_row(task, "worker crashed (pool broken by another task)")
                inflight.clear()
                ex.shutdown(wait=False, cancel_futures=True)
                ex = make()
    finally:
        ex.shutdown(wait=False, cancel_futures=True)


def run_ray(tasks: Iterable[dict], address: str | None = None, jobs: int | None = None) -> Iterator[dict]:
    """Run tasks on a Ray cluster (`address` "auto" or HOST:PORT), or on a local
    Ray instance of `jobs` CPUs when no address is given. Every node needs tcplab
    installed (`pip install tcplab[ray]`)."""
    try:
        import ray
    except ImportError:
        raise UserError("--executor ray needs Ray: pip install 'tcplab[ray]'") from None
    started = False
    if not ray.is_initialized():
        kwargs = {"include_dashboard": False, "log_to_driver": False, "configure_logging": False}
        try:
            if address:
                ray.init(address=address, **kwargs)
            else:
                ray.init(num_cpus=jobs or default_jobs(), **kwargs)
        except (ConnectionError, RuntimeError, ValueError) as exc:
            where = f"join the Ray cluster at {address}" if address else "start a local Ray instance"
            raise UserError(f"--executor ray: cannot {where}: {exc}") from None
        started = True
    # checked and connected now, not at the first result
    return _ray_results(ray, tasks, started)


def _ray_results(ray, tasks, started: bool) -> Iterator[dict]:
    try:
        remote = ray.remote(num_cpus=1, max_retries=1)(run_task)
        width = 2 * max(1, int(ray.cluster_resources().get("CPU", 1)))
        it = iter(tasks)
        inflight: dict = {}
        while True:
            while len(inflight) < width:
                task = next(it, None)
                if task is None:
                    break
                inflight[remote.remote(task)] = task
            if not inflight:
                return
            done, _ = ray.wait(list(inflight), num_returns=1)
            for ref in done:
                task = inflight.pop(ref)
                try:
                    yield ray.get(ref)
                except Exception as exc:  # a lost worker or node: record, go on
                    yield _crash_row(task, f"ray: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}")
    finally:
        if started:
            ray.shutdown()
