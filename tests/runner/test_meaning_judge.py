"""Grouping open answers by a judge model's "same meaning?": few calls, stored, resumable."""
from __future__ import annotations

import json
import re

import pytest

from evalcore.runner.meaning_judge import cost_line, create_meaning_job, meaning_cost
from evalcore.runner.start import run_job_here
from evalcore.store import queries
from evalcore.store.jobs import get_job
from tests.runner.conftest import add_model

pytestmark = pytest.mark.integration

PLANTED = {
    # one meaning in three phrasings, 6 rounds: 3 text groups, all "Paris"
    "What is the capital of France?": ["Paris is the capital of France.", "It's Paris.",
                                       "Paris is the capital of France.",
                                       "The capital of France is Paris.", "It's Paris.",
                                       "Paris is the capital of France."],
    # three different answers: 3 text groups, none the same
    "Who wrote Hamlet?": ["Shakespeare wrote it.", "Marlowe wrote it.",
                          "Shakespeare wrote it.", "Bacon wrote it.", "Shakespeare wrote it.",
                          "Marlowe wrote it."],
}


def same_if_same_name(prompt: str, schema) -> str:  # noqa: ANN001
    """The planted judge: yes when both answers name the same one of the names."""
    a = prompt.split("ANSWER 1:")[1].split("ANSWER 2:")[0]
    b = prompt.split("ANSWER 2:")[1]
    names = ("Paris", "Shakespeare", "Marlowe", "Bacon")
    return "**Yes.** They agree." if [n in a for n in names] == [n in b for n in names] \
        else "No - they name different people."


@pytest.fixture()
def stored_run(engine):
    from evalcore.dataset import import_dataset, load_items

    body = "".join(json.dumps({"question": q, "answer": ""}) + "\n" for q in PLANTED)
    ds = import_dataset(engine, body.encode(), filename="open.jsonl", name="open",
                        mapping={"question": "question", "task_type": "open", "language": "en"})
    items = load_items(engine, ds.id)
    run = queries.create_run(engine, kind="stability", dataset_id=ds.id, model="m",
                             judge="rules", rounds=6, status="done", total=12, done=12,
                             config={"item_ids": [i.id for i in items]})
    queries.record_calls(engine, [
        {"run_id": run.id, "item_id": item.id, "round": r + 1, "stage": "answer", "model": "m",
         "prompt": "", "answer": text, "correct": None, "score": None, "reason": "",
         "error": None}
        for item in items for r, text in enumerate(PLANTED[item.question])])
    return run.id


def test_judge_groups_by_meaning_with_the_fewest_calls_and_never_asks_twice(
        engine, settings, server, stored_run):
    from evalcore.report.stability import stability_report

    add_model(settings, server, name="judge", concurrency=2)
    server.reconfigure(responder=same_if_same_name)
    cost = meaning_cost(engine, stored_run, "judge")
    assert cost == {"questions": 2, "distinct_answers": 6, "cached": 0,
                    "min_calls": 4, "max_calls": 6}
    assert "4 to 6 judge calls" in cost_line(cost, "judge")

    job_id = create_meaning_job(engine, stored_run, "judge", models_path=settings.models_path)
    assert run_job_here(engine, job_id) == "done"
    # France: 2 calls (both phrasings join the biggest group); Hamlet: 1 + 2 = 3 calls
    assert server.stats.requests == 5
    stored = [c for c in queries.run_calls(engine, stored_run) if c.stage.startswith("meaning:")]
    assert len(stored) == 5 and sum(bool(c.correct) for c in stored) == 2
    assert get_job(engine, job_id).result == {"asked": 5, "failed": 0, "questions": 2}

    report = stability_report(engine, stored_run, meaning="judge:judge")
    france, hamlet = report["stability_results"]["0"], report["stability_results"]["1"]
    assert [(g["answer"], g["count"]) for g in france["answer_groups"]] == [
        ("paris is the capital of france", 6)]
    assert france["semantic_entropy"] == 0.0
    assert [g["count"] for g in hamlet["answer_groups"]] == [3, 2, 1]
    assert report["summary"]["meaning_judge"] == {
        "judge": "judge", "verdicts_used": 5, "unreadable_or_failed": 0, "pairs_not_judged": 0}
    # the answer rows are untouched by the verdicts stored beside them
    assert report["distribution"]["total_questions"] == 2
    assert meaning_cost(engine, stored_run, "judge")["min_calls"] == 0

    server.reset_stats()  # a second pass (another page click, a takeover): nothing resent
    again = create_meaning_job(engine, stored_run, "judge", models_path=settings.models_path)
    assert run_job_here(engine, again) == "done"
    assert server.stats.requests == 0


def test_an_unreadable_judge_keeps_answers_apart_and_is_counted(engine, settings, server,
                                                                 stored_run):
    from evalcore.report.stability import stability_report

    add_model(settings, server, name="mute", concurrency=2)
    server.reconfigure(responder=lambda prompt, schema: "I am not sure how to compare these.")
    job_id = create_meaning_job(engine, stored_run, "mute", models_path=settings.models_path)
    assert run_job_here(engine, job_id) == "done"
    assert get_job(engine, job_id).result["failed"] == 6  # every pair asked once, none merged
    report = stability_report(engine, stored_run, meaning="judge:mute")
    assert [g["count"] for g in report["stability_results"]["0"]["answer_groups"]] == [3, 2, 1]
    assert report["summary"]["meaning_judge"]["unreadable_or_failed"] == 6
    # before any verdict of another judge: the pairs are counted as not judged
    other = stability_report(engine, stored_run, meaning="judge:other")
    assert other["summary"]["meaning_judge"]["pairs_not_judged"] == 6
    assert re.search(r"judged by other", other["summary"]["answer_grouping"])


def test_the_jobs_progress_total_does_not_jump_between_waves(engine, settings, server,
                                                               stored_run, monkeypatch):
    """Asked in waves, the total was each wave's size: 0/18 -> 1/6 -> 17/17."""
    from evalcore.store import queries as store_queries

    add_model(settings, server, name="judge", concurrency=2)
    server.reconfigure(responder=same_if_same_name)
    seen: list[tuple[int, int]] = []
    record = store_queries.record_calls_fenced

    def spy(engine, rows, **kw):  # noqa: ANN001, ANN003, ANN202
        seen.append((kw["done"], kw["total"]))
        return record(engine, rows, **kw)

    monkeypatch.setattr(store_queries, "record_calls_fenced", spy)
    job_id = create_meaning_job(engine, stored_run, "judge", models_path=settings.models_path)
    assert get_job(engine, job_id).total == 6  # the most the merge can need
    assert run_job_here(engine, job_id) == "done"
    assert len(seen) >= 2 and {total for _, total in seen} == {6}, seen
    assert [done for done, _ in seen] == sorted(done for done, _ in seen)
    job = get_job(engine, job_id)
    assert (job.done, job.total) == (5, 5)  # fewer were needed: done of done at the end
