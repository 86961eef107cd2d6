"""A question's rounds once settled (`report.repeats.RepeatRounds`): its answer groups are
kept and its replies let go, so a 10,000-question run holds groups, not rounds."""
from __future__ import annotations

import pytest

from evalcore.metrics.repeats import group_answers
from evalcore.report.repeats import RepeatRounds


def _row(rnd: int, answer: str | None, correct: bool | None) -> dict:
    return {"item_id": 7, "item_idx": 0, "question": "What is 2 + 2?", "reference": "4",
            "task_type": "math", "round": rnd, "answer": answer, "extracted": None,
            "correct": correct, "errored": answer is None}


def test_a_settled_question_keeps_its_groups_and_lets_its_rounds_go() -> None:
    rows = [_row(1, "It is 4.", True), _row(2, "4", True), _row(3, "5", False),
            _row(4, None, None)]
    rounds = RepeatRounds.empty(rows[0], 4)
    for row in rows:
        rounds.add(row)
    rounds.settle()
    assert [(g.answer, g.count, g.correct, g.wrong) for g in rounds.groups or []] == [
        ("4", 2, 2, 0), ("5", 1, 0, 1)]
    assert rounds.replies is rounds.extracted is rounds.verdicts is rounds.question is None
    assert all(g.forms is None for g in rounds.groups or [])  # extracted: no reply forms
    with pytest.raises(ValueError, match="item 7"):
        rounds.add(_row(4, "4", True))


def test_open_replies_keep_their_forms_for_the_label() -> None:
    groups = group_answers(["Paris.", "paris", "Paris."], [True, True, True])
    assert groups[0].label == "Paris." and sum((groups[0].forms or {}).values()) == 3
