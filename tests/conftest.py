import shutil
import signal

import pytest


def pytest_configure(config):
    """A shell starts a background job (`pytest ... &`) with SIGINT ignored, and every
    child inherits that: the tests that press Ctrl-C on a run need the usual
    disposition (Python's KeyboardInterrupt), here and in the processes they start."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def pytest_collection_modifyitems(config, items):
    """ns-2 differential tests are skipped, visibly, where `ns` is not installed."""
    if shutil.which("ns"):
        return
    skip = pytest.mark.skip(reason="ns-2 (`ns`, Debian package ns2) is not installed")
    for item in items:
        if "ns2" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(autouse=True, scope="session")
def _private_cache(tmp_path_factory):
    """Tests never read or fill the user's cache (~/.cache/tcplab): one per session."""
    import os

    from tcplab.cache import ENV

    old = os.environ.get(ENV)
    os.environ[ENV] = str(tmp_path_factory.mktemp("tcplab-cache"))
    yield
    if old is None:
        os.environ.pop(ENV, None)
    else:
        os.environ[ENV] = old
