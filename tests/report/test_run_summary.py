"""A finished run's stored summary (`store.run_summary`) is what a recount of its calls
gives, and is counted again when its calls change: a retry of failed calls, a re-judging
pass, a resume."""
from __future__ import annotations

import json

from sqlalchemy import select, update

from evalcore.report.run_figures import count_outcomes, load_outcomes, run_figures
from evalcore.runner.start import retry_failed
from evalcore.store import jobs, queries
from evalcore.store.tables import RunSummary
from tests.fakes.stored_runs import seed_dataset, seed_run

RUN_SUMMARY = RunSummary.__table__


def _stored(engine, run_id: int) -> dict | None:
    with engine.connect() as conn:
        row = conn.execute(select(RUN_SUMMARY.c.data).where(
            RUN_SUMMARY.c.run_id == run_id, RUN_SUMMARY.c.name == "outcomes")).first()
    return None if row is None else json.loads(row.data)


def _recount(engine, run_id: int) -> dict:
    return count_outcomes(engine, queries.get_run(engine, run_id))


def _finished_run(engine) -> int:
    ds = seed_dataset(engine, "summary", [f"What is {i} + {i}?" for i in range(4)])
    return seed_run(engine, ds, {0: [1, 1, 0], 1: [0, None, 1], 2: [None, None, 0],
                                 3: [1, 1, 1]}, rounds=3)


def _finish(engine, job_id: int) -> None:
    """The worker's part: claim the requeued job and end it done."""
    job = jobs.claim_job(engine, "worker-1", job_id=job_id)
    jobs.finish_job(engine, jobs.Fence(int(job.id), int(job.token)), "done")


def test_a_finished_run_reads_its_summary_which_equals_a_recount(engine) -> None:
    run_id = _finished_run(engine)
    assert _stored(engine, run_id) is None
    first = run_figures(engine, run_id)
    assert _stored(engine, run_id) == _recount(engine, run_id)
    assert run_figures(engine, run_id) == first  # read from the summary: same figures
    # the stored row is what is read: a changed row shows through (nothing recounted)
    data = _stored(engine, run_id)
    with engine.begin() as conn:
        data["items"] = [[item, 3, 0, 0] for item, *_ in data["items"]]
        conn.execute(update(RUN_SUMMARY).where(RUN_SUMMARY.c.run_id == run_id)
                     .values(data=json.dumps(data)))
    assert load_outcomes(engine, run_id).all_counts() == {
        item: (3, 3) for item, *_ in data["items"]}


def test_a_running_run_is_counted_not_stored(engine) -> None:
    ds = seed_dataset(engine, "running", ["What is 1 + 1?"])
    run_id = seed_run(engine, ds, {0: [1, 0]}, rounds=2, status="running")
    load_outcomes(engine, run_id)
    assert _stored(engine, run_id) is None


def test_the_summary_is_counted_again_after_a_retry_of_failed_calls(engine) -> None:
    run_id = _finished_run(engine)
    before = load_outcomes(engine, run_id).all_counts()
    run = queries.get_run(engine, run_id)
    moved, job_id = retry_failed(engine, run_id)
    assert moved == 3
    # the retried calls now succeed, as a worker would store them, and the run ends
    calls = [{"run_id": run_id, "item_id": item, "round": rnd, "stage": "answer",
              "model": run.model, "prompt": "", "answer": "1", "correct": True,
              "score": 1.0, "latency_ms": 5.0, "prompt_tokens": 5, "completion_tokens": 3}
             for item, rnd in _failed_units(before, run_id, engine)]
    queries.record_calls(engine, calls, count_progress=True)
    _finish(engine, job_id)
    assert queries.get_run(engine, run_id).status == "done"
    after = load_outcomes(engine, run_id)
    assert after.all_counts() != before
    assert _stored(engine, run_id) == _recount(engine, run_id)
    assert sum(right for right, _ in after.all_counts().values()) == 6 + 3


def _failed_units(before: dict, run_id: int, engine) -> list[tuple[int, int]]:
    from evalcore.store.tables import Call
    CALL = Call.__table__

    with engine.connect() as conn:
        return [(item, rnd) for item, rnd in conn.execute(
            select(CALL.c.item_id, CALL.c.round).where(
                CALL.c.run_id == run_id, CALL.c.stage.like("answer#%")))]


def test_the_summary_is_counted_again_after_a_rejudging_pass(engine) -> None:
    run_id = _finished_run(engine)
    calls_before = run_figures(engine, run_id)["metrics"]["calls"]
    item = load_outcomes(engine, run_id).run.config["item_ids"][0]
    queries.record_calls(engine, [{"run_id": run_id, "item_id": item, "round": 1,
                                   "stage": "rejudge1:99", "model": "judge",
                                   "prompt": "", "answer": "yes", "correct": True,
                                   "prompt_tokens": 7, "completion_tokens": 1}])
    assert run_figures(engine, run_id)["metrics"]["calls"] == calls_before + 1
    assert _stored(engine, run_id) == _recount(engine, run_id)


def _without_rounds(report: dict) -> dict:
    results = {k: {f: v for f, v in q.items() if f != "rounds"}
               for k, q in report["stability_results"].items()}
    return {**report, "stability_results": results}


def test_stored_report_figures_equal_the_report_and_follow_a_rejudge(engine) -> None:
    from evalcore.report.stability import stability_report
    from evalcore.report.stability_summary import report_figures

    run_id = _finished_run(engine)
    stored = report_figures(engine, run_id)
    assert stored == _without_rounds(stability_report(engine, run_id))
    assert report_figures(engine, run_id) == stored  # the stored row, read back
    item = load_outcomes(engine, run_id).run.config["item_ids"][0]
    queries.record_calls(engine, [{"run_id": run_id, "item_id": item, "round": 1,
                                   "stage": "rejudge1:99", "model": "judge",
                                   "prompt": "", "answer": "yes", "correct": True,
                                   "prompt_tokens": 7, "completion_tokens": 1}])
    again = report_figures(engine, run_id)
    assert again == _without_rounds(stability_report(engine, run_id))
    assert again["timing"]["calls"] == stored["timing"]["calls"] + 1


def test_stored_run_figures_equal_computed_ones(engine) -> None:
    from evalcore.report.run_figures import _figures

    run_id = _finished_run(engine)
    first = run_figures(engine, run_id)
    with engine.connect() as conn:
        names = set(conn.execute(select(RUN_SUMMARY.c.name)
                                 .where(RUN_SUMMARY.c.run_id == run_id)).scalars())
    assert "figures:exclude" in names  # stored, and what is read back equals a recount
    assert run_figures(engine, run_id) == first == {
        "run": first["run"], **_figures(engine, load_outcomes(engine, run_id))}


def test_what_does_not_survive_json_is_not_stored(engine) -> None:
    from evalcore.store import run_summary

    run_id = _finished_run(engine)
    run = queries.get_run(engine, run_id)
    assert run_summary.summary(engine, run, "odd", lambda: {"pair": (1, 2)}) == {"pair": (1, 2)}
    assert run_summary.summary(engine, run, "odd", lambda: {"pair": (3, 4)}) == {"pair": (3, 4)}


def test_a_run_with_a_stored_summary_can_be_deleted(engine) -> None:
    run_id = _finished_run(engine)
    run_figures(engine, run_id)
    assert _stored(engine, run_id) is not None
    queries.delete_run(engine, run_id)
    assert _stored(engine, run_id) is None
