"""`tcplab lab` in a real browser: headless Chromium (Debian's `chromium` and
`chromium-driver`) driven by Selenium, as a user would: the page loads with no
console error; moving the buffer updates the closed form, the fluid answer, the
packet engine's table and the plots; an invalid value shows the engine's error
next to its control; cancel works; a shared URL reproduces the same numbers; the
gallery opens a claim. Screenshots of each step go to artifacts/lab/ (git-ignored;
CI keeps them as artifacts).

Skipped, visibly, without selenium or a Chromium with its driver:

    apt-get install -y chromium chromium-driver && .venv/bin/pip install selenium
"""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path
from urllib.parse import quote

import pytest

from tcplab.lab.local import LabProcess


from headless import SKIP_WITHOUT_CHROMIUM, chromium, console_errors  # noqa: E402

pytestmark = SKIP_WITHOUT_CHROMIUM

ART = Path(__file__).resolve().parents[1] / "artifacts" / "lab"
SHORT = {"duration": "60s", "warmup": "5s"}


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    """A small reproduction report (paper D, tiny mode): the gallery's verdicts and figures."""
    from tcplab.cli import main

    out = tmp_path_factory.mktemp("lab-report")
    assert main(["reproduce", "triple-slowstart", "--tiny", "--out", str(out)]) == 0
    return out


@pytest.fixture(scope="module")
def lab(report):
    with LabProcess("--report", str(report)) as lab:
        yield lab


@pytest.fixture(scope="module")
def browser():
    ART.mkdir(parents=True, exist_ok=True)
    drv = chromium(1400, 1700)
    yield drv
    drv.quit()


def _hash(scenario: str, sets: dict) -> str:
    return f"#scenario={scenario}" + "".join(f"&set={quote(k)}={quote(json.dumps(v))}" for k, v in sets.items())


def _wait(browser, js: str, timeout: float = 60.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        v = browser.execute_script(js)
        if v:
            return v
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for: {js}; status: "
                         + str(browser.execute_script("return document.getElementById('packet-status').textContent")))


def _n(browser, name: str) -> int:
    return int(browser.execute_script(f"return +(document.body.dataset.{name} || 0)"))


def _open(browser, lab, scenario: str, sets: dict) -> None:
    before = 0
    browser.get(f"{lab.base}?token={lab.token}{_hash(scenario, sets)}")
    _wait(browser, f"return +(document.body.dataset.plotSeq || 0) > {before} && "
                   "document.getElementById('packet-status').dataset.state === 'done'")


def _rows(browser) -> dict:
    return browser.execute_script(
        "const o = {}; for (const tr of document.querySelectorAll('#answers tbody tr')) "
        "o[tr.cells[0].textContent] = [...tr.cells].slice(1).map(c => c.textContent); return o;")


def _set(browser, key: str, value) -> None:
    browser.execute_script(
        "const el = document.querySelector(`.ctl[data-key='${arguments[0]}'] input.num, "
        ".ctl[data-key='${arguments[0]}'] select:not(.bufunit)`);"
        "el.value = arguments[1]; el.dispatchEvent(new Event('change'));", key, str(value))


def test_page_loads_with_every_answer_and_no_console_error(lab, browser):
    _open(browser, lab, "c-parallel-sack", SHORT)
    rows = _rows(browser)
    assert {"closed form aimd-one", "fluid ONE (rate-proportional)", "fluid ALL (synchronized)", "packet engine"} <= set(rows)
    assert rows["closed form aimd-one"][1] == "0.968"  # Theorem 1, N = 10, β = ½
    traces = browser.execute_script("return document.getElementById('plot-cwnd').data.map(t => t.name)")
    assert sum(t.startswith("flow ") for t in traces) == 10  # paper C: N = 10 flows
    assert any(t.startswith("AIMD peak") for t in traces)
    why = browser.execute_script("return document.getElementById('why').textContent")
    assert "0.13 × the bandwidth-delay product" in why and "Synchronization" in why
    models = browser.execute_script("return [...document.querySelectorAll('#predictions tbody tr')].map(r => [r.cells[0].textContent, r.cells[2].textContent])")
    assert ["buffer-bdp", "150.0"] in models and ["slowstart-cycle", "does not apply"] in models
    assert not console_errors(browser)
    browser.save_screenshot(str(ART / "01-paper-c-loaded.png"))


def test_moving_the_buffer_updates_models_table_and_plots(lab, browser):
    _open(browser, lab, "c-parallel-sack", SHORT)
    before = _rows(browser)
    q, p = _n(browser, "quickSeq"), _n(browser, "plotSeq")
    _set(browser, "topology.bottleneck.buffer", 60)
    _wait(browser, f"return +document.body.dataset.quickSeq > {q} && +document.body.dataset.plotSeq > {p}")
    after = _rows(browser)
    for row in ("closed form aimd-all with buffer", "fluid ALL (synchronized)", "packet engine"):
        assert after[row] != before[row], row
    names = browser.execute_script("return document.getElementById('plot-queue').data.map(t => t.name)")
    assert "buffer 60" in names
    cwnd = browser.execute_script("return document.getElementById('plot-cwnd').data.map(t => t.name)")
    assert any(n.startswith("AIMD peak (B + μτ)/N = 21.0") for n in cwnd)  # (60 + 150)/10
    assert "buffer=60" in browser.execute_script("return decodeURIComponent(location.hash)")
    assert "\nbuffer = 60\n" in browser.execute_script("return document.getElementById('toml').value")
    assert not console_errors(browser)
    browser.save_screenshot(str(ART / "02-buffer-60.png"))


def test_an_invalid_value_shows_the_engine_error_next_to_its_control(lab, browser):
    _open(browser, lab, "c-parallel-sack", SHORT)
    _set(browser, "flows.sack.beta", 2)
    msg = _wait(browser, "return document.querySelector(\".ctl[data-key='flows.sack.beta'] .err\").textContent")
    assert "flows.sack.beta: must be in (0, 1)" in msg
    browser.save_screenshot(str(ART / "03-invalid-beta.png"))
    # the browser logs the refused request itself, and nothing else
    assert all("/api/analyze" in e["message"] and "400" in e["message"] for e in console_errors(browser))


def test_cancel_stops_a_long_run(lab, browser):
    _open(browser, lab, "c-parallel-sack", SHORT)
    sets = {"duration": "5000s", "warmup": "5s", "flows.sack.count": 100, "topology.bottleneck.rate": "100Mbps"}
    browser.get(f"{lab.base}?token={lab.token}{_hash('c-parallel-sack', sets)}")
    _wait(browser, "return document.getElementById('progress').value > 0 && "
                   "document.getElementById('packet-status').dataset.state === 'running'")
    browser.find_element("id", "cancel").click()
    _wait(browser, "return document.getElementById('packet-status').dataset.state === 'cancelled'", 10)
    browser.save_screenshot(str(ART / "04-cancelled.png"))
    assert not console_errors(browser)


def test_a_shared_url_reproduces_the_same_numbers(lab, browser):
    _open(browser, lab, "c-parallel-sack", {**SHORT, "seed": 7})
    _set(browser, "topology.bottleneck.buffer", 35)
    p = _n(browser, "plotSeq")
    _wait(browser, f"return +document.body.dataset.plotSeq > {p}")
    first = _rows(browser)["packet engine"][:5]
    url = browser.execute_script("return location.origin + location.pathname + shareHash()")
    browser.get("about:blank")
    browser.get(url)  # the cookie carries the token; the hash carries the scenario and the knobs
    _wait(browser, "return +(document.body.dataset.plotSeq || 0) > 0 && "
                   "document.getElementById('packet-status').dataset.state === 'done'")
    assert _rows(browser)["packet engine"][:5] == first
    assert browser.execute_script("return document.querySelector(\".ctl[data-key='topology.bottleneck.buffer'] input.num\").value") == "35"


def test_the_gallery_opens_a_claim_live(lab, browser):
    _open(browser, lab, "c-parallel-sack", SHORT)
    browser.find_element("id", "show-gallery").click()
    cards = _wait(browser, "const c = [...document.querySelectorAll('.card')].map(c => c.dataset.claim);"
                           "return c.length ? c : null")
    assert cards[0] == "A1" and cards[-1] == "D4" and len(cards) >= 30
    # the report's verdict and figure on paper D's cards (loaded), the docs' verdicts on the others
    imgs = _wait(browser, "const i = [...document.querySelectorAll(\".card[data-claim^='D'] img.thumb\")];"
                          "return i.length === 4 && i.every(x => x.complete && x.naturalWidth > 0) ? i.length : null")
    assert imgs == 4
    browser.execute_script("document.querySelector(\".card[data-claim='D1']\").scrollIntoView()")
    browser.save_screenshot(str(ART / "05-gallery-paper-d-cards.png"))
    assert not browser.execute_script("return document.querySelectorAll(\".card[data-claim^='A'] img.thumb\").length")
    p = _n(browser, "plotSeq")
    browser.execute_script("document.querySelector(\".card[data-claim='D2'] button.open\").click()")
    _wait(browser, f"return +document.body.dataset.plotSeq > {p} && "
                   "document.getElementById('packet-status').dataset.state === 'done'", 90)
    assert browser.execute_script("return document.getElementById('sc-name').textContent") == "d-tahoe-satellite"
    names = browser.execute_script("return document.getElementById('plot-cwnd').data.map(t => t.name)")
    assert any(n.startswith("W_max = B + μτ + 1 = 227.1") for n in names)  # B = 21, μτ = 205.1
    why = browser.execute_script("return document.getElementById('why').textContent")
    assert "3 slow start(s) per cycle predicted" in why
    assert "0 single, 0 double and 3 triple slow-start cycles" in why  # what the packet engine did
    assert not console_errors(browser)
    browser.save_screenshot(str(ART / "06-gallery-d2-triple-slowstart.png"))
    # zoom to a loss episode: every plot's time axis follows (13 RTTs around the first loss)
    browser.find_element("id", "zoom-loss").click()
    spans = _wait(browser, "const r = ['plot-cwnd', 'plot-queue', 'plot-goodput', 'plot-seq'].map("
                           "id => document.getElementById(id).layout.xaxis.range);"
                           "return r.every(x => x && x[1] - x[0] < 60) ? r.map(x => x[1] - x[0]) : null")
    assert spans == pytest.approx([13 * 0.56] * 4, rel=0.02)
    browser.save_screenshot(str(ART / "07-loss-episode.png"))


def test_figures_and_results_download(lab, browser):
    _open(browser, lab, "c-parallel-sack", SHORT)
    svg = browser.execute_async_script(
        "const done = arguments[0]; Plotly.toImage('plot-cwnd', {format: 'svg', width: 800, height: 300})"
        ".then(done, e => done('error: ' + e));")
    assert svg.startswith("data:image/svg+xml"), svg[:80]
    png = browser.execute_async_script(
        "const done = arguments[0]; Plotly.toImage('plot-queue', {format: 'png', width: 800, height: 300})"
        ".then(done, e => done('error: ' + e));")
    assert png.startswith("data:image/png;base64,")
    links = browser.execute_script("return [...document.querySelectorAll('#downloads a')].map(a => a.href)")
    flows = next(h for h in links if h.endswith("/flows.parquet"))
    # the page's own session (its cookie) fetches the file
    size = browser.execute_async_script(
        "const done = arguments[1]; fetch(arguments[0]).then(r => r.arrayBuffer()).then(b => done(b.byteLength));", flows)
    assert size > 1000
    toml = browser.execute_script("return decodeURIComponent(document.getElementById('dl-toml').href.split(',')[1])")
    assert 'name = "c-parallel-sack"' in toml and 'duration = "60s"' in toml


@pytest.mark.skipif(not shutil.which("ns"), reason="ns-2 is not installed (apt-get install ns2)")
def test_ns2_on_request_joins_the_table(lab, browser):
    _open(browser, lab, "c-parallel-sack", {"duration": "20s", "warmup": "5s"})
    browser.find_element("id", "run-ns2").click()
    _wait(browser, "return document.getElementById('engine-note').dataset.state === 'done'", 120)
    rows = _rows(browser)
    assert "ns2 engine" in rows and rows["ns2 engine"][5].endswith("%")  # its difference to the packet engine
    browser.save_screenshot(str(ART / "08-ns2-row.png"))
    # a knob moved during an ns-2 run stops it: its answer would be to another question
    _set(browser, "duration", 600)
    _wait(browser, "return document.getElementById('packet-status').dataset.state === 'done'")
    browser.find_element("id", "run-ns2").click()
    _wait(browser, "return document.getElementById('engine-note').dataset.state === 'running'")
    _set(browser, "topology.bottleneck.buffer", 30)
    _wait(browser, "return document.getElementById('engine-note').dataset.state === 'cancelled'", 10)
    assert "ns2 engine" not in _rows(browser)


def test_the_toml_pane_and_the_controls_stay_in_sync(lab, browser, tmp_path):
    _open(browser, lab, "c-parallel-sack", SHORT)
    q = _n(browser, "quickSeq")
    area = browser.find_element("id", "toml")
    text = area.get_attribute("value").replace("count = 10", "count = 4")
    browser.execute_script("const a = arguments[0]; a.value = arguments[1]; a.dispatchEvent(new Event('input'));", area, text)
    _wait(browser, f"return +document.body.dataset.quickSeq > {q}")
    assert browser.execute_script("return document.querySelector(\".ctl[data-key='flows.sack.count'] input.num\").value") == "4"
    rows = _rows(browser)
    assert rows["closed form aimd-one"][1] == "0.923"  # Theorem 1 at N = 4: 1 − 1/13
    # an uploaded file replaces the scenario
    path = tmp_path / "mine.toml"
    path.write_text(text.replace('name = "c-parallel-sack"', 'name = "my-upload"'))
    q = _n(browser, "quickSeq")
    browser.find_element("id", "upload").send_keys(str(path))
    _wait(browser, f"return +document.body.dataset.quickSeq > {q}")
    assert browser.execute_script("return document.getElementById('sc-name').textContent") == "my-upload"
    assert "toml=" in browser.execute_script("return location.hash")  # a pasted scenario travels whole in the link


@pytest.mark.parametrize("name", ["a-sine-background", "parking-lot", "two-way"])
def test_other_shapes_of_scenario_open_cleanly(lab, browser, name):
    """A UDP background, a parking lot (no dumbbell knobs), two-way traffic: the page
    answers and draws with no console error."""
    _open(browser, lab, name, {"duration": "30s", "warmup": "5s"})
    assert "packet engine" in _rows(browser)
    assert browser.execute_script("return document.getElementById('plot-cwnd').data.length") > 0
    assert not console_errors(browser)
