import shutil

import pytest


def pytest_collection_modifyitems(config, items):
    """ns-2 differential tests are skipped, visibly, where `ns` is not installed."""
    if shutil.which("ns"):
        return
    skip = pytest.mark.skip(reason="ns-2 (`ns`, Debian package ns2) is not installed")
    for item in items:
        if "ns2" in item.keywords:
            item.add_marker(skip)
