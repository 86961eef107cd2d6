"""AppTest fixtures: the real app (router + pages) against a fresh EVALCORE_HOME per test."""
from __future__ import annotations

import pytest

from tests.pages.helpers import APP, REPO_ROOT, RUN_TIMEOUT, clear_streamlit_caches


@pytest.fixture(scope="session", autouse=True)
def _component_scan_once():  # type: ignore[no-untyped-def]
    """Each new AppTest has Streamlit scan every installed distribution's metadata for
    custom-component manifests (0.13 s CPU, 0.6-0.9 s wall on a loaded machine, ~170
    times here); the installed packages do not change during a session: scan once."""
    try:
        from streamlit.components.v2 import manifest_scanner
    except ImportError:  # a Streamlit without v2 components scans nothing
        yield
        return
    real = manifest_scanner.scan_component_manifests
    found = real()
    manifest_scanner.scan_component_manifests = lambda max_workers=None: list(found)
    yield
    manifest_scanner.scan_component_manifests = real


@pytest.fixture()
def app(settings, monkeypatch: pytest.MonkeyPatch):
    """An AppTest of `streamlit_app.py`, not yet run; `settings` points it at tmp_path."""
    from streamlit.testing.v1 import AppTest

    # `from pages import _shared` needs the repo root on sys.path, as `streamlit run` sets it.
    monkeypatch.syspath_prepend(str(REPO_ROOT))
    clear_streamlit_caches()
    yield AppTest.from_file(str(APP), default_timeout=RUN_TIMEOUT)
    clear_streamlit_caches()
    from evalcore.runner.background import get_runner

    get_runner().stop_workers()


@pytest.fixture()
def page_env(settings, monkeypatch: pytest.MonkeyPatch):
    """Settings in a fresh home, the repository on sys.path (so `pages._shared` imports),
    and no cached engine or report left from another test's database."""
    monkeypatch.syspath_prepend(str(REPO_ROOT))
    clear_streamlit_caches()
    yield settings
    clear_streamlit_caches()
    from evalcore.runner.background import get_runner

    get_runner().stop_workers()  # this test's database is gone with it


@pytest.fixture()
def runner_clients():
    """Close the HTTP sessions the background loop opened for this test's runs."""
    yield
    from evalcore.providers.client import close_clients
    from evalcore.runner.background import get_runner

    get_runner().call(close_clients(), timeout=10)
