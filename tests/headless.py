"""Headless Chromium for the browser tests (the report, the lab, the site): Debian's
`chromium` and `chromium-driver` driven by Selenium. A test module imports what it
needs and marks itself with `SKIP_WITHOUT_CHROMIUM`; without selenium the importing
module is skipped, visibly:

    apt-get install -y chromium chromium-driver && .venv/bin/pip install selenium
"""

from __future__ import annotations

import shutil

import pytest

webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed (pip install selenium)")

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
DRIVER = shutil.which("chromedriver")
SKIP_WITHOUT_CHROMIUM = pytest.mark.skipif(
    not (CHROMIUM and DRIVER), reason="no headless Chromium (apt-get install -y chromium chromium-driver)")


def chromium(width: int, height: int, *extra: str):
    """A headless Chromium of that window size that keeps the page's console log."""
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    opts = Options()
    opts.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                f"--window-size={width},{height}", *extra):
        opts.add_argument(arg)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    drv = webdriver.Chrome(service=Service(DRIVER), options=opts)
    drv.set_page_load_timeout(60)
    return drv


def console_errors(driver) -> list:
    """The page's console entries at level SEVERE or ERROR."""
    return [e for e in driver.get_log("browser") if e["level"] in ("SEVERE", "ERROR")]
