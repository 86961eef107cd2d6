"""Exact match after normalising case, spaces, punctuation and full-width forms."""
from __future__ import annotations

import pytest

from evalcore.dataset.records import Question
from evalcore.scorers.rules import is_invalid
from evalcore.scorers.rules_labels import exact_match, normalize_text


def q(reference: str | None, language: str = "en") -> Question:
    return Question(idx=0, question="?", reference=reference, task_type="open", language=language)


@pytest.mark.parametrize("reply, reference, expected", [
    ("Paris", "paris", True),
    ("  Paris. ", "Paris", True),
    ("PARIS!!!", "paris", True),
    ("New   York", "new york", True),
    ("Ｐａｒｉｓ", "Paris", True),                       # full-width letters
    ("北京。", "北京", True),                             # Chinese full stop
    ("“北京”", "北京", True),                             # Chinese quotes
    ("巴黎，法国", "巴黎 法国", True),                     # full-width comma -> space
    ("The capital is Paris.", "Paris", False),            # exact, not contains
    ("北京市", "北京", False),
    ("New-York", "newyork", False),                       # punctuation becomes a space
    ("Pari", "Paris", False),
])
def test_exact_match(reply: str, reference: str, expected: bool) -> None:
    score = exact_match(reply, q(reference))
    assert score.correct is expected, score.reason
    assert score.value == float(expected)


def test_normalize_text() -> None:
    assert normalize_text("  Ｈｅｌｌｏ,\tWORLD！ ") == "hello world"


def test_empty_reply_invalid_and_missing_reference_unjudged() -> None:
    assert is_invalid(exact_match("  ...  ", q("Paris")))
    assert exact_match("Paris", q(None)).correct is None
    assert exact_match("Paris", q("   ")).correct is None
