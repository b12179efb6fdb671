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
import threading
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


class Stopped(KeyboardInterrupt):
    """A `SharedPool` was stopped (the command got Ctrl-C or SIGTERM in its main
    thread): raised in the threads waiting on the pool, so that each stops as it
    would on the signal itself (a sweep stores what it finished)."""


class SharedPool:
    """One pool of `jobs` worker threads that several sweeps, and single runs, use
    at once (`tcplab reproduce` running claims concurrently): never more than
    `jobs` engine runs in flight whoever submits them, and the points of one
    sweep's tail run beside those of the next. `stop()` (from the main thread, on
    Ctrl-C) makes every wait on it raise `Stopped` within `POLL_S`, drops what has
    not started, and stops the packet-engine runs in flight (`cancel_engine_runs`:
    a thread cannot be killed, and the engine sees signals in the main thread only;
    an ns-2 run in flight goes on to its end).

    A sweep point is run once per pool (`submit_point`): a point two sweeps share
    (paper A's sweeps over one parameter each all hold the base point) is run by
    the first to ask, and the second is given its future — under way, or done.
    Points are matched by their key, the hash of the resolved scenario (labels
    left out), the engine, its version and the build (`tcplab.sweep.keys`): the
    same key is the same run, so the second sweep stores the row it would have
    computed."""

    POLL_S = 0.1

    def __init__(self, jobs: int | None = None):
        import concurrent.futures as cf

        self.jobs = jobs or default_jobs()
        self.stopped = threading.Event()
        self.executor = cf.ThreadPoolExecutor(max_workers=self.jobs, thread_name_prefix="tcplab-worker")
        self._guard = threading.Lock()
        self._points: dict[str, object] = {}  # point key → the future of its run
        self._waiting: dict[object, int] = {}  # a point's future → the sweeps waiting for it
        self.reused = 0  # points given to a sweep from another sweep's run

    def submit(self, fn, /, *args, **kwargs):
        self.check()
        return self.executor.submit(fn, *args, **kwargs)

    def submit_point(self, task: dict):
        """The future of sweep point `task`'s row (`run_task`): the run another sweep
        submitted for the same key if there is one (under way or done with status
        ok), else a new one. Each call is matched by one `release`."""
        self.check()
        with self._guard:
            fut = self._points.get(task["key"])
            if fut is not None and (fut.cancelled() or (fut.done() and (
                    fut.exception() is not None or fut.result()["status"] != "ok"))):
                fut = None  # a failure is run again, as a sweep of its own would retry it
            if fut is None:
                fut = self._points[task["key"]] = self.executor.submit(run_task, task)
            else:
                self.reused += 1
            self._waiting[fut] = self._waiting.get(fut, 0) + 1
            return fut

    def release(self, fut) -> None:
        """A sweep no longer waits for `fut` (from `submit_point`): cancelled if it has
        not started and no other sweep waits for it."""
        with self._guard:
            left = self._waiting.get(fut, 1) - 1
            if left > 0:
                self._waiting[fut] = left
                return
            self._waiting.pop(fut, None)
            fut.cancel()  # a later `submit_point` of its key submits it again

    def check(self) -> None:
        if self.stopped.is_set():
            raise Stopped()

    def wait(self, futures, return_when="FIRST_COMPLETED"):
        """`concurrent.futures.wait`, raising `Stopped` once the pool is stopped."""
        import concurrent.futures as cf

        while True:
            self.check()
            done, pending = cf.wait(futures, timeout=self.POLL_S, return_when=return_when)
            self.check()  # stop() sets the flag before it cancels: no cancelled future is handed out
            if done and (return_when == cf.FIRST_COMPLETED or not pending):
                return done, pending

    def result(self, future):
        """The future's result; on `Stopped`, the future is cancelled if it has not started."""
        try:
            self.wait([future])
        except BaseException:
            future.cancel()
            raise
        return future.result()

    def stop(self) -> None:
        self.stopped.set()
        self.executor.shutdown(wait=False, cancel_futures=True)
        cancel_engine_runs()


def cancel_engine_runs() -> None:
    """Stop the packet-engine runs in flight on worker threads (they raise
    KeyboardInterrupt within a few ms of work): signal handlers run in the main
    thread only, so a worker's run would otherwise go on to its end, and the
    interpreter waits for it on exit."""
    try:
        from tcplab.scenario import _core

        _core().cancel_runs()
    except Exception:  # no engine built (a pure-Python use): nothing runs
        pass


def _run_shared(tasks: Iterable[dict], shared: SharedPool) -> Iterator[dict]:
    """`run_local` on a `SharedPool`: at most 2 × jobs of this sweep's tasks queued
    or running at once (the pool's workers run them in submission order, whichever
    sweep they come from); a point another sweep on the pool has run or is running
    is not run again (`SharedPool.submit_point`)."""
    it = iter(tasks)
    inflight: dict = {}
    try:
        while True:
            while len(inflight) < 2 * shared.jobs:
                task = next(it, None)
                if task is None:
                    break
                inflight[shared.submit_point(task)] = task
            if not inflight:
                return
            done, _ = shared.wait(inflight)
            for fut in done:
                inflight.pop(fut)
                shared.release(fut)
                yield fut.result()  # run_task never raises
    finally:
        for fut in inflight:
            shared.release(fut)


def run_local(tasks: Iterable[dict], jobs: int | None = None, pool: str = DEFAULT_POOL,
              shared: SharedPool | None = None) -> Iterator[dict]:
    """Run tasks on this machine: `jobs` workers (default: every core), or the
    workers of `shared` (then `jobs` and `pool` are its)."""
    import concurrent.futures as cf
    import multiprocessing as mp
    from concurrent.futures.process import BrokenProcessPool

    if shared is not None:
        yield from _run_shared(tasks, shared)
        return
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
    except (KeyboardInterrupt, GeneratorExit):  # Ctrl-C, or the consumer gave up: runs in flight stop
        if pool == "thread":
            cancel_engine_runs()
        raise
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
