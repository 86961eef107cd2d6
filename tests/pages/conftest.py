"""AppTest fixtures: the real app (router + pages) against a fresh EVALCORE_HOME per test."""
from __future__ import annotations

import os

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


_COMPILED: dict[tuple[str, bytes, bool], object] = {}
"""Code objects of the scripts AppTest ran in this process (`_compile_each_script_once`)."""


@pytest.fixture(autouse=True)
def _compile_each_script_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """AppTest gives every script run a new ScriptCache, so each run reads, parses,
    rewrites (Streamlit's magic) and compiles the router and the page again: about a
    third of a page run's CPU here. A server shares one cache across sessions and runs;
    share the code here too, keyed by the script's path and its text (an edited script
    is compiled anew), so each run still executes exactly what the file says. Patched
    per test: the other folders' tests on this worker keep Streamlit's own."""
    from streamlit import config
    from streamlit.runtime.scriptrunner.script_cache import ScriptCache

    real = ScriptCache.get_bytecode

    def get_bytecode(self, script_path: str):  # type: ignore[no-untyped-def]
        path = os.path.abspath(script_path)
        with open(path, "rb") as fh:
            key = (path, fh.read(), bool(config.get_option("runner.magicEnabled")))
        if key not in _COMPILED:
            _COMPILED[key] = real(self, script_path)
        return _COMPILED[key]

    monkeypatch.setattr(ScriptCache, "get_bytecode", get_bytecode)


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


@pytest.fixture()
def engine(settings):  # type: ignore[no-untyped-def]
    """This test's database through the engine the pages open for it (`get_engine`, as
    `pages._engine` does; several tests here already check through it): SQLAlchemy caches
    compiled statements per engine, so a second engine on the same file compiled every
    query the test and the page share twice, and was opened (schema check) twice."""
    from evalcore.store.db import get_engine

    settings.home.mkdir(parents=True, exist_ok=True)
    eng = get_engine(settings.db_url)
    yield eng
    eng.dispose()
