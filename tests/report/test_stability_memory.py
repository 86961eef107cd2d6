"""The end-of-run stability report streams a run's rounds: each question's replies are let
go once its figures are computed, so the report's memory grows with its questions'
figures, not with every reply of the run."""
from __future__ import annotations

import tracemalloc

from tests.fakes.stored_runs import seed_dataset, seed_run

ROUNDS, REPLY = 100, 600


def _peak(engine, ds: int, questions: int) -> int:
    """Peak traced bytes of the report of a run of `questions` x ROUNDS long replies."""
    from evalcore.report.stability import stability_report

    replies = {i: "so " * (REPLY // 3) + f"the answer is {2 * i}." for i in range(questions)}
    run = seed_run(engine, ds, {i: [1] * ROUNDS for i in range(questions)}, ROUNDS,
                   answers=replies)
    first = stability_report(engine, run, with_rounds=False)  # imports, stored counts
    tracemalloc.start()
    try:
        again = stability_report(engine, run, with_rounds=False)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert again == first
    assert [g["count"] for g in first["stability_results"]["0"]["answer_groups"]] == [ROUNDS]
    return peak


def test_the_report_does_not_keep_every_reply_of_the_run(engine) -> None:
    ds = seed_dataset(engine, "long", [f"What is {i} + {i}?" for i in range(30)],
                      [str(2 * i) for i in range(30)])
    small, big = _peak(engine, ds, 10), _peak(engine, ds, 30)
    more_replies = 20 * ROUNDS * REPLY  # 1.2 MB: what keeping each reply would add
    assert big - small < more_replies / 3, (small, big)
