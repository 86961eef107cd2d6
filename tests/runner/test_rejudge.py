"""Re-judging a sample: stored per pass, resumable, and the figures match the verdicts."""
from __future__ import annotations

import itertools

import pytest

from evalcore.runner.plan import RunSpec
from evalcore.runner.rejudge import create_rejudge_job, rejudge_passes
from evalcore.runner.start import store_run, run_in_foreground, run_job_here
from evalcore.store.jobs import get_job
from evalcore.store import queries
from tests.runner.conftest import add_model

pytestmark = pytest.mark.integration


def rejudge(engine, settings, run_id, judge, **kw):
    job_id = create_rejudge_job(engine, run_id, judge, models_path=settings.models_path, **kw)
    assert run_job_here(engine, job_id) == "done"
    return get_job(engine, job_id).result["reliability"], job_id


def test_flaky_judge_is_measured_and_stored_once_per_pass(engine, settings, dataset, server):
    run_id = None
    add_model(settings, server)
    add_model(settings, server, name="judge", concurrency=1)
    run_id = store_run(engine, RunSpec(dataset=dataset, model="fake", rounds=2),
                       settings.models_path)
    assert run_in_foreground(engine, run_id) == "done"

    verdicts = itertools.cycle(['{"score": 1, "reason": "a"}', '{"score": 0, "reason": "b"}'])
    server.reconfigure(responder=lambda prompt, schema: next(verdicts))
    figures, job_id = rejudge(engine, settings, run_id, "judge", sample=4, passes=2, seed=1)

    stored = [c for c in queries.run_calls(engine, run_id) if c.stage.startswith("rejudge")]
    assert len(stored) == 8
    assert {c.stage for c in stored} == {f"rejudge1:{job_id}", f"rejudge2:{job_id}"}
    by_answer: dict = {}
    for c in stored:
        by_answer.setdefault((c.item_id, c.round), []).append(c.correct)
    flips = sum(len(set(v)) > 1 for v in by_answer.values())
    assert figures["answers"] == 4 and figures["passes"] == 2
    assert figures["flips"] == flips and figures["flip_rate"] == flips / 4

    assert figures["failed"] == 0 and figures["judge"] == "judge"
    assert figures["degenerate"] == []  # two reasons, both verdicts: it reads the answers
    latest = dict(rejudge_passes(engine, run_id)[-1])
    latest.pop("detail", None)
    assert figures == latest

    server.reset_stats()  # the same pass again (a requeue, a takeover): nothing is resent
    from evalcore.store.jobs import requeue_job

    requeue_job(engine, job_id)
    assert run_job_here(engine, job_id) == "done"
    assert server.stats.requests == 0
    assert get_job(engine, job_id).result["reliability"] == figures


def test_a_judge_that_cannot_judge_measures_nothing_and_says_so(engine, settings, dataset,
                                                                 server):
    """Every judgement unreadable: no flip rate, no kappa, the failures counted; a second
    judge's pass is kept apart, with its agreement with the run's own verdicts."""
    from evalcore.runner.rejudge import rejudge_passes

    add_model(settings, server)
    add_model(settings, server, name="mute", concurrency=2)
    add_model(settings, server, name="judge", concurrency=2)
    run_id = store_run(engine, RunSpec(dataset=dataset, model="fake", rounds=1),
                       settings.models_path)
    assert run_in_foreground(engine, run_id) == "done"  # items 1, 3, 5 right (conftest)
    server.reconfigure(responder=lambda prompt, schema: "I cannot grade this.")
    mute, _ = rejudge(engine, settings, run_id, "mute", sample=6, passes=2)
    assert (mute["failed"], mute["failed_share"], mute["measured_answers"]) == (12, 1.0, 0)
    assert mute["flip_rate"] is None and mute["cohen_kappa"] is None
    assert mute["agreement_with_run"] is None

    server.reconfigure(responder=lambda prompt, schema: '{"score": 1, "reason": "ok"}')
    judged, _ = rejudge(engine, settings, run_id, "judge", sample=6, passes=2)
    assert judged["judge"] == "judge" and judged["failed"] == 0
    assert judged["flip_rate"] == 0.0 and judged["agreement_with_run"] == 0.5  # 3 of 6 right
    # "ok" and 1 for every answer: flagged, and the n/a kappa says why
    assert judged["degenerate"] == ["one reason for all 12 judgements: 'ok'",
                                    "one verdict for all 12 judgements: right"]
    assert judged["cohen_kappa"] is None and "every judgement in passes 1 and 2 is right" in \
        judged["kappa_note"]
    from evalcore.runner.rejudge import reliability_line

    line = reliability_line(judged)
    assert "DEGENERATE JUDGE" in line and "Cohen's kappa n/a (every judgement" in line
    passes = rejudge_passes(engine, run_id)
    assert [p["judge"] for p in passes] == ["mute", "judge"]
    detail = passes[1]["detail"]
    assert len(detail) == 6 and all(d["verdicts"] == [True, True] for d in detail)
    assert sorted(d["run_verdict"] for d in detail) == [False] * 3 + [True] * 3
