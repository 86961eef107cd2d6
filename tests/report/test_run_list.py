"""The run list: filtered and paged in SQL, summary columns only."""
from __future__ import annotations

from sqlalchemy import event

from evalcore.report import runs
from tests.fakes.stored_runs import seed_dataset, seed_run


def test_filters_pages_and_counts_in_sql(engine):
    ds = seed_dataset(engine, "list", ["a?", "b?"])
    other = seed_dataset(engine, "other", ["c?"])
    ids = [seed_run(engine, ds, {0: [1]}, 1, model=f"m{i % 2}") for i in range(5)]
    fair = seed_run(engine, other, {0: [1]}, 1, kind="fairness", model="m0")
    frame, total = runs.run_list(engine)
    assert total == 6 and list(frame["id"]) == [fair, *reversed(ids)]
    assert list(frame["dataset"]) == ["other"] + ["list"] * 5
    frame, total = runs.run_list(engine, model=["m0"], kind=["stability"])
    assert total == 3 and list(frame["id"]) == [ids[4], ids[2], ids[0]]
    page2, total = runs.run_list(engine, limit=2, offset=2)
    assert total == 6 and list(page2["id"]) == [ids[3], ids[2]]
    frame, total = runs.run_list(engine, dataset=["other"])
    assert (total, list(frame["id"])) == (1, [fair])
    options = runs.run_filter_options(engine)
    assert options == {"kind": ["fairness", "stability"], "status": ["done"],
                       "model": ["m0", "m1"], "dataset": ["list", "other"]}


def test_the_list_never_reads_config_or_calls(engine):
    ds = seed_dataset(engine, "list", ["a?"])
    seed_run(engine, ds, {0: [1]}, 1)
    statements: list[str] = []

    def record(conn, cursor, statement, *args):  # noqa: ANN001, ANN002
        statements.append(statement.lower())

    target = engine
    event.listen(target, "before_cursor_execute", record)
    try:
        runs.run_list(engine)
        runs.run_filter_options(engine)
    finally:
        event.remove(target, "before_cursor_execute", record)
    assert statements and not any("run.config" in s or "from call" in s for s in statements)
