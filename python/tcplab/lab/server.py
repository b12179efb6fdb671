"""The lab's web server: a Starlette app (served by uvicorn, bound to 127.0.0.1).

Who may use it: whoever holds the random token `tcplab lab` prints, as Jupyter
does. The page's URL carries it once (`/?token=…`); the server answers with a
cookie (HttpOnly, SameSite=Strict) and the page sends the token in the
`X-Tcplab-Token` header of every request that changes something, so neither
another local user (who does not know the token) nor another web page (whose
requests carry neither the header nor, cross-site, the cookie) can drive it.
Requests whose Host is not this machine's loopback name are refused too (a
DNS-rebinding page cannot borrow the cookie).

What it does: every scenario is parsed, checked and run in worker processes
(`tcplab.lab.worker`); the server only routes, limits request sizes, keeps the
jobs and their folders (under one temporary folder of its own, removed when it
stops), and streams each run's events to the page (server-sent events).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import multiprocessing
import os
import re
import secrets
import shutil
import signal
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, PlainTextResponse, RedirectResponse, Response, StreamingResponse
from starlette.routing import Route

from tcplab.lab import worker

STATIC = Path(__file__).parent / "static"
#: largest request body (bytes): a scenario's TOML and its control changes
MAX_BODY = worker.MAX_TOML_BYTES + 64 * 1024
#: the quick worker's answer time before it is stopped and restarted (s)
QUICK_TIMEOUT_S = 10.0
#: runs going at once (the page cancels its previous packet run before starting one)
MAX_RUNNING = 4
#: finished jobs kept (with their files) before the oldest are removed
KEEP_JOBS = 24
#: how long a stopped worker has to clean up (ns-2's process, the linux engine's
#: namespaces) before SIGKILL
KILL_GRACE_S = 10.0
COOKIE = "tcplab_lab"
ENGINES = ("packet", "ns2", "linux")
_JOB_ID = re.compile(r"^[0-9a-f]{16}$")
#: files a job may offer (the download route serves nothing else)
FILES = ("scenario.toml", "flows.parquet", "summary.json", "trace-tcp.parquet", "trace-queue.parquet",
         "trace-drops.parquet", "trace-sends.parquet")


def _ctx():
    return multiprocessing.get_context("spawn")


class Proc:
    """A worker process and its end of the pipe."""

    def __init__(self, kind: str, folder: Path | None = None):
        ctx = _ctx()
        self.conn, child = ctx.Pipe()
        self.process = ctx.Process(target=worker.serve, args=(child, kind, str(folder) if folder else None),
                                   daemon=True,
                                   name=f"tcplab-lab-{kind}")
        self.process.start()
        child.close()
        self.ready = False
        #: the event loop watching this pipe (`_recv_async`), if one is
        self.loop: asyncio.AbstractEventLoop | None = None

    def unwatch(self) -> None:
        # before the pipe closes: a closed descriptor left in the loop's selector
        # would break the next pipe that gets the same number
        if self.loop is not None:
            try:
                self.loop.remove_reader(self.conn.fileno())
            except (OSError, ValueError):
                pass
            self.loop = None

    def terminate(self) -> None:
        """Ask the worker to stop (SIGTERM: its engine cleans up as after Ctrl-C)."""
        self.unwatch()
        if self.process.is_alive():
            try:
                os.kill(self.process.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass

    def reap(self, grace_s: float = KILL_GRACE_S) -> None:
        """Wait for the worker to end; SIGKILL after `grace_s`."""
        self.process.join(timeout=grace_s)
        if self.process.is_alive():
            try:
                os.kill(self.process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.process.join(timeout=5)
        try:
            self.conn.close()
        except OSError:
            pass

    def kill(self, grace_s: float = KILL_GRACE_S) -> None:
        self.terminate()
        self.reap(grace_s)

    def kill_soon(self) -> None:
        """`kill` without waiting for it (a cancel answers at once)."""
        self.terminate()
        import threading

        threading.Thread(target=self.reap, daemon=True, name="tcplab-lab-reap").start()


def _recv_async(loop: asyncio.AbstractEventLoop, proc: Proc, on_message, on_eof) -> None:
    """Call on_message(msg) for each message of proc, on_eof() when it ends (in the loop)."""

    def readable():
        try:
            while proc.conn.poll():
                on_message(proc.conn.recv())
        except (EOFError, OSError):
            proc.unwatch()
            on_eof()

    proc.loop = loop
    loop.add_reader(proc.conn.fileno(), readable)


@dataclass
class Job:
    id: str
    engine: str
    folder: Path
    proc: Proc | None
    started: float = field(default_factory=time.monotonic)
    events: list = field(default_factory=list)
    state: str = "running"  # running, done, error, cancelled
    changed: asyncio.Event = field(default_factory=asyncio.Event)
    files: list = field(default_factory=list)

    def push(self, ev: dict) -> None:
        self.events.append(ev)
        self.changed.set()


class Lab:
    """The server's state: the token, its folder, the workers and the jobs."""

    def __init__(self, token: str | None = None, folder: Path | None = None, report: Path | None = None):
        self.token = token or secrets.token_urlsafe(24)
        #: a `tcplab reproduce --out` folder: the gallery's verdicts and figures (read only)
        self.report = Path(report).resolve() if report else None
        #: (paper, figure stem) pairs the gallery offers: the only figures served
        self.figures: set[tuple[str, str]] = set()
        self.folder = Path(folder) if folder else Path(tempfile.mkdtemp(prefix="tcplab-lab-"))
        self.folder.mkdir(parents=True, exist_ok=True)
        self.jobs: dict[str, Job] = {}
        self.quick: Proc | None = None
        self.quick_lock = asyncio.Lock()
        self.spare: Proc | None = None

    # --- workers ---------------------------------------------------------------

    def children(self) -> list[int]:
        pids = [j.proc.process.pid for j in self.jobs.values() if j.proc and j.proc.process.is_alive()]
        for p in (self.quick, self.spare):
            if p and p.process.is_alive():
                pids.append(p.process.pid)
        return pids

    async def _ready(self, proc: Proc, timeout: float = 60.0) -> None:
        if proc.ready:
            return
        loop = asyncio.get_running_loop()
        ok = await loop.run_in_executor(None, proc.conn.poll, timeout)
        if not ok:
            raise RuntimeError("a lab worker did not start")
        msg = proc.conn.recv()
        assert msg["type"] == "ready", msg
        proc.ready = True

    def warm(self) -> None:
        """Start the quick worker and a spare run worker (so that a run starts at once)."""
        if self.quick is None or not self.quick.process.is_alive():
            self.quick = Proc("quick", self.folder)
        if self.spare is None or not self.spare.process.is_alive():
            self.spare = Proc("run", self.folder)

    async def analyze(self, req: dict) -> dict:
        async with self.quick_lock:
            self.warm()
            proc = self.quick
            await self._ready(proc)
            proc.conn.send(req)
            loop = asyncio.get_running_loop()
            ok = await loop.run_in_executor(None, proc.conn.poll, QUICK_TIMEOUT_S)
            if not ok:
                proc.kill_soon()
                self.quick = None
                self.warm()
                return {"type": "error", "key": None,
                        "message": f"the analysis took longer than {QUICK_TIMEOUT_S:g} s and was stopped"}
            try:
                return proc.conn.recv()
            except (EOFError, OSError):
                code = proc.process.exitcode
                self.quick = None
                self.warm()
                return {"type": "error", "key": None,
                        "message": f"the analysis worker ended unexpectedly (exit code {code})"}

    async def start(self, req: dict, engine: str) -> Job:
        running = [j for j in self.jobs.values() if j.state == "running"]
        if len(running) >= MAX_RUNNING:
            raise LabError(429, f"{len(running)} runs are going; cancel one first (at most {MAX_RUNNING})")
        if self.spare is not None and self.spare.process.is_alive():
            proc, self.spare = self.spare, None
        else:
            proc = Proc("run", self.folder)
        await self._ready(proc)
        job_id = secrets.token_hex(8)
        folder = self.folder / "jobs" / job_id
        folder.mkdir(parents=True)
        job = Job(job_id, engine, folder, proc)
        self.jobs[job_id] = job
        job.push({"type": "started", "job": job_id, "engine": engine})
        loop = asyncio.get_running_loop()

        def on_message(msg):
            if job.state != "running":
                return
            if msg.get("type") in ("result", "error"):
                if msg["type"] == "result":
                    job.files = [f for f in msg.get("files", []) if f in FILES]
                job.state = "done" if msg["type"] == "result" else "error"
                self._release(job)
            msg["elapsed_s"] = time.monotonic() - job.started
            job.push(msg)

        def on_eof():
            if job.state == "running":
                job.state = "error"
                job.push({"type": "error", "key": None, "message":
                          f"the run's worker ended unexpectedly (exit code {proc.process.exitcode})"})
            proc.kill_soon()
            job.proc = None

        _recv_async(loop, proc, on_message, on_eof)
        proc.conn.send({"doc": req["doc"], "engine": engine, "folder": str(folder)})
        self._forget_old()
        return job

    def _release(self, job: Job) -> None:
        """A finished job's worker waits for the next run (or ends, if one already does)."""
        proc, job.proc = job.proc, None
        if proc is None:
            return
        proc.unwatch()
        if self.spare is None and proc.process.is_alive():
            self.spare = proc
        else:
            proc.kill_soon()

    def cancel(self, job: Job) -> None:
        if job.state == "running":
            job.state = "cancelled"
            if job.proc:
                job.proc.kill_soon()
                job.proc = None
            job.push({"type": "cancelled", "elapsed_s": time.monotonic() - job.started})
            # a new spare for the next run, started now rather than when it is needed
            self.warm()
        shutil.rmtree(job.folder / "spill", ignore_errors=True)

    def _forget_old(self) -> None:
        done = [j for j in self.jobs.values() if j.state != "running"]
        for j in done[:-KEEP_JOBS] if len(done) > KEEP_JOBS else []:
            shutil.rmtree(j.folder, ignore_errors=True)
            del self.jobs[j.id]

    def close(self) -> None:
        """Stop every worker (all asked at once, then each waited for) and remove the lab's folder."""
        procs = [j.proc for j in self.jobs.values() if j.proc] + [p for p in (self.quick, self.spare) if p]
        for j in self.jobs.values():
            if j.state == "running":
                j.state = "cancelled"
            j.proc = None
        self.quick = self.spare = None
        for p in procs:
            p.terminate()
        for p in procs:
            p.reap()
        shutil.rmtree(self.folder, ignore_errors=True)


class LabError(Exception):
    def __init__(self, status: int, message: str, key: str | None = None):
        super().__init__(message)
        self.status, self.message, self.key = status, message, key


def _error(status: int, message: str, key: str | None = None) -> JSONResponse:
    return JSONResponse({"error": message, "key": key}, status_code=status)


# --- access ----------------------------------------------------------------------------

_LOOPBACK = {"127.0.0.1", "localhost", "[::1]"}


class Guard:
    """ASGI middleware: loopback Host only, the token (query, header or cookie), and
    for anything but GET the header itself; request bodies at most MAX_BODY bytes."""

    def __init__(self, app, lab: Lab):
        self.app, self.lab = app, lab

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        req = Request(scope)
        host = (req.headers.get("host") or "").rsplit(":", 1)[0]
        if host not in _LOOPBACK:
            return await PlainTextResponse(f"tcplab lab: refused: Host {host!r} is not this machine's loopback "
                                           "address", status_code=403)(scope, receive, send)
        token = self.lab.token
        header = req.headers.get("x-tcplab-token", "")
        given = req.query_params.get("token", "")
        cookie = req.cookies.get(COOKIE, "")
        ok_header = bool(header) and secrets.compare_digest(header, token)
        ok_query = bool(given) and secrets.compare_digest(given, token)
        ok_cookie = bool(cookie) and secrets.compare_digest(cookie, token)
        if req.method not in ("GET", "HEAD"):
            if not ok_header:
                return await _error(403, "tcplab lab: refused: this request lacks the lab's token "
                                         "(the X-Tcplab-Token header)")(scope, receive, send)
        elif not (ok_header or ok_query or ok_cookie):
            return await PlainTextResponse(
                "tcplab lab: refused: open the URL `tcplab lab` printed (it carries the access token, "
                "…/?token=…)", status_code=403)(scope, receive, send)
        length = req.headers.get("content-length")
        if length is not None:
            try:
                too_big = int(length) > MAX_BODY
            except ValueError:
                too_big = True
            if too_big:
                return await _error(413, f"request too large: {length} bytes, the lab takes at most {MAX_BODY} "
                                         "bytes (a scenario's TOML)")(scope, receive, send)
        if ok_query and req.method == "GET" and scope["path"] == "/":
            # the token leaves the address bar; the cookie carries it from now on
            resp = RedirectResponse("/", status_code=303)
            resp.set_cookie(COOKIE, token, httponly=True, samesite="strict", path="/")
            return await resp(scope, receive, send)
        return await self.app(scope, receive, send)


async def read_json(request: Request) -> dict:
    """The request's JSON body, read up to MAX_BODY bytes (chunked bodies too)."""
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_BODY:
            raise LabError(413, f"request too large: more than {MAX_BODY} bytes, the lab takes at most "
                                f"{MAX_BODY} bytes (a scenario's TOML)")
    try:
        data = json.loads(body or b"{}")
    except ValueError:
        raise LabError(400, "the request body is not JSON") from None
    if not isinstance(data, dict):
        raise LabError(400, "the request body must be a JSON object")
    return data


# --- routes ------------------------------------------------------------------------------


def create_app(lab: Lab | None = None) -> Starlette:
    lab = lab or Lab()

    def page(request: Request) -> Response:
        html = (STATIC / "index.html").read_text()
        return Response(html.replace("{{TOKEN}}", lab.token), media_type="text/html",
                        headers={"Cache-Control": "no-store"})

    def static(request: Request) -> Response:
        name = request.path_params["name"]
        if name == "plotly.min.js":
            from plotly.offline import get_plotlyjs

            return Response(get_plotlyjs(), media_type="text/javascript",
                            headers={"Cache-Control": "max-age=3600"})
        if name not in ("lab.js", "lab.css"):
            return _error(404, f"no static file {name!r}")
        return FileResponse(STATIC / name)

    def examples(request: Request) -> Response:
        from tcplab.resources import scenario_files
        from tcplab.scenario import load_toml

        out = []
        for p in scenario_files():
            try:
                desc = load_toml(p).get("description", "")
            except Exception:  # an example that does not load is listed without its description
                desc = ""
            out.append({"name": p.stem, "description": desc, "toml": p.read_text()})
        return JSONResponse(out)

    async def gallery(request: Request) -> Response:
        ans = await lab.analyze({"op": "gallery", "report": str(lab.report) if lab.report else None})
        if ans.get("type") == "error":
            return _error(500, ans["message"])
        for c in ans["cards"]:
            lab.figures |= {(c["slug"], s) for s in c["figures"]}
            c["figure_urls"] = [f"/api/figures/{c['slug']}/{s}.png" for s in c["figures"]]
        return JSONResponse(ans["cards"])

    def figure(request: Request) -> Response:
        from tcplab.lab.gallery import figure_file

        slug, name = request.path_params["slug"], request.path_params["name"]
        stem = name[:-4] if name.endswith(".png") else None
        if lab.report is None or stem is None or (slug, stem) not in lab.figures:
            return _error(404, f"no figure {slug}/{name} in the gallery")
        f = figure_file(lab.report, slug, stem)
        return FileResponse(f, media_type="image/png") if f else _error(404, f"no figure {slug}/{name}")

    def engines(request: Request) -> Response:
        return JSONResponse(available_engines())

    async def analyzed(request: Request) -> dict | Response:
        """The answers for the scenario a request names (its TOML, overrides or
        example), or the error response to send instead."""
        try:
            req = await read_json(request)
        except LabError as exc:
            return _error(exc.status, exc.message)
        ans = await lab.analyze({k: req.get(k) for k in ("toml", "set", "example")})
        if ans.get("type") == "error":
            return _error(400, ans["message"], ans.get("key"))
        return ans

    async def analyze(request: Request) -> Response:
        ans = await analyzed(request)
        if isinstance(ans, Response):
            return ans
        ans.pop("type", None)
        return JSONResponse(ans)

    async def run(request: Request) -> Response:
        try:
            req = await read_json(request)
            engine = req.get("engine", "packet")
            if engine not in ENGINES:
                raise LabError(400, f"engine: expected one of {', '.join(ENGINES)}, got {engine!r}")
            why_not = available_engines()[engine].get("refused")
            if why_not:
                raise LabError(400, f"engine {engine}: {why_not}")
            ans = await lab.analyze({"op": "doc", **{k: req.get(k) for k in ("toml", "set", "example")}})
            if ans.get("type") == "error":
                raise LabError(400, ans["message"], ans.get("key"))
            job = await lab.start({"doc": ans["doc"]}, engine)
        except LabError as exc:
            return _error(exc.status, exc.message, exc.key)
        return JSONResponse({"job": job.id, "engine": engine})

    def _job(request: Request) -> Job:
        job_id = request.path_params["job"]
        if not _JOB_ID.match(job_id) or job_id not in lab.jobs:
            raise LabError(404, f"no job {job_id!r}")
        return lab.jobs[job_id]

    async def events(request: Request) -> Response:
        try:
            job = _job(request)
        except LabError as exc:
            return _error(exc.status, exc.message)

        async def stream():
            sent = 0
            while True:
                while sent < len(job.events):
                    ev = job.events[sent]
                    sent += 1
                    # (an "error" event would read as EventSource's own connection error)
                    name = "failed" if ev["type"] == "error" else ev["type"]
                    yield f"event: {name}\ndata: {json.dumps(ev, default=str, allow_nan=False)}\n\n"
                if job.state != "running" and sent >= len(job.events):
                    return
                job.changed.clear()
                if sent < len(job.events):
                    continue
                try:
                    await asyncio.wait_for(job.changed.wait(), timeout=15)
                except asyncio.TimeoutError:
                    yield ": keep-alive\n\n"
                if await request.is_disconnected():
                    return

        return StreamingResponse(stream(), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"})

    async def cancel(request: Request) -> Response:
        try:
            job = _job(request)
        except LabError as exc:
            return _error(exc.status, exc.message)
        lab.cancel(job)
        return JSONResponse({"job": job.id, "state": job.state})

    def download(request: Request) -> Response:
        try:
            job = _job(request)
        except LabError as exc:
            return _error(exc.status, exc.message)
        name = request.path_params["name"]
        if name not in FILES or name not in job.files:
            return _error(404, f"no file {name!r} in this run (it offers {', '.join(job.files) or 'none yet'})")
        path = job.folder / name
        return FileResponse(path, filename=name)

    async def notebook(request: Request) -> Response:
        from tcplab.lab.notebook import notebook_json

        ans = await analyzed(request)
        if isinstance(ans, Response):
            return ans
        name = re.sub(r"[^A-Za-z0-9_.-]", "_", ans.get("name") or "scenario")[:60] or "scenario"
        return Response(notebook_json(ans["toml"], ans.get("name") or "scenario"),
                        media_type="application/x-ipynb+json",
                        headers={"Content-Disposition": f'attachment; filename="{name}-lab.ipynb"'})

    @contextlib.asynccontextmanager
    async def lifespan(app):
        lab.warm()
        try:
            yield
        finally:
            lab.close()

    routes = [
        Route("/", page),
        Route("/static/{name}", static),
        Route("/api/examples", examples),
        Route("/api/gallery", gallery),
        Route("/api/engines", engines),
        Route("/api/figures/{slug}/{name}", figure),
        Route("/api/analyze", analyze, methods=["POST"]),
        Route("/api/run", run, methods=["POST"]),
        Route("/api/jobs/{job}/events", events),
        Route("/api/jobs/{job}/cancel", cancel, methods=["POST"]),
        Route("/api/jobs/{job}/files/{name:path}", download),
        Route("/api/notebook", notebook, methods=["POST"]),
    ]
    app = Starlette(routes=routes, lifespan=lifespan)
    app.state.lab = lab
    from starlette.middleware.gzip import GZipMiddleware

    return GuardedApp(Guard(GZipMiddleware(app, minimum_size=2048), lab), app, lab)


class GuardedApp:
    """The app behind its guard (`lab` and the inner Starlette app for tests and the command)."""

    def __init__(self, asgi, inner: Starlette, lab: Lab):
        self.asgi, self.inner, self.lab = asgi, inner, lab

    async def __call__(self, scope, receive, send):
        if scope["type"] == "lifespan":
            return await self.inner(scope, receive, send)
        return await self.asgi(scope, receive, send)


@functools.cache
def available_engines() -> dict:
    """Which engines the lab offers here, and why not where it refuses one."""
    out: dict[str, dict[str, Any]] = {"packet": {}}
    out["ns2"] = {} if shutil.which("ns") else {"refused": "ns-2 is not installed here (Debian: apt-get install ns2)"}
    from tcplab.backends.linux import available

    why_not = available()  # root, /dev/net/tun, namespaces, tcplab-emu: the engine's own checks
    out["linux"] = {"refused": f"the linux engine is not available here: {why_not}"} if why_not else {}
    return out
