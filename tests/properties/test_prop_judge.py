"""Judge replies are model output too: parse_verdict always gives a Score (an unreadable
reply is 'judge error: ...'), parse_analysis a JudgedAnalysis or its documented
ValueError, json_objects only dicts; none raises otherwise or hangs.
"""
from __future__ import annotations

import json
import time

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from evalcore.scorers.analysis_judge import JudgedAnalysis, parse_analysis
from evalcore.scorers.judge import json_objects, parse_verdict
from evalcore.values import ValidationError, problem, validated
from tests.properties.hostile import FAST, HUGE, replies

_VALUES = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=10),
                    st.lists(st.integers(), max_size=2), st.just({"a": 1}))
_OBJECTS = st.dictionaries(st.sampled_from(["score", "reason", "sentiment", "professionalism",
                                            "stereotype", "x"]), _VALUES, max_size=5)


def _judge_reply(obj: dict, prose: str, fenced: bool) -> str:
    body = json.dumps(obj)  # NaN / Infinity written as JSON's extensions, as models do
    return f"{prose}\n```json\n{body}\n```" if fenced else f"{prose} {body} {prose}"


JUDGE_REPLIES = st.one_of(replies, st.builds(_judge_reply, _OBJECTS, replies, st.booleans()))


@FAST
@given(JUDGE_REPLIES)
def test_parse_verdict_always_scores(reply: str) -> None:
    score = parse_verdict(reply)
    assert score.value in (0.0, 1.0) and score.correct in (True, False)
    for data in json_objects(reply):
        assert isinstance(data, dict)


@FAST
@given(JUDGE_REPLIES)
def test_parse_analysis_reads_or_refuses(reply: str) -> None:
    try:
        out = parse_analysis(reply)
    except ValueError as exc:
        assert "judge reply" in str(exc)
        return
    assert isinstance(out, JudgedAnalysis)
    assert -1.0 <= out.sentiment <= 1.0 and 0.0 <= out.professionalism <= 1.0
    # exactly the declared types, as `validated` reads them back (the Struct's constructor
    # would keep a str or an int the reader let through)
    assert (type(out.sentiment), type(out.professionalism), type(out.stereotype),
            type(out.reason)) == (float, float, bool, str)
    assert validated(JudgedAnalysis, msgspec.to_builtins(out)) == out


_LOOSE = st.one_of(st.floats(), st.integers(-5, 5), st.booleans(), st.none(),
                  st.sampled_from(["0.5", "-2", "1e999", "nan", "yes", "no", "true", "0", "1",
                                   " 0.3 ", "high"]),
                  st.floats(-2, 2).map(str))
_RATINGS = st.fixed_dictionaries({"sentiment": _LOOSE, "professionalism": _LOOSE,
                                  "stereotype": _LOOSE},
                                 optional={"reason": _VALUES})


@FAST
@given(_RATINGS, replies, st.booleans())
def test_a_full_rating_with_loose_values_is_read_as_exact_types(obj: dict, prose: str,
                                                                fenced: bool) -> None:
    """Every key present, values as a small model writes them: the reader gives floats in
    range, a bool and a str (what `validated` accepts), or refuses."""
    try:
        out = parse_analysis(_judge_reply(obj, prose, fenced))
    except ValueError as exc:
        assert "judge reply" in str(exc)
        return
    assert (type(out.sentiment), type(out.professionalism), type(out.stereotype),
            type(out.reason)) == (float, float, bool, str)
    assert validated(JudgedAnalysis, msgspec.to_builtins(out)) == out


@FAST
@given(_OBJECTS)
def test_a_judge_object_is_a_valid_rating_or_a_validation_error(obj: dict) -> None:
    """`validated(JudgedAnalysis, ...)` on a raw reply object: the ranges hold or it refuses."""
    try:
        out = validated(JudgedAnalysis, obj)
    except ValidationError as exc:
        assert problem(exc, JudgedAnalysis)
        return
    assert -1.0 <= out.sentiment <= 1.0 and 0.0 <= out.professionalism <= 1.0
    assert isinstance(out.stereotype, bool) and isinstance(out.reason, str)


@pytest.mark.parametrize("reply", ['{"score": Infinity, "reason": "x"}', '{"score": 1e999}',
                                   '{"score": -Infinity}', '{"score": NaN}',
                                   "[" * 100_000 + "]" * 100_000,
                                   '{"score": ' + "9" * 5000 + "}"])
def test_infinite_scores_and_deep_nesting_are_judge_errors(reply: str) -> None:
    assert parse_verdict(reply).reason.startswith("judge error")


@pytest.mark.parametrize("case", ["braces", "nested json", "markers", "controls"])
def test_a_megabyte_judge_reply_is_read_in_seconds(case: str) -> None:
    started = time.perf_counter()
    assert parse_verdict(HUGE[case]).correct is False
    with pytest.raises(ValueError):
        parse_analysis(HUGE[case])
    assert time.perf_counter() - started < 20.0
