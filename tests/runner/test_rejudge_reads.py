"""A run's re-judging passes are read at its end (the stability report): without a pass,
not one of the run's calls is held to compare against."""
from __future__ import annotations

from tests.fakes.stored_runs import seed_dataset, seed_run


def test_a_run_without_a_pass_reads_none_of_its_answers(engine, monkeypatch) -> None:
    from evalcore.runner import rejudge
    from evalcore.store import queries

    ds = seed_dataset(engine, "plain", ["1 + 1?", "2 + 2?"], ["2", "4"])
    run = seed_run(engine, ds, {0: [1, 0, 1], 1: [1, 1, None]}, 3)
    stages = []
    real = queries.iter_calls

    def counting(conn, run_id, *args, **kwargs):
        for row in real(conn, run_id, *args, **kwargs):
            stages.append(row.stage)
            yield row

    monkeypatch.setattr(queries, "iter_calls", counting)
    assert rejudge.rejudge_passes(engine, run) == []
    assert stages == []  # no answer call read: there is nothing to compare it with
