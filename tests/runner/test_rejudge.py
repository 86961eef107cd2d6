"""Re-judging a sample: stored per pass, resumable, and the figures match the verdicts."""
from __future__ import annotations

import itertools

import pytest

from evalcore.runner.plan import RunSpec
from evalcore.runner.rejudge import create_rejudge_job, judge_reliability_of_run
from evalcore.runner.start import create_run, run_in_foreground, run_job_here
from evalcore.store.jobs import get_job
from evalcore.store import queries
from tests.runner.conftest import add_model

pytestmark = pytest.mark.integration


def rejudge(engine, settings, run_id, judge, **kw):
    job_id = create_rejudge_job(engine, run_id, judge, models_path=settings.models_path, **kw)
    assert run_job_here(engine, job_id) == "done"
    return get_job(engine, job_id).result["reliability"]


def test_flaky_judge_is_measured_and_stored_once_per_pass(engine, settings, dataset, server):
    run_id = None
    add_model(settings, server)
    add_model(settings, server, name="judge", concurrency=1)
    run_id = create_run(engine, RunSpec(dataset=dataset, model="fake", rounds=2),
                        settings.models_path)
    assert run_in_foreground(engine, run_id) == "done"

    verdicts = itertools.cycle(['{"score": 1, "reason": "a"}', '{"score": 0, "reason": "b"}'])
    server.reconfigure(responder=lambda prompt, schema: next(verdicts))
    figures = rejudge(engine, settings, run_id, "judge", sample=4, passes=2, seed=1)

    stored = [c for c in queries.run_calls(engine, run_id) if c.stage.startswith("rejudge")]
    assert len(stored) == 8 and {c.stage for c in stored} == {"rejudge1", "rejudge2"}
    by_answer: dict = {}
    for c in stored:
        by_answer.setdefault((c.item_id, c.round), []).append(c.correct)
    flips = sum(len(set(v)) > 1 for v in by_answer.values())
    assert figures["answers"] == 4 and figures["passes"] == 2
    assert figures["flips"] == flips and figures["flip_rate"] == flips / 4

    server.reset_stats()
    again = rejudge(engine, settings, run_id, "judge", sample=4, passes=2, seed=1)
    assert server.stats.requests == 0  # every pass already stored
    assert again == figures == judge_reliability_of_run(engine, run_id)
