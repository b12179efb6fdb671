"""The documentation site as a reader opens it: `mkdocs build --strict` into a temporary
folder, then headless Chromium (Debian's `chromium` and `chromium-driver`, via Selenium)
opens site/index.html from disk (file://, no server), follows every link of the
navigation, checks each opens a page of the site (not a folder listing, which is what a
link to a folder gives on file://), that the notebooks show their executed outputs,
and that the search box finds a page with nothing served. Screenshots go to
artifacts/site/ (git-ignored), one per page and one of the search results.

Skipped, visibly, without mkdocs with its plugins or without a Chromium and its driver:

    .venv/bin/pip install 'mkdocs-material>=9.5' 'mkdocs-jupyter>=0.24' selenium
    apt-get install -y chromium chromium-driver
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHOTS = ROOT / "artifacts" / "site"

pytest.importorskip("mkdocs_jupyter", reason="mkdocs-jupyter is not installed (pip install 'mkdocs-material>=9.5' 'mkdocs-jupyter>=0.24')")
pytest.importorskip("material", reason="mkdocs-material is not installed (pip install 'mkdocs-material>=9.5' 'mkdocs-jupyter>=0.24')")

from headless import SKIP_WITHOUT_CHROMIUM, chromium, console_errors  # noqa: E402

pytestmark = SKIP_WITHOUT_CHROMIUM

PAGE_STATE = """
const article = document.querySelector('article.md-content__inner');
return {
  ready: document.readyState,
  title: document.title,
  h1: article && article.querySelector('h1') ? article.querySelector('h1').textContent : null,
  listing: /^Index of /.test(document.title) || !!document.querySelector('#parentDirLinkBox'),
  text: article ? article.innerText.length : 0,
  nav: Array.from(document.querySelectorAll('nav.md-nav--primary a.md-nav__link[href]'))
            .map(a => a.href).filter(h => !h.includes('#')),
  outputs: document.querySelectorAll('.jp-OutputArea-output, .output_area, .jp-RenderedImage').length,
  images: Array.from(document.querySelectorAll('article img'))
            .map(i => ({src: i.src.slice(0, 80), ok: i.complete && i.naturalWidth > 0})),
};
"""


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    mkdocs = shutil.which("mkdocs", path=str(Path(sys.executable).parent))
    if mkdocs is None:
        pytest.skip("mkdocs is not installed (pip install 'mkdocs-material>=9.5' 'mkdocs-jupyter>=0.24')")
    out = tmp_path_factory.mktemp("site") / "site"
    p = subprocess.run([mkdocs, "build", "--strict", "-q", "-d", str(out)], cwd=ROOT, capture_output=True,
                       text=True, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert p.returncode == 0, p.stderr[-3000:]
    return out


@pytest.fixture(scope="module")
def browser():
    drv = chromium(1280, 900)
    yield drv
    drv.quit()


def _shot(browser, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    browser.save_screenshot(str(SHOTS / (re.sub(r"[^\w.-]+", "_", name) + ".png")))


def test_every_nav_link_opens_a_page_of_the_site_from_disk(site, browser):
    home = site / "index.html"
    browser.get(home.as_uri())
    st = browser.execute_script(PAGE_STATE)
    assert st["h1"] and st["h1"].strip().startswith("tcplab"), st["h1"]  # the README is the home page
    _shot(browser, "index")
    links = list(dict.fromkeys(st["nav"]))
    # every page of mkdocs.yml's nav, the home page included
    assert len(links) >= 20, links
    seen = set()
    for url in links:
        path = Path(unquote(urlparse(url).path))
        assert url.startswith("file://") and path.is_file(), f"a nav link to what is not a file: {url}"
        assert site in path.parents, f"a nav link out of the site: {url}"
        browser.get(url)
        st = browser.execute_script(PAGE_STATE)
        rel = str(path.relative_to(site))
        assert st["ready"] == "complete" and not st["listing"], f"{rel}: not a page: {st['title']}"
        assert st["h1"] and st["text"] > 200, f"{rel}: no content ({st['title']})"
        broken = [i["src"] for i in st["images"] if not i["ok"]]
        assert not broken, f"{rel}: images that do not load: {broken}"
        errors = console_errors(browser)
        assert not errors, f"{rel}: console errors: {errors}"
        _shot(browser, rel)
        seen.add(rel)
    assert {"index.html", "engines.html", "notebooks/run-and-plot.html", "notebooks/sweep-and-query.html"} <= seen


def test_the_notebooks_show_their_executed_outputs(site, browser):
    for name, shows in (("run-and-plot", "Theorem 1 predicts"), ("sweep-and-query", "throughput")):
        browser.get((site / "notebooks" / f"{name}.html").as_uri())
        st = browser.execute_script(PAGE_STATE)
        assert st["outputs"] >= 3, f"{name}: {st['outputs']} outputs: not executed?"
        figures = [i for i in st["images"] if i["src"].startswith("data:image")]
        assert figures and all(i["ok"] for i in figures), f"{name}: no inline figure: {st['images']}"
        assert shows in browser.find_element("css selector", "article").text, name
    assert not (site / "notebooks" / "runs").exists(), "the notebooks' runs/ landed in the site"


def test_search_finds_pages_offline(site, browser):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    browser.get((site / "index.html").as_uri())
    box = WebDriverWait(browser, 10).until(ec.element_to_be_clickable((By.CSS_SELECTOR, "input.md-search__input")))
    box.click()
    box.send_keys("DCTCP")
    deadline = time.monotonic() + 20
    items = []
    while time.monotonic() < deadline:
        items = browser.find_elements(By.CSS_SELECTOR, ".md-search-result__item")
        if items:
            break
        time.sleep(0.25)
    _shot(browser, "search-DCTCP")
    assert items, "the search returned nothing: " + browser.find_element(By.CSS_SELECTOR, ".md-search-result__meta").text
    hrefs = [a.get_attribute("href") for a in browser.find_elements(By.CSS_SELECTOR, ".md-search-result__item a")]
    assert any("engines.html" in h for h in hrefs), hrefs  # the page with `tcplab predict dctcp`
    target = Path(unquote(urlparse(hrefs[0]).path))
    assert target.is_file(), hrefs[0]
    assert not console_errors(browser), console_errors(browser)
