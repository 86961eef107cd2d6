"""The router and the shared sidebar: every page loads, the sidebar tells where data goes."""
from __future__ import annotations

import ast

import pytest

from tests.pages.helpers import APP, REPO_ROOT, RUN_TIMEOUT, clear_streamlit_caches


PAGES = [("pages/home.py", "evalcore"), ("pages/datasets.py", "Datasets"), ("pages/models.py", "Models"),
         ("pages/stability.py", "Stability"), ("pages/attacks.py", "Attacks"),
         ("pages/robustness.py", "Robustness"), ("pages/fairness.py", "Fairness"),
         ("pages/results.py", "Results"), ("pages/monitoring.py", "Monitoring"),
         ("pages/review.py", "Review")]


def test_every_page_file_is_routed():
    files = {f"pages/{p.name}" for p in (REPO_ROOT / "pages").glob("*.py")
             if not p.name.startswith("_")}
    assert files == {page for page, _ in PAGES}


@pytest.mark.parametrize("page, title", PAGES)
def test_page_loads_through_the_router_without_exception(app, page, title):
    app.run()
    app.switch_page(page).run()
    assert not app.exception, [e.value for e in app.exception]
    assert [t.value for t in app.title] == [title]


@pytest.mark.parametrize("page", [page for page, _ in PAGES])
def test_page_has_no_bare_module_strings_for_streamlit_magic_to_draw(page):
    body = ast.parse((REPO_ROOT / page).read_text(encoding="utf-8")).body
    strays = [node.lineno for node in body[1:] if isinstance(node, ast.Expr)
              and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)]
    assert strays == [], f"bare strings at lines {strays} would be drawn by Streamlit magic"


def test_default_page_is_home_with_the_shared_sidebar(app, settings):
    # The sidebar is checked on the default page: AppTest (1.67) drops sidebar elements
    # after switch_page() in an st.navigation app, while the browser keeps them.
    from evalcore.providers.local import stop_local

    stop_local()  # the embedded server is process-wide: another test may have started it
    app.run()
    assert not app.exception
    assert [t.value for t in app.title] == ["evalcore"]
    sidebar = [n.value for n in app.sidebar if type(n).__name__ in ("Code", "Markdown")]
    assert settings.redacted_db_url() in sidebar
    # the app's embedded worker has not loaded the model: no run used it yet
    assert any(line.startswith("not loaded") and "in worker `app@" in line for line in sidebar)


def test_sidebar_hides_the_database_password(settings, monkeypatch):
    """The sidebar shows the URL from settings with the password replaced."""
    from streamlit.testing.v1 import AppTest

    from evalcore.config import load_settings

    monkeypatch.syspath_prepend(str(REPO_ROOT))
    monkeypatch.setenv("EVALCORE_DB_URL", "postgresql+psycopg://evaluser:s3cr3tpw@db.example:5432/ev")
    load_settings.cache_clear()
    clear_streamlit_caches()
    # Only the sidebar: the pages would try to connect to that (fictional) server.
    at = AppTest.from_string("from pages._shared import sidebar\nsidebar()",
                             default_timeout=RUN_TIMEOUT).run()
    assert not at.exception
    shown = " ".join(n.value for n in at.sidebar if type(n).__name__ == "Code")
    assert "evaluser" in shown and "db.example" in shown
    assert "s3cr3tpw" not in shown and "***" in shown
    load_settings.cache_clear()


def test_engine_cache_follows_the_database(app, settings, monkeypatch, tmp_path):
    """A second EVALCORE_HOME gets its own engine: nothing imported in the first shows up."""
    from streamlit.testing.v1 import AppTest

    from evalcore.config import load_settings, settings_from_env

    app.run()
    app.switch_page("pages/datasets.py").run()
    app.radio(key="datasets.source").set_value("Bundled sample").run()
    app.selectbox(key="datasets.sample").set_value("math_zh_gbk.csv").run()
    app.button(key="datasets.import").click().run()
    stored = next(d.value for d in app.dataframe if "source file" in d.value.columns)
    assert "math_zh_gbk" in stored["name"].tolist()

    other = tmp_path / "other-home"
    monkeypatch.setenv("EVALCORE_HOME", str(other))
    load_settings.cache_clear()  # NOT clearing st.cache_resource: the URL must be the key
    second = AppTest.from_file(str(APP), default_timeout=RUN_TIMEOUT).run()
    second.switch_page("pages/datasets.py").run()
    assert not second.exception
    assert any("No datasets yet" in i.value for i in second.info)
    assert settings_from_env({"EVALCORE_HOME": str(other)}).redacted_db_url() in [
        n.value for n in second.sidebar if type(n).__name__ == "Code"]


def test_app_tests_do_not_rescan_the_installed_packages(monkeypatch) -> None:
    """The session scans distributions for Streamlit components once (tests/pages/
    conftest.py), not once per AppTest (Streamlit swallows errors there: count calls)."""
    import importlib.metadata

    from streamlit.testing.v1 import AppTest

    calls: list[int] = []
    real = importlib.metadata.distributions
    monkeypatch.setattr(importlib.metadata, "distributions",
                        lambda *a, **k: calls.append(1) or real(*a, **k))
    for _ in range(2):
        at = AppTest.from_string("import streamlit as st\nst.write('hello')")
        at.run()
        assert not at.exception and at.markdown[0].value == "hello"
    assert calls == []


@pytest.fixture()
def demo_data(engine, settings):
    """The demo's dataset with a finished 12 x 5 run of it stored as the local model
    answered it on the walk (stable, flaky and wrong reviews; one reply read as nothing)."""
    from evalcore.dataset import import_dataset
    from evalcore.demo import DEMO_DATASET, DEMO_FILE, demo_items
    from tests.fakes.stored_runs import seed_run

    ds = import_dataset(engine, DEMO_FILE, name=DEMO_DATASET, allow_duplicate=True)
    verdicts = {i: [(i + r) % 3 != 0 for r in range(5)] for i in range(demo_items())}
    answers = {i: ("positive" if i % 2 else "Negative!") for i in range(demo_items())}
    return seed_run(engine, int(ds.id), verdicts, 5, model="local", name="demo",
                    answers=answers)


@pytest.mark.parametrize("page, title", PAGES)
def test_page_loads_with_the_demos_data(app, demo_data, page, title):
    """Every page with what a new user has after the demo (each page's run pickers,
    tables and charts have a run to draw), without exception."""
    app.run()
    app.switch_page(page).run()
    assert not app.exception, [e.value for e in app.exception]
    assert [t.value for t in app.title] == [title]
