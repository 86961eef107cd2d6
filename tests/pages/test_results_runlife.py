"""A run's life on the Results page (issue 21): a delete asks first and then shows the
list without the run, and a queued run waiting behind a busy worker says so and can be
cancelled or deleted."""
from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

from tests.fakes.stored_runs import seed_dataset, seed_run
from tests.pages.helpers import run_page, values

REPO = Path(__file__).resolve().parents[2]
PAGE = str(REPO / "pages" / "results.py")


def _keys(at: AppTest) -> set[str]:
    return {getattr(b, "key", None) for b in at.button}


def test_delete_run_asks_first_then_lists_the_runs_without_it(page_env, engine):
    from evalcore.store import queries

    ds = seed_dataset(engine, "del", [f"q{i}?" for i in range(3)])
    keep = seed_run(engine, ds, {0: [1, 0]}, 2, model="keep")
    gone = seed_run(engine, ds, {0: [1, 1], 1: [0, 1]}, 2, model="gone")
    at = run_page(PAGE)
    assert at.selectbox(key="results.pick").value == gone
    at.button(key="results.delete").click().run()
    assert not at.exception, [e.value for e in at.exception]
    queries.get_run(engine, gone)  # nothing deleted yet: the page asks first
    assert any(f"Delete run #{gone}" in w and "4 stored call(s)" in w
               for w in values(at, "warning"))
    at.button(key="results.delete_cancel").click().run()
    queries.get_run(engine, gone)
    assert "results.delete_confirm" not in _keys(at)

    at.button(key="results.delete").click().run()
    at.button(key="results.delete_confirm").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert [r.id for r in queries.list_runs(engine)] == [keep]
    assert any(f"Run #{gone} deleted" in s for s in values(at, "success"))
    listed = next(df.value for df in at.dataframe if "stale" in df.value.columns)
    assert list(listed["id"]) == [keep]
    assert at.selectbox(key="results.pick").value == keep
    assert "results.delete_confirm" not in _keys(at)


def test_deleting_the_last_run_leaves_the_empty_list_and_the_message(page_env, engine):
    from evalcore.store import queries

    ds = seed_dataset(engine, "one", ["q?"])
    only = seed_run(engine, ds, {0: [1]}, 1)
    at = run_page(PAGE)
    at.button(key="results.delete").click().run()
    at.button(key="results.delete_confirm").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert queries.list_runs(engine) == []
    assert any(f"Run #{only} deleted" in s for s in values(at, "success"))
    assert any("No runs yet" in i for i in values(at, "info"))
