"""Accuracy: invalid replies counted explicitly, unjudged ones never in the denominator."""
from __future__ import annotations

import pytest

from evalcore.dataset.records import Question
from evalcore.metrics.accuracy import accuracy, summarize_accuracy
from evalcore.metrics.stability import MetricInputError
from evalcore.scorers.base import Score
from evalcore.scorers.rules import numeric

MATH = Question(idx=0, question="周长=多少米？", reference="800.0", task_type="math")
NO_REF = Question(idx=1, question="?", task_type="math")

# real scorer output: 3 right, 1 wrong, 2 invalid (no number), 1 unjudged (no reference)
REPLIES = [("答案是800米", MATH), ("The answer is 800.", MATH), ("８００", MATH),
           ("答案是880米", MATH), ("I don't know", MATH), ("无法计算", MATH), ("800", NO_REF)]


@pytest.fixture()
def scores() -> list[Score]:
    return [numeric(answer, q) for answer, q in REPLIES]


def test_invalid_counted_as_wrong_by_default(scores: list[Score]) -> None:
    summary = summarize_accuracy(scores)
    assert (summary.correct, summary.invalid, summary.unjudged, summary.total) == (3, 2, 1, 7)
    assert summary.counted == 6
    assert summary.accuracy == pytest.approx(3 / 6)
    assert accuracy(scores) == pytest.approx(3 / 6)


def test_invalid_excluded_on_request(scores: list[Score]) -> None:
    summary = summarize_accuracy(scores, invalid="exclude")
    assert summary.counted == 4 and summary.invalid == 2
    assert accuracy(scores, invalid="exclude") == pytest.approx(3 / 4)


def test_accuracy_equals_mean_of_judged_verdicts(scores: list[Score]) -> None:
    judged = [s.correct for s in scores if s.correct is not None]
    assert accuracy(scores) == pytest.approx(sum(judged) / len(judged))


def test_empty_input_says_why() -> None:
    summary = summarize_accuracy([])
    assert summary.accuracy is None and "no scores" in summary.why_none
    with pytest.raises(MetricInputError, match="no scores"):
        accuracy([])


def test_nothing_judged_says_why() -> None:
    unjudged = [Score(value=0.0, correct=None, reason="no reference number")] * 3
    with pytest.raises(MetricInputError, match="none of the 3 scores has a verdict"):
        accuracy(unjudged)


def test_all_invalid_excluded_says_why() -> None:
    invalid = [numeric("no idea", MATH), numeric("不知道", MATH)]
    assert accuracy(invalid) == 0.0
    with pytest.raises(MetricInputError, match="all 2 judged replies are invalid"):
        accuracy(invalid, invalid="exclude")


def test_unknown_policy_rejected() -> None:
    with pytest.raises(ValueError, match="invalid='skip'"):
        summarize_accuracy([], invalid="skip")  # type: ignore[arg-type]


def test_accepts_a_generator(scores: list[Score]) -> None:
    assert accuracy(s for s in scores) == pytest.approx(3 / 6)
