"""The rules scorers over hostile replies: every extractor returns (a value or None with
an `invalid:` / `ambiguous:` reason), every scorer returns a Score; none raises or hangs.

Functions covered: scorers.rules (find_numbers, extract_number, parse_reference_number,
extract_choice, extract_sentiment, extract_bits, parse_reference_bits, normalize_text and
the RULES scorers), scorers.extract (strip_checks, strip_parentheticals,
strip_option_listing), scorers.crows (read_pick, bias_pair).
"""
from __future__ import annotations

import math
import re
import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evalcore.dataset.records import Question
from evalcore.scorers import crows, extract, registry, rules, rules_choice, rules_labels
from evalcore.scorers.base import Score
from tests.properties.hostile import FAST, HUGE, choices_lists, replies

REFERENCES = st.one_of(st.none(), replies, st.sampled_from(
    ["12", "0.8", "3/4", "80%", "1", "0", "[1, 0, 1]", "positive", "负面", "2", "1" * 400]))


def _check_score(score: Score) -> None:
    assert isinstance(score, Score)
    assert not math.isnan(score.value)
    assert score.correct in (True, False, None)
    assert isinstance(score.reason, str)


@FAST
@given(replies)
def test_numbers_are_read_or_none(reply: str) -> None:
    for number in rules.find_numbers(rules.normalize(reply)):
        assert number.values
    found = rules.extract_number(reply)
    assert found is None or isinstance(found.text, str)
    ref = rules.parse_reference_number(reply)
    assert ref is None or isinstance(ref, float)


@FAST
@given(replies, choices_lists, replies)
def test_choice_is_an_option_or_a_reason(reply: str, choices: list[str], question: str) -> None:
    index, how = rules_choice.extract_choice(reply, choices, question)
    assert index is None or 0 <= index and (not choices or index < len(choices))
    assert index is not None or how.startswith((rules.INVALID, rules.AMBIGUOUS))


@FAST
@given(replies, st.integers(0, 12), choices_lists)
def test_bits_are_a_list_or_a_reason(reply: str, n: int, choices: list[str]) -> None:
    bits, how = rules_labels.extract_bits(reply, n, choices)
    assert bits is None and how.startswith(rules.INVALID) or set(bits) <= {0, 1}
    assert rules_labels.parse_reference_bits(reply) is None or True


@FAST
@given(replies)
def test_sentiment_and_exact_text(reply: str) -> None:
    label, how = rules_labels.extract_sentiment(reply)
    assert label in (None, "positive", "negative")
    assert isinstance(rules_labels.normalize_text(reply), str)


@FAST
@given(st.sampled_from(sorted(registry.RULES)), replies, REFERENCES, choices_lists)
def test_every_rules_scorer_returns_a_score(name: str, reply: str, reference: str | None,
                                            choices: list[str]) -> None:
    question = Question(idx=0, question="q", reference=reference, choices=choices)
    _check_score(registry.RULES[name](reply, question))
    _check_score(crows.bias_pair(reply, question))


@FAST
@given(replies, choices_lists)
def test_extract_helpers(reply: str, choices: list[str]) -> None:
    assert isinstance(extract.strip_checks(reply, re.compile(r"\d")), str)
    assert isinstance(extract.strip_parentheticals(reply), str)
    rest, listed = extract.strip_option_listing(reply, choices)
    assert isinstance(rest, str) and listed >= 0


@pytest.mark.parametrize("text", ["choice 99999999999: 1\nchoice 0: 0",
                                  "1. true\n" + "9" * 5000 + ". false",
                                  "[inf, 1]", "[1e999, 0]", "[-inf]", "[nan, 1]"])
def test_bits_of_huge_labels_and_infinities(text: str) -> None:
    bits, _ = rules_labels.extract_bits(text, 2)
    assert bits is None or len(bits) <= 2 + 100
    assert rules_labels.parse_reference_bits(text) is None or True


@pytest.mark.parametrize("text", ["choice " + "9" * 5000, "答案是" + "9" * 5000,
                                  "第" + "9" * 5000 + "个", "9" * 5000 + " 2/3",
                                  "1.5*10^" + "9" * 5000, "2 " + "9" * 5000 + "/" + "9" * 5000])
def test_numbers_and_labels_with_thousands_of_digits(text: str) -> None:
    rules.extract_number(text)
    rules_choice.extract_choice(text, ["a", "b"])
    _check_score(rules.numeric(text, Question(idx=0, question="q", reference="12")))


def test_nested_parentheses_are_stripped_in_linear_time() -> None:
    assert extract.strip_parentheticals("(" * 10 + "1" + ")" * 10 + " 2").split() == ["2"]
    text = "(" * 200_000 + "1" + ")" * 200_000 + " 2"
    started = time.perf_counter()
    assert extract.strip_parentheticals(text).endswith(" 2")
    assert time.perf_counter() - started < 5.0


@pytest.mark.parametrize(("case", "scorer"), [
    ("digits", rules_choice.choice), ("nested parens", rules.numeric),
    ("markers", rules.numeric), ("lines", rules_labels.multi_tf), ("chinese", rules_choice.choice)])
def test_a_megabyte_reply_is_read_in_seconds(case: str, scorer) -> None:
    """The shapes that were cubic (digits: choice labels), quadratic (nested asides,
    repeated markers) or a hundred-million-entry list (option lines) before."""
    question = Question(idx=0, question="q", reference="12", choices=["a", "b", "c"])
    started = time.perf_counter()
    _check_score(scorer(HUGE[case], question))
    assert time.perf_counter() - started < 20.0


def test_a_reply_of_a_hundred_thousand_numbers() -> None:
    """Linear, but each number costs a regex match and a conversion: 100,000 here (a
    megabyte of them takes ~5 s on a loaded machine, too long for this folder)."""
    reply = "1 " * 100_000 + "so the answer is 12"
    assert rules.numeric(reply, Question(idx=0, question="q", reference="12")).correct
