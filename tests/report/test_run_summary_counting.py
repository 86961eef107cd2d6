"""Figures a finished run stored under an older counting rule (before a judge reply
without a verdict became "no verdict" everywhere) are computed again, never read."""
from __future__ import annotations

import json

from sqlalchemy import select, update

from evalcore.report.run_figures import count_outcomes, load_outcomes
from evalcore.store import queries
from evalcore.store import run_summary as summaries
from evalcore.store.tables import RunSummary
from tests.fakes.stored_runs import seed_dataset, seed_run

RUN_SUMMARY = RunSummary.__table__


def _finished_run(engine) -> int:  # type: ignore[no-untyped-def]
    ds = seed_dataset(engine, "summary", [f"What is {i} + {i}?" for i in range(4)])
    return seed_run(engine, ds, {0: [1, 1, 0], 1: [0, None, 1], 2: [None, None, 0],
                                 3: [1, 1, 1]}, rounds=3)


def _stored(engine, run_id: int) -> dict | None:  # type: ignore[no-untyped-def]
    with engine.connect() as conn:
        row = conn.execute(select(RUN_SUMMARY.c.data).where(
            RUN_SUMMARY.c.run_id == run_id, RUN_SUMMARY.c.name == "outcomes")).first()
    return None if row is None else json.loads(row.data)


def test_counts_stored_under_an_older_counting_rule_are_counted_again(engine) -> None:
    """Counts stored without the `counting` mark are not read: the run is counted
    again, and the new counts stored."""
    run_id = _finished_run(engine)
    load_outcomes(engine, run_id)
    data = _stored(engine, run_id)
    old = {k: v for k, v in data.items() if k != "counting"}
    old["items"] = [[item, 3, 0, 0] for item, *_ in data["items"]]
    with engine.begin() as conn:
        conn.execute(update(RUN_SUMMARY).where(RUN_SUMMARY.c.run_id == run_id,
                                               RUN_SUMMARY.c.name == "outcomes")
                     .values(data=json.dumps(old)))
    assert load_outcomes(engine, run_id).all_counts() != {
        item: (3, 3) for item, *_ in data["items"]}
    assert _stored(engine, run_id) == count_outcomes(engine, queries.get_run(engine, run_id))


def test_a_stability_report_stored_under_an_older_counting_rule_is_not_read(engine) -> None:
    """A report stored under its name without the counting rule is computed again."""
    from evalcore.report.stability import stability_report
    from evalcore.report.stability_summary import report_figures

    run_id = _finished_run(engine)
    run = queries.get_run(engine, run_id)
    old = stability_report(engine, run_id, with_rounds=False)
    old["summary"]["mean"] = 0.0123
    summaries.store(engine, run_id, "stability:exclude:False",
                    summaries.state_key(engine, run), old)
    assert report_figures(engine, run_id)["summary"]["mean"] != 0.0123
