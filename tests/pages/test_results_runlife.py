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


def _queued_behind_a_busy_worker(engine, monkeypatch) -> int:  # type: ignore[no-untyped-def]
    """A run queued a minute ago (older than the no-worker limit) while worker `w1`
    executes another job under a live lease; no embedded worker to take the run."""
    from datetime import timedelta

    from evalcore.store import jobs, queries
    from evalcore.store.tables import utcnow

    monkeypatch.setenv("EVALCORE_EMBEDDED_WORKER", "0")
    ds = seed_dataset(engine, "queue", [f"q{i}?" for i in range(2)])
    run_id = int(queries.create_run(engine, kind="stability", dataset_id=ds, model="m",
                                    rounds=2, total=4, created_at=utcnow() - timedelta(
                                        minutes=1)).id)
    jobs.create_job(engine, "run", run_id=run_id, label=f"stability run {run_id}: m")
    busy = jobs.create_job(engine, "attack", label="attack set")
    assert jobs.claim_job(engine, "w1", job_id=busy, lease_s=600) is not None
    return run_id


def test_a_run_queued_behind_a_busy_worker_says_so_and_can_be_cancelled(page_env, engine,
                                                                        monkeypatch):
    from evalcore.store import queries

    run_id = _queued_behind_a_busy_worker(engine, monkeypatch)
    at = run_page(PAGE)
    shown = " ".join(values(at, "caption") + values(at, "warning") + values(at, "markdown"))
    assert "waiting: worker busy with 1 job" in shown
    assert "no worker" not in shown and "is a worker running" not in shown
    listed = next(df.value for df in at.dataframe if "stale" in df.value.columns)
    assert not listed["stale"].any()
    assert {"results.cancel", "results.delete"} <= _keys(at)
    assert "results.resume" not in _keys(at)
    at.button(key="results.cancel").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert queries.get_run(engine, run_id).status == "cancelled"


def test_a_queued_run_can_be_deleted(page_env, engine, monkeypatch):
    from evalcore.store import jobs, queries

    run_id = _queued_behind_a_busy_worker(engine, monkeypatch)
    at = run_page(PAGE)
    at.button(key="results.delete").click().run()
    at.button(key="results.delete_confirm").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert queries.list_runs(engine) == []
    assert jobs.list_jobs(engine, kind="run") == []
    assert any(f"Run #{run_id} deleted" in s for s in values(at, "success"))


def test_a_queued_run_with_no_worker_at_all_says_so(page_env, engine, monkeypatch):
    from evalcore.store import jobs

    _queued_behind_a_busy_worker(engine, monkeypatch)
    busy = jobs.list_jobs(engine, kind="attack")[0]
    jobs.expire_lease(engine, int(busy.id))  # its worker died: nobody is alive
    at = run_page(PAGE)
    assert any("is a worker running?" in w for w in values(at, "warning"))
    assert {"results.cancel", "results.delete"} <= _keys(at)
