"""`LabProcess`: `tcplab lab --no-browser` in a child process, for scripts and tests
(bench/lab_latency.py, tests/test_lab*.py): its URL and token, requests to it
(loopback only), and a stop by SIGINT, as Ctrl-C would.

    with LabProcess() as lab:
        lab.post("/api/analyze", {"toml": text})
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path


class LabProcess:
    def __init__(self, *args: str, ready_timeout_s: float = 120.0):
        self.args = list(args)
        self.timeout = ready_timeout_s
        self.proc: subprocess.Popen | None = None
        self.url = self.base = self.token = ""
        self.folder: Path | None = None

    def start(self) -> "LabProcess":
        self.proc = subprocess.Popen([sys.executable, "-m", "tcplab.cli", "lab", "--no-browser", *self.args],
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                     start_new_session=True)
        deadline = time.monotonic() + self.timeout
        lines = []
        while time.monotonic() < deadline:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError("tcplab lab ended before serving:\n" + "".join(lines))
            lines.append(line)
            m = re.search(r"(http://127\.0\.0\.1:(\d+)/)\?token=([\w-]+)\S*", line)
            if m:
                self.url, self.base, self.token = m.group(0), m.group(1), m.group(3)
            f = re.search(r"working folder (\S+)", line)
            if f:
                self.folder = Path(f.group(1))
            if self.url and self.folder:
                break
        self._wait_ready(deadline)
        return self

    def _wait_ready(self, deadline: float) -> None:
        while time.monotonic() < deadline:
            try:
                self.get("/api/engines")
                return
            except (urllib.error.URLError, ConnectionError):
                time.sleep(0.1)
        raise RuntimeError("tcplab lab did not answer")

    def request(self, path: str, body=None, headers: dict | None = None, token: bool = True,
                method: str | None = None, raw: bytes | None = None, timeout: float = 60.0):
        """(status, parsed JSON or text, headers) of a request to the lab."""
        h = {"X-Tcplab-Token": self.token} if token else {}
        h.update(headers or {})
        data = raw
        if body is not None:
            data = json.dumps(body).encode()
            h.setdefault("Content-Type", "application/json")
        req = urllib.request.Request(self.base.rstrip("/") + path, data=data, headers=h, method=method)
        try:
            with urllib.request.urlopen(req, timeout=timeout) as r:
                status, text, hdrs = r.status, r.read(), r.headers
        except urllib.error.HTTPError as e:
            status, text, hdrs = e.code, e.read(), e.headers
        ct = hdrs.get("content-type", "")
        return status, (json.loads(text) if "json" in ct else text.decode(errors="replace")), hdrs

    def get(self, path: str, **kw):
        return self.request(path, **kw)

    def post(self, path: str, body, **kw):
        return self.request(path, body=body, **kw)

    def events(self, job: str, timeout: float = 120.0):
        """The job's server-sent events (dicts, each with its "event" name), until the stream ends."""
        req = urllib.request.Request(f"{self.base}api/jobs/{job}/events", headers={"X-Tcplab-Token": self.token})
        out, name = [], None
        with urllib.request.urlopen(req, timeout=timeout) as r:
            for line in r:
                line = line.decode().rstrip("\n")
                if line.startswith("event: "):
                    name = line[7:]
                elif line.startswith("data: "):
                    ev = json.loads(line[6:])
                    ev["event"] = name
                    out.append(ev)
                    yield ev
        return out

    def children(self) -> list[int]:
        """Processes whose parent is the lab's process."""
        if not self.proc:
            return []
        out = []
        for d in Path("/proc").iterdir():
            if d.name.isdigit():
                try:
                    stat = (d / "stat").read_text()
                except OSError:
                    continue
                ppid = int(stat.rsplit(")", 1)[1].split()[1])
                if ppid == self.proc.pid:
                    out.append(int(d.name))
        return out

    def stop(self, timeout: float = 30.0) -> int:
        """SIGINT (Ctrl-C) and wait; the exit code."""
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        if self.proc and self.proc.stdout:
            self.proc.stdout.close()
        return self.proc.returncode if self.proc else 0

    def __enter__(self) -> "LabProcess":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
