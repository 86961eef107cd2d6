"""The end of a run is one write: the runner decides the outcome and the job layer stores
it on the run's job (`finish_job`, fenced). A process that dies just before that write
leaves the run and its job saying the same thing (still running, taken over later),
never a run that says 'done' beside a job still running."""
from __future__ import annotations

import pytest

from evalcore.runner.plan import RunSpec
from evalcore.runner.start import store_run, run_in_foreground
from evalcore.store import jobs, queries
from tests.fakes.faults import Crash
from tests.runner.conftest import add_model

pytestmark = pytest.mark.integration


def test_a_crash_before_the_end_is_stored_leaves_run_and_job_agreeing(
        engine, settings, dataset, server, monkeypatch):
    add_model(settings, server)
    run_id = store_run(engine, RunSpec(dataset=dataset, model="fake", rounds=2),
                       settings.models_path)

    def die(*args, **kwargs):
        raise Crash("the process dies before the run's end is stored")

    monkeypatch.setattr(jobs, "finish_job", die)
    with pytest.raises(Crash):
        run_in_foreground(engine, run_id)
    monkeypatch.undo()
    job = jobs.run_job(engine, run_id)
    run = queries.get_run(engine, run_id)
    assert (run.status, job.status) == ("running", "running")
    assert (run.error, run.finished_at) == (None, None)
    sent = server.stats.requests
    assert run_in_foreground(engine, run_id, force=True) == "done"  # taken over, ends once
    assert server.stats.requests == sent  # every answer was stored before the crash
    run = queries.get_run(engine, run_id)
    assert (run.status, run.done, jobs.run_job(engine, run_id).status) == ("done", 12, "done")


def test_a_run_whose_every_answer_failed_ends_failed_on_its_job_with_the_first_error(
        engine, settings, dataset, server):
    server.reconfigure(script=["500"] * 50)
    add_model(settings, server, max_attempts=1)
    run_id = store_run(engine, RunSpec(dataset=dataset, model="fake", rounds=1),
                       settings.models_path)
    assert run_in_foreground(engine, run_id) == "failed"
    job = jobs.run_job(engine, run_id)
    run = queries.get_run(engine, run_id)
    assert job.status == run.status == "failed"
    assert job.error == run.error and run.error.startswith("all 6 answer calls failed")
    assert run.finished_at is not None
