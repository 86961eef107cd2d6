"""Consistency over hostile replies: answer keys and the consistency summary never raise.

The one-click demo's small model answered with a 200-digit number and `answer_key`
raised decimal.InvalidOperation, which took the whole Stability page down.
"""
from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evalcore.metrics.consistency import (
    answer_consistency,
    answer_key,
    consistency_summary,
    normalize_answer,
)
from tests.properties.hostile import FAST, HUGE, HUGE_CASES, replies


@pytest.mark.parametrize("text", ["1" * 40, "9" * 200, "-" + "1" * 256, "1" * 200 + ".50",
                                  "1,000," * 60 + "000", "NaN", "inf", "-inf", "1e999"])
def test_answer_key_of_long_and_odd_numbers(text: str) -> None:
    key = answer_key(text)
    assert isinstance(key, str)


def test_answer_key_keeps_every_digit_of_a_long_number() -> None:
    big = "1" * 199 + "2"
    assert answer_key(big) == big
    assert answer_key(big + ".000") == big
    assert answer_key(big) != answer_key("1" * 200)
    assert answer_key("0" * 50 + big) == big
    assert answer_key("-0.0") == answer_key("0") == "0"


@FAST
@given(st.integers(min_value=-(10 ** 300), max_value=10 ** 300), st.integers(0, 6))
def test_answer_key_folds_spellings_of_one_integer(value: int, zeros: int) -> None:
    plain = str(value)
    assert answer_key(plain) == answer_key(plain + "." + "0" * zeros if zeros else plain)
    assert answer_key(f"{value:,}") == answer_key(plain)


@FAST
@given(replies)
def test_answer_key_returns_text(reply: str) -> None:
    assert isinstance(normalize_answer(reply), str)
    assert isinstance(answer_key(reply), str)


@FAST
@given(st.lists(st.one_of(st.none(), replies), min_size=1, max_size=8))
def test_answer_consistency_never_raises(answers: list) -> None:
    c = answer_consistency(answers)
    assert 0 <= c.distinct <= c.answered <= c.rounds == len(answers)
    assert 0.0 <= c.top_share <= 1.0


@FAST
@given(st.lists(st.lists(st.one_of(st.none(), replies), min_size=1, max_size=4),
                min_size=1, max_size=4))
def test_consistency_summary_never_raises(per_question: list) -> None:
    from evalcore.scorers.rules import extract_number

    def number(text: str) -> str | None:
        found = extract_number(text)
        return None if found is None else found.text

    for extractor in (None, number):
        out = consistency_summary(per_question, extractor)
        assert 0.0 <= out["mean_top_share"] <= 1.0


@pytest.mark.parametrize("case", HUGE_CASES)
def test_answer_key_of_a_megabyte_reply(case: str) -> None:
    assert isinstance(answer_key(HUGE[case]), str)
