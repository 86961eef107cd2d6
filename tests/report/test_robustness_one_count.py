"""A robustness run's verdicts are counted once: its report reads the run's result
(`run_figures.load_outcomes`, a finished run's stored counts), the counts its headline
figures (compare, leaderboard, gate) come from, instead of counting its calls again."""
from __future__ import annotations

import json

from sqlalchemy import select, update

from evalcore.store.tables import RunSummary
from tests.fakes.stored_runs import seed_robustness_run

RUN_SUMMARY = RunSummary.__table__
QUESTIONS = [f"What is {i} + 2?" for i in range(6)]


def _run(engine) -> int:  # type: ignore[no-untyped-def]
    run_id, _ = seed_robustness_run(engine, QUESTIONS, {i: [1, 1, i % 2] for i in range(6)},
                                    {i: [i % 3 > 0, 0, 1] for i in range(6)}, 3)
    return run_id


def test_the_report_and_the_headline_figures_agree(engine) -> None:
    from evalcore.report.robustness import robustness_report
    from evalcore.report.run_figures import run_figures

    run_id = _run(engine)
    report = robustness_report(engine, run_id)
    metrics = run_figures(engine, run_id)["metrics"]
    level = report["levels"]["char"]
    assert level["pdr"] == metrics["pdr_char"]
    assert level["accuracy_clean"] == metrics["accuracy_clean_char"] == metrics["accuracy"]
    assert level["accuracy_attacked"] == metrics["accuracy_attacked_char"]
    assert level["flips"]["counts"]["right_to_wrong"] == metrics["flips_right_to_wrong"]


def test_the_report_reads_the_stored_counts_of_a_finished_run(engine) -> None:
    """What is stored for the finished run is what the report shows: a changed row shows
    through (every round right), so nothing was counted from the calls again."""
    from evalcore.report.robustness import robustness_report
    from evalcore.report.run_figures import load_outcomes

    run_id = _run(engine)
    load_outcomes(engine, run_id)  # counted once and stored
    where = (RUN_SUMMARY.c.run_id == run_id) & (RUN_SUMMARY.c.name == "outcomes")
    with engine.begin() as conn:
        data = json.loads(conn.execute(select(RUN_SUMMARY.c.data).where(where)).scalar_one())
        data["items"] = [[item, 3, 0, 0] for item, *_ in data["items"]]
        conn.execute(update(RUN_SUMMARY).where(where).values(data=json.dumps(data)))
    report = robustness_report(engine, run_id)
    assert report["accuracy_clean_all"] == 1.0
    assert report["levels"]["char"]["accuracy_attacked"] == 1.0
    assert report["levels"]["char"]["pdr"] == 0.0
