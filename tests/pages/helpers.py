"""Helpers for the AppTest tests (imported by tests/pages/conftest.py and the tests)."""
from __future__ import annotations

from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
APP = REPO_ROOT / "streamlit_app.py"
SAMPLES = REPO_ROOT / "data" / "samples"
RUN_TIMEOUT = 60  # seconds per script run: the first run imports pandas, SQLAlchemy ...


def add_fake_model(settings, url: str = "http://127.0.0.1:9/v1", name: str = "fake",
                   concurrency: int = 2) -> None:
    """An OpenAI-style model `name` at `url` (a fault server's `openai_url`), one attempt a
    call so a fault shows at once."""
    from evalcore.providers.base import ModelConfig
    from evalcore.providers.registry import add_model

    add_model(settings.models_path, ModelConfig(name=name, kind="openai", base_url=url,
                                                model=name, concurrency=concurrency,
                                                max_attempts=1))


def clear_streamlit_caches() -> None:
    """Cached engines and parses must not leak from one test's database into the next."""
    import streamlit as st

    st.cache_resource.clear()
    st.cache_data.clear()


VERBATIM = ("Code", "Text", "TextInput", "TextArea", "Json", "Exception")
"""Elements that do not render Markdown: their value is what the reader sees."""


def shown(markdown: str) -> str:
    """What a reader sees of Markdown escaped by `evalcore.markup.md`: no backslashes."""
    import re

    return re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", markdown)


def texts(at) -> list[str]:
    """Every text the app drew, main area and sidebar (tables as CSV, widgets' values)."""
    found: list[str] = []
    for node in [*at.main, *at.sidebar]:  # a Block iterates over itself and all descendants
        kind = type(node).__name__
        if kind == "Dataframe":
            found.append(node.value.to_csv())
        elif kind not in ("Block", "SpecialBlock", "Column", "Tab", "Form"):
            value = getattr(node, "value", None)
            if isinstance(value, str):
                found.append(value if kind in VERBATIM else shown(value))
            label = getattr(node, "label", None)
            if isinstance(label, str):
                found.append(label)
    return found


def run_page(path: str, session: dict | None = None):  # -> AppTest
    """An AppTest of one page file, run once (with `session` state set first), no exception."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(path, default_timeout=RUN_TIMEOUT)
    for key, value in (session or {}).items():
        at.session_state[key] = value
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def values(at, kind: str) -> list[str]:
    """The values of every element of one kind ("error", "markdown" ...) as text."""
    return [shown(str(el.value)) for el in at.get(kind)]


def wait_finished(engine, run_id: int, timeout: float = 60.0):
    """Wait for a background run to end (so the test leaves no work behind); the run."""
    import time

    import pytest

    from evalcore.store import queries

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        run = queries.get_run(engine, run_id)
        if run.status in queries.FINISHED:
            return run
        time.sleep(0.1)
    pytest.fail(f"run {run_id} still {run.status} after {timeout} s ({run.done}/{run.total})")


def wait_jobs(engine, timeout: float = 60.0) -> list:
    """Wait until no job is queued or running (the embedded worker executed what the page
    queued); returns every job."""
    import time

    import pytest

    from evalcore.store.jobs import list_jobs

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        jobs = list_jobs(engine)
        if all(j.status not in ("queued", "running") for j in jobs):
            return jobs
        time.sleep(0.1)
    pytest.fail(f"jobs still live after {timeout} s: {[(j.id, j.kind, j.status) for j in jobs]}")
