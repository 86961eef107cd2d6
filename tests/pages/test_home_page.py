"""Home: the steps with what exists, and the one-click demo on the local model."""
from __future__ import annotations

from tests.pages.helpers import values


def test_steps_show_what_exists_and_the_demo_queues_a_local_run(app, engine, monkeypatch):
    from evalcore.store import jobs, queries

    monkeypatch.setenv("EVALCORE_EMBEDDED_WORKER", "0")  # the run stays queued here
    at = app.run()  # Home is the default page (its links need the router)
    assert not at.exception, [e.value for e in at.exception]
    assert any("no datasets" in v for v in values(at, "markdown"))
    at.button(key="home.demo").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert [t.value for t in at.title] == ["Stability"]  # the demo run is shown there
    run = queries.list_runs(engine)[0]
    assert (run.kind, run.model, run.rounds, run.total) == ("stability", "local", 3, 30)
    assert [(j.kind, j.status) for j in jobs.list_jobs(engine)] == [("run", "queued")]
    at.switch_page("pages/home.py").run()
    assert any(v.endswith("*1 dataset*") for v in values(at, "markdown"))
    assert any("1 run in all" in v for v in values(at, "markdown"))
