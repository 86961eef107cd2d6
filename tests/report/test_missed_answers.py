"""A run whose wrong verdicts are mostly replies containing their reference says so."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from evalcore.cli import main
from evalcore.report.missed_answers import contains_reference, missed_answers
from tests.fakes.stored_runs import seed_dataset, seed_run

QUESTIONS = ["What is 45 times 2?", "How many days has a week?", "Half of 9?", "Ten minus 4?"]
ANSWERS = ["90", "7", "4.5", "6"]


def test_whole_numbers_and_words_only() -> None:
    assert contains_reference("The answer is 90.", "90")
    assert contains_reference("答案是90。", "90")
    assert contains_reference("It is PARIS", "Paris")
    assert contains_reference("一周有七天", "七天")
    assert not contains_reference("The answer is 905.", "90")
    assert not contains_reference("It is 4.5 or 0.90", "90")
    assert not contains_reference("It is 90.5", "90")
    assert not contains_reference("anything", "")


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=200), st.text(max_size=20))
def test_any_reply_and_reference_give_a_verdict(reply: str, reference: str) -> None:
    assert contains_reference(reply, reference) in (True, False)


def _rows(pairs: list[tuple[str, str, bool]], task: str = "open") -> list[dict]:
    return [{"answer": a, "reference": r, "correct": c, "task_type": task} for a, r, c in pairs]


def test_the_warning_needs_most_wrong_replies_to_contain_the_reference() -> None:
    most = _rows([("The answer is 90.", "90", False), ("7 days", "7", False),
                  ("no idea", "4.5", False), ("It is 4.5", "4.5", True)])
    found = missed_answers(most)
    assert (found["judged_wrong"], found["containing_reference"]) == (3, 2)
    assert found["warning"].startswith("2 of 3 replies judged wrong contain their reference")
    half = _rows([("90", "90", False), ("no", "7", False), ("no", "6", False),
                  ("7", "7", False)])
    assert missed_answers(half)["warning"] is None
    choice = _rows([("Option 3", "3", False)] * 5, task="choice")  # an index, not a text
    assert missed_answers(choice)["judged_wrong"] == 0


def test_a_stability_run_scored_zero_on_right_replies_warns_on_page_and_cli(engine, capsys
                                                                            ) -> None:
    from evalcore.report.stability import stability_report

    ds = seed_dataset(engine, "plain", QUESTIONS, ANSWERS)
    replies = {i: f"The answer is {a}." for i, a in enumerate(ANSWERS)}
    run = seed_run(engine, ds, {i: [0, 0] for i in range(4)}, 2, answers=replies)
    report = stability_report(engine, run)
    assert report["missed_answers"] == {"judged_wrong": 8, "containing_reference": 8}
    assert any(w.startswith("8 of 8 replies judged wrong contain their reference answer")
               for w in report["warnings"])
    assert main(["runs", "show", str(run)]) == 0
    assert "warning: 8 of 8 replies judged wrong contain their reference" in capsys.readouterr().out


def test_right_verdicts_raise_no_warning(engine) -> None:
    from evalcore.report.stability import stability_report

    ds = seed_dataset(engine, "plain-ok", QUESTIONS, ANSWERS)
    replies = {i: f"The answer is {a}." for i, a in enumerate(ANSWERS)}
    run = seed_run(engine, ds, {i: [1, 1] for i in range(4)}, 2, answers=replies)
    assert stability_report(engine, run)["warnings"] == []
