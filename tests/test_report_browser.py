"""The HTML report in a real browser: headless Chromium (Debian's `chromium` and
`chromium-driver`) driven by Selenium opens every page of a small report (paper D,
tiny mode) from disk: every page loads, every image resolves, every link to a file
of the report points at a file that is there, and the console shows no error.

Skipped, visibly, without selenium or a Chromium with its driver:

    apt-get install -y chromium chromium-driver && .venv/bin/pip install selenium
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest

from tcplab.cli import main


from headless import SKIP_WITHOUT_CHROMIUM, chromium, console_errors  # noqa: E402

pytestmark = SKIP_WITHOUT_CHROMIUM

#: what every image reports once loaded, and every same-report link's target
PAGE_STATE = """
return {
  ready: document.readyState,
  title: document.title,
  images: Array.from(document.images).map(i => ({src: i.src, ok: i.complete && i.naturalWidth > 0})),
  links: Array.from(document.querySelectorAll('a[href]')).map(a => a.href),
};
"""


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    out = tmp_path_factory.mktemp("browser-report")
    assert main(["reproduce", "triple-slowstart", "--tiny", "--out", str(out)]) == 0
    return out


@pytest.fixture(scope="module")
def browser():
    drv = chromium(1200, 900, "--allow-file-access-from-files")
    yield drv
    drv.quit()


def _visit(browser, page: Path) -> dict:
    browser.get(page.as_uri())
    state = browser.execute_script(PAGE_STATE)
    errors = console_errors(browser)
    return dict(state, errors=errors)


def test_every_page_loads_with_its_images_and_no_console_error(report, browser):
    pages = [report / "index.html", *sorted(report.glob("*/index.html"))]
    assert len(pages) == 2  # the index and paper D's page
    seen_images = 0
    for page in pages:
        st = _visit(browser, page)
        assert st["ready"] == "complete" and st["title"], page
        broken = [i["src"] for i in st["images"] if not i["ok"]]
        assert not broken, f"{page}: images that do not load: {broken}"
        seen_images += len(st["images"])
        assert not st["errors"], f"{page}: console errors: {st['errors']}"
        for href in st["links"]:
            url = urlparse(href)
            if url.scheme == "file":  # a link inside the report: its file must be there
                assert Path(unquote(url.path)).exists(), f"{page}: dead link {href}"
    # the index has a thumbnail per claim of D, the paper page a figure per claim
    assert seen_images >= 2 * 4
