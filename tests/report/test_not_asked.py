"""A cancelled run's rounds that were never asked are "not asked (cancelled)", not model
or judge errors (issue 21): the report JSON, the CLI summary and the Stability page
count them apart from the rounds whose call failed (the page: tests/pages/
test_stability_not_asked.py)."""
from __future__ import annotations

from evalcore.report.stability import not_asked_line, stability_report
from tests.fakes.stored_runs import seed_dataset, seed_run


def _cancelled(engine, verdicts, status: str = "cancelled") -> int:  # type: ignore[no-untyped-def]
    ds = seed_dataset(engine, "na", [f"q{i}?" for i in range(4)])
    return seed_run(engine, ds, verdicts, 3, status=status)


def test_a_cancelled_runs_unasked_rounds_are_not_errors(engine) -> None:
    # item 0 asked 3 times, item 1 once, item 2 never: 2 + 3 rounds not asked, no error
    run_id = _cancelled(engine, {0: [1, 1, 0], 1: [1], 2: []})
    summary = stability_report(engine, run_id)["summary"]
    assert (summary["errored_rounds"], summary["questions_with_errors"]) == (0, 0)
    assert (summary["not_asked_rounds"], summary["not_asked_questions"]) == (5, 2)
    assert summary["not_asked_why"] == "cancelled"
    assert not_asked_line(summary) == (
        "5 rounds in 2 questions not asked (cancelled); like rounds without a verdict they "
        "are left out: each question's success rate is over its answered rounds")


def test_errors_and_unasked_rounds_are_counted_apart(engine) -> None:
    run_id = _cancelled(engine, {0: [1, None, 1], 1: [None]})
    summary = stability_report(engine, run_id, failure_policy="as_wrong")["summary"]
    assert (summary["errored_rounds"], summary["questions_with_errors"]) == (2, 2)
    assert (summary["not_asked_rounds"], summary["not_asked_questions"]) == (2, 1)
    assert "count as wrong answers" in not_asked_line(summary)


def test_a_finished_run_has_nothing_unasked(engine) -> None:
    run_id = _cancelled(engine, {0: [1, 1, 1], 1: [0, 0, None]}, status="done")
    summary = stability_report(engine, run_id)["summary"]
    assert summary["not_asked_rounds"] == 0 and not_asked_line(summary) is None
    assert summary["errored_rounds"] == 1


def test_the_cli_summary_says_not_asked_apart_from_errors(engine, capsys) -> None:
    from evalcore.cli.stability import _print_summary

    run_id = _cancelled(engine, {0: [1, 1, 0], 1: [1], 2: []})
    _print_summary(stability_report(engine, run_id), "cancelled")
    printed = capsys.readouterr().out
    assert "rounds without a verdict (model or judge error): 0 in 0 questions" in printed
    assert "5 rounds in 2 questions not asked (cancelled)" in printed
