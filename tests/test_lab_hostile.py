"""Hostile requests to `tcplab lab`, each refused clearly while the server stays
up: a request without the token (or from a page elsewhere), an oversized upload,
a scenario that would run for hours, a path traversal in a download name, a rate
file outside the package, a TOML nested too deep, and a scenario whose run the
budget lets through but which is cancelled."""

from __future__ import annotations

import time
import urllib.request

import pytest

from tcplab.lab.local import LabProcess
from tcplab.lab.server import MAX_BODY

C = open("scenarios/c-parallel-sack.toml").read()


@pytest.fixture(scope="module")
def lab():
    with LabProcess() as lab:
        yield lab


def _still_up(lab):
    status, body, _ = lab.get("/api/engines")
    assert status == 200 and "packet" in body


def test_requests_without_the_token_are_refused(lab):
    status, body, _ = lab.get("/", token=False)
    assert status == 403 and "token" in body
    status, body, _ = lab.get("/api/examples", token=False)
    assert status == 403
    status, body, _ = lab.get("/api/examples", token=False, headers={"X-Tcplab-Token": "wrong"})
    assert status == 403
    # a POST needs the header itself: a cookie alone (what another page's form would send) is not enough
    status, body, _ = lab.post("/api/run", {"toml": C}, token=False, headers={"Cookie": f"tcplab_lab={lab.token}"})
    assert status == 403 and "X-Tcplab-Token" in body["error"]
    # a page elsewhere that rebinds its name to 127.0.0.1 still sends its own Host
    status, body, _ = lab.get("/api/examples", headers={"Host": "evil.example:80"})
    assert status == 403 and "loopback" in body
    _still_up(lab)


def test_the_token_in_the_url_becomes_a_cookie(lab):
    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *a, **k):
            return None

    opener = urllib.request.build_opener(NoRedirect)
    try:
        opener.open(f"{lab.base}?token={lab.token}")
        raise AssertionError("expected a redirect")
    except urllib.error.HTTPError as e:
        assert e.code == 303 and e.headers["Location"] == "/"
        cookie = e.headers["Set-Cookie"]
    assert f"tcplab_lab={lab.token}" in cookie and "HttpOnly" in cookie and "SameSite=strict" in cookie


def test_oversized_upload_is_refused(lab):
    big = "# " + "x" * (MAX_BODY + 10) + "\n" + C
    status, body, _ = lab.post("/api/analyze", {"toml": big})
    assert status == 413 and "request too large" in body["error"]
    # a chunked body (no Content-Length) is counted as it arrives
    def chunks():
        for _ in range(MAX_BODY // 65536 + 2):
            yield b"x" * 65536

    req = urllib.request.Request(f"{lab.base}api/analyze", data=chunks(), method="POST",
                                 headers={"X-Tcplab-Token": lab.token, "Transfer-Encoding": "chunked",
                                          "Content-Type": "application/json"})
    try:
        urllib.request.urlopen(req, timeout=30)
        raise AssertionError("expected 413")
    except urllib.error.HTTPError as e:
        assert e.code == 413
    _still_up(lab)


def test_a_scenario_that_would_run_for_hours_gets_the_cli_error(lab):
    sets = {"duration": "1000000s", "flows.sack.count": 100, "topology.bottleneck.rate": "1Gbps"}
    status, job, _ = lab.post("/api/run", {"toml": C, "set": sets})
    assert status == 200
    t0 = time.monotonic()
    evs = list(lab.events(job["job"], timeout=30))
    assert time.monotonic() - t0 < 10
    failed = [e for e in evs if e["event"] == "failed"]
    assert failed and "hours of work" in failed[0]["message"] and failed[0]["key"] == "duration"
    _still_up(lab)


def test_a_long_run_is_cancelled_within_200_ms(lab):
    sets = {"duration": "5000s", "warmup": "5s", "flows.sack.count": 100, "topology.bottleneck.rate": "100Mbps"}
    status, job, _ = lab.post("/api/run", {"toml": C, "set": sets})
    assert status == 200
    for ev in lab.events(job["job"]):
        if ev["event"] == "progress" and ev["done_s"] > 0:
            break
    t0 = time.monotonic()
    status, body, _ = lab.post(f"/api/jobs/{job['job']}/cancel", {})
    took = time.monotonic() - t0
    assert status == 200 and body["state"] == "cancelled"
    evs = list(lab.events(job["job"]))
    assert evs[-1]["event"] == "cancelled"
    print(f"cancel answered in {took * 1e3:.0f} ms")  # timings are measured in bench/lab_latency.py


def test_path_traversal_in_a_download_name_is_refused(lab):
    status, job, _ = lab.post("/api/run", {"toml": C, "set": {"duration": "10s", "warmup": "1s"}})
    evs = list(lab.events(job["job"]))
    assert evs[-1]["event"] == "result"
    ok, text, _ = lab.get(f"/api/jobs/{job['job']}/files/scenario.toml")
    assert ok == 200 and 'name = "c-parallel-sack"' in text
    for name in ("../../../../etc/passwd", "..%2F..%2F..%2Fetc%2Fpasswd", "/etc/passwd", "spill/tcp.t", "..",
                 "scenario.toml/../../x"):
        status, body, _ = lab.get(f"/api/jobs/{job['job']}/files/{name}")
        assert status == 404, name
        assert "root:" not in str(body)
    status, body, _ = lab.get("/api/jobs/..%2F..%2Fetc/files/passwd")
    assert status == 404
    # the gallery's figures: only a report's figures the gallery lists
    for path in ("/api/figures/triple-slowstart/..%2F..%2F..%2Fetc%2Fpasswd", "/api/figures/../../etc/passwd",
                 "/api/figures/x/y.png"):
        status, body, _ = lab.get(path)
        assert status == 404 and "root:" not in str(body), path


def test_rate_files_outside_the_package_are_refused(lab):
    toml = C.replace('[flows.sack]', '[flows.bg]\nkind = "udp"\nrate = { shape = "piecewise", file = "/etc/passwd" }\n\n[flows.sack]')
    status, body, _ = lab.post("/api/analyze", {"toml": toml})
    assert status == 400 and "trace files only for the example scenarios" in body["error"]
    status, body, _ = lab.post("/api/analyze", {"toml": toml, "example": "../../../etc"})
    assert status == 400 and "trace files only" in body["error"]


def test_malformed_scenarios_get_clear_errors(lab):
    status, body, _ = lab.post("/api/analyze", {"toml": "a = " + "[" * 5000 + "]" * 5000})
    assert status == 400 and "toml" in body["error"]
    status, body, _ = lab.post("/api/analyze", {"toml": "this is not toml"})
    assert status == 400 and body["error"].startswith("toml:")
    status, body, _ = lab.post("/api/analyze", {"toml": C, "set": {"topology.bottleneck.buffer": -1}})
    assert status == 400 and body["key"] == "topology.bottleneck.buffer"
    status, body, _ = lab.request("/api/analyze", raw=b"\xff\xfe not json", method="POST",
                                  headers={"Content-Type": "application/json"})
    assert status == 400 and "JSON" in body["error"]
    status, body, _ = lab.post("/api/run", {"toml": C, "engine": "../../bin/sh"})
    assert status == 400 and "engine" in body["error"]
    _still_up(lab)


def test_runs_at_once_are_limited(lab):
    from tcplab.lab.server import MAX_RUNNING

    sets = {"duration": "100000s", "warmup": "5s", "flows.sack.count": 20}
    jobs = []
    try:
        for _ in range(MAX_RUNNING):
            status, job, _ = lab.post("/api/run", {"toml": C, "set": sets})
            assert status == 200, job
            jobs.append(job["job"])
        status, body, _ = lab.post("/api/run", {"toml": C, "set": sets})
        assert status == 429 and "cancel one first" in body["error"]
    finally:
        for j in jobs:
            lab.post(f"/api/jobs/{j}/cancel", {})
    status, job, _ = lab.post("/api/run", {"toml": C, "set": {"duration": "10s", "warmup": "1s"}})
    assert status == 200
    assert list(lab.events(job["job"]))[-1]["event"] == "result"
