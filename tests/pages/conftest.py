"""AppTest fixtures: the real app (router + pages) against a fresh EVALCORE_HOME per test."""
from __future__ import annotations

import pytest

from tests.pages.helpers import APP, REPO_ROOT, RUN_TIMEOUT, clear_streamlit_caches


@pytest.fixture()
def app(settings, monkeypatch: pytest.MonkeyPatch):
    """An AppTest of `streamlit_app.py`, not yet run; `settings` points it at tmp_path."""
    from streamlit.testing.v1 import AppTest

    # `from pages import _shared` needs the repo root on sys.path, as `streamlit run` sets it.
    monkeypatch.syspath_prepend(str(REPO_ROOT))
    clear_streamlit_caches()
    yield AppTest.from_file(str(APP), default_timeout=RUN_TIMEOUT)
    clear_streamlit_caches()
