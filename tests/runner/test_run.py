"""The runner against the fault-injecting server: every call stored once, faults never fatal."""
from __future__ import annotations

import asyncio
import threading

import pytest

from evalcore.runner.plan import RunSpec
from evalcore.runner.start import cancel_run, store_run, run_in_foreground
from evalcore.store import queries, run_items
from tests.runner.conftest import QUESTIONS, add_model, count_units

pytestmark = pytest.mark.integration


def verdict_matrix(engine, run_id):
    from evalcore.report.stability import iter_verdicts

    out: dict[int, list] = {}
    for row in iter_verdicts(engine, run_id):
        out.setdefault(row["item_idx"], []).append(row["correct"])
    return out


@pytest.mark.parametrize("schedule", ["question", "round"])
def test_run_stores_every_call_and_scores_it(engine, settings, dataset, server, schedule):
    server.reconfigure(script=["500", "429", "reset", "malformed", "500"])
    add_model(settings, server)
    run_id = store_run(engine, RunSpec(dataset=dataset, model="fake", rounds=3,
                                        schedule=schedule), settings.models_path)
    assert run_in_foreground(engine, run_id) == "done"

    run = queries.get_run(engine, run_id)
    assert (run.status, run.done, run.total, run.errors) == ("done", 18, 18, 0)
    assert run.retries == 5  # one per scripted fault, each answered on its retry
    assert queries.count_calls(engine, run_id) == 18
    assert verdict_matrix(engine, run_id) == {i: [bool(i % 2)] * 3 for i in range(6)}
    sent = count_units(server.stats.prompts)  # scripted faults were sent again, nothing else
    assert sum(sent.values()) == 18 + 5 and all(sent[i] >= 3 for i in range(6))


def test_exhausted_call_is_stored_as_failed_and_the_run_goes_on(engine, settings, dataset, server):
    server.reconfigure(script=["500", "500"])
    add_model(settings, server, max_attempts=2, concurrency=1)
    run_id = store_run(engine, RunSpec(dataset=dataset, model="fake", rounds=1),
                       settings.models_path)
    assert run_in_foreground(engine, run_id) == "done"
    run = queries.get_run(engine, run_id)
    assert (run.done, run.errors) == (6, 1)
    failed = [c for c in queries.run_calls(engine, run_id) if c.error]
    assert len(failed) == 1 and "500" in failed[0].error and failed[0].attempts == 2
    assert failed[0].correct is False and failed[0].reason.startswith("model error")


def test_resume_never_sends_a_stored_call_again(engine, settings, dataset, server):
    add_model(settings, server)
    run_id = store_run(engine, RunSpec(dataset=dataset, model="fake", rounds=2),
                       settings.models_path)
    item_ids = run_items.run_item_ids(engine, run_id)
    stored = [{"run_id": run_id, "item_id": item_ids[i], "round": 1, "stage": "answer",
               "prompt": "p", "answer": "stored earlier", "score": 1.0, "correct": True,
               "reason": "kept"} for i in range(4)]
    queries.record_calls(engine, stored)
    queries.update_run(engine, run_id, status="cancelled", done=4)

    assert run_in_foreground(engine, run_id) == "done"
    assert server.stats.requests == 12 - 4
    calls = queries.run_calls(engine, run_id)
    assert len(calls) == 12
    assert sum(c.answer == "stored earlier" for c in calls) == 4
    assert queries.get_run(engine, run_id).done == 12


def test_cancel_stops_the_run_and_resume_finishes_it(engine, settings, dataset, server):
    server.reconfigure(latency=0.2)
    add_model(settings, server, concurrency=2)
    run_id = store_run(engine, RunSpec(dataset=dataset, model="fake", rounds=5),
                       settings.models_path)
    threading.Timer(0.5, cancel_run, args=(engine, run_id)).start()
    assert run_in_foreground(engine, run_id) == "cancelled"
    stored = queries.count_calls(engine, run_id)
    assert 0 < stored < 30
    assert queries.get_run(engine, run_id).done == stored

    server.reset_stats()
    assert run_in_foreground(engine, run_id) == "done"
    assert server.stats.requests == 30 - stored
    assert queries.count_calls(engine, run_id) == 30


def test_judge_model_verdicts_are_pipelined_and_judge_errors_counted(engine, settings, dataset,
                                                                     server):
    def responder(prompt: str, schema: dict | None) -> str:
        if "strict grader" in prompt:
            if "Tom has 3 apples" in prompt:
                return "no idea"  # unreadable verdict -> judge error
            return '{"score": 1, "reason": "fine"}' if "Let me think" in prompt else "{}"
        return "Let me think. The answer is 0."

    server.reconfigure(responder=responder)
    add_model(settings, server, name="answerer")
    add_model(settings, server, name="judge", concurrency=3)
    run_id = store_run(engine, RunSpec(dataset=dataset, model="answerer", rounds=2,
                                        judge="judge"), settings.models_path)
    assert run_in_foreground(engine, run_id) == "done"

    calls = queries.run_calls(engine, run_id)
    assert sum(c.stage == "answer" for c in calls) == 12
    assert sum(c.stage == "judge" for c in calls) == 12
    assert all(c.score is None for c in calls if c.stage == "answer")
    from evalcore.report.stability import stability_report

    report = stability_report(engine, run_id, failure_policy="as_wrong")  # the seed rule
    assert report["judge_model"] == "judge"
    assert report["timing"]["judge_errors"] == 2 and report["timing"]["errors"] == 0
    assert report["distribution"]["distribution_counts"] == {"0": 1, "1": 0, "2": 5}
    default = stability_report(engine, run_id)  # judge errors are no verdict, not wrong
    assert default["distribution"]["distribution_counts"] == {"0": 0, "1": 0, "2": 5}
    assert default["distribution"]["incomplete"] == default["summary"]["unanswered_questions"] == 1
    first = report["stability_results"]["0"]["rounds"][0]
    assert first["correct"] is False and first["reason"].startswith("judge error")


def test_embedded_worker_executes_queued_runs(engine, settings, dataset, server):
    import time

    from evalcore.runner.background import BackgroundRunner
    from evalcore.runner.start import store_run

    add_model(settings, server)
    runner = BackgroundRunner()
    try:
        worker = runner.ensure_worker(engine, poll_s=0.05)
        assert runner.ensure_worker(engine) is worker  # one per database and process
        run_id = store_run(engine, RunSpec(dataset=dataset, model="fake", rounds=2),
                           settings.models_path)
        deadline = time.monotonic() + 30
        while queries.get_run(engine, run_id).status != "done" and time.monotonic() < deadline:
            time.sleep(0.05)
        assert queries.get_run(engine, run_id).done == 12
        assert server.stats.requests == 12
    finally:
        runner.shutdown()


def test_unknown_model_or_dataset_is_refused_with_a_clear_message(engine, settings, dataset):
    from evalcore.errors import EvalcoreError

    with pytest.raises(EvalcoreError, match="nope"):
        store_run(engine, RunSpec(dataset=dataset, model="nope"), settings.models_path)
    with pytest.raises(EvalcoreError, match="missing"):
        store_run(engine, RunSpec(dataset="missing", model="local"), settings.models_path)
    assert len(QUESTIONS) == 6 and not asyncio.iscoroutinefunction(store_run)


def test_cancel_requested_while_queued_stops_the_run(engine, settings, dataset, server):
    server.reconfigure(latency=0.05)
    add_model(settings, server, concurrency=1)
    # 24 calls at 50 ms one at a time: 1.2 s, four or more flushes (FLUSH_INTERVAL_S), each
    # of which reads the cancel flag, so a cancel the resume left standing stops the run
    run_id = store_run(engine, RunSpec(dataset=dataset, model="fake", rounds=4),
                       settings.models_path)
    cancel_run(engine, run_id)  # before any worker picked the run up: cancelled at once
    assert queries.get_run(engine, run_id).status == "cancelled"
    assert queries.count_calls(engine, run_id) == 0 and server.stats.requests == 0
    assert run_in_foreground(engine, run_id) == "done"  # a resume clears the old cancel
    assert queries.count_calls(engine, run_id) == 24


def test_a_rules_judged_run_on_items_without_references_is_refused(engine, settings, tmp_path):
    from evalcore.dataset import import_dataset
    from evalcore.errors import RunError

    path = tmp_path / "open.csv"
    path.write_text("question\nWhy is the sky blue?\nWhat is love?\n", encoding="utf-8")
    import_dataset(engine, path, name="open", mapping={"question": "question",
                                                        "task_type": "open", "language": "en"})
    with pytest.raises(RunError, match="2 of 2 items have no reference answer"):
        store_run(engine, RunSpec(dataset="open", model="local"), settings.models_path)
    assert queries.list_runs(engine) == []


def test_sequential_schedule_sends_a_questions_rounds_one_after_another(engine, settings,
                                                                        tmp_path):
    """20 questions x 5 rounds at C=50 and 200 ms: never two calls of one question in
    flight, at most 20 in flight in all, so the run takes at least 5 x 200 ms."""
    import time

    from evalcore.dataset import import_dataset
    from tests.fakes.fault_server import FaultConfig, FaultServer

    path = tmp_path / "twenty.csv"
    path.write_text("question,answer\n" + "\n".join(f"What is {i} + {i}?,{2 * i}"
                                                  for i in range(20)) + "\n")
    import_dataset(engine, path, name="twenty")
    with FaultServer(FaultConfig(latency=0.2)) as server:
        add_model(settings, server, concurrency=50)
        run_id = store_run(engine, RunSpec(dataset="twenty", model="fake", rounds=5,
                                            schedule="sequential"), settings.models_path)
        started = time.monotonic()
        assert run_in_foreground(engine, run_id) == "done"
        wall = time.monotonic() - started
        stats = server.stats
    assert stats.requests == 100 and queries.count_calls(engine, run_id) == 100
    assert stats.max_same_prompt == 1
    assert 2 <= stats.max_in_flight <= 20
    assert wall >= 1.0


def test_a_run_stops_at_its_budget_and_resumes_with_a_higher_one(engine, settings, dataset,
                                                                 server):
    """Each call costs (prompt + completion tokens) x price: the run stops before passing
    its budget, says so, and a resume with a higher budget finishes it."""
    from evalcore.runner.start import set_budget

    add_model(settings, server, concurrency=1, price_in=1000.0, price_out=1000.0, max_tokens=16)
    run_id = store_run(engine, RunSpec(dataset=dataset, model="fake", rounds=2, budget=0.5),
                       settings.models_path)
    assert run_in_foreground(engine, run_id) == "cancelled"
    run = queries.get_run(engine, run_id)
    assert "budget 0.5 reached" in run.error
    stored = queries.count_calls(engine, run_id)
    calls = queries.run_calls(engine, run_id)
    spent = sum((c.prompt_tokens + c.completion_tokens) * 1000.0 for c in calls) / 1e6
    assert 0 < stored < 12 and spent <= 0.5
    set_budget(engine, run_id, None)
    assert run_in_foreground(engine, run_id) == "done"
    assert queries.count_calls(engine, run_id) == 12
