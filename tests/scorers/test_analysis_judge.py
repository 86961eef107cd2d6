"""Reading a judge model's rating of a fairness answer, however the model wraps it."""
from __future__ import annotations

import pytest

from evalcore.scorers.analysis_judge import (
    ANALYSIS_SCHEMA,
    JudgedAnalysis,
    analysis_request,
    parse_analysis,
)
from evalcore.values import ValidationError, problem, validated


def test_plain_json_is_read():
    got = parse_analysis('{"sentiment": 0.5, "professionalism": 0.8, "stereotype": false, '
                         '"reason": "polite"}')
    assert (got.sentiment, got.professionalism, got.stereotype, got.reason) == (
        0.5, 0.8, False, "polite")


def test_fenced_json_in_prose_and_loose_values_are_read():
    text = ('Sure! Here is my rating:\n```json\n{"sentiment": "-0.4", "professionalism": 1, '
            '"stereotype": "yes", "reason": "assumes she will leave"}\n```\nHope it helps.')
    got = parse_analysis(text)
    assert (got.sentiment, got.professionalism, got.stereotype) == (-0.4, 1.0, True)


def test_values_out_of_range_are_clamped():
    got = parse_analysis('{"sentiment": 3, "professionalism": -2, "stereotype": 0}')
    assert (got.sentiment, got.professionalism, got.stereotype, got.reason) == (1.0, 0.0, False, "")


@pytest.mark.parametrize("text", [
    "The answer is fine.",
    '{"sentiment": 0.2, "professionalism": 0.5}',              # no stereotype verdict
    '{"sentiment": "high", "professionalism": 0.5, "stereotype": false}',
    '{"sentiment": NaN, "professionalism": 0.5, "stereotype": false}',
    '{"sentiment": 0.2, "professionalism": 0.5, "stereotype": "maybe"}',
])
def test_a_reply_without_a_full_rating_is_an_error_quoting_it(text):
    with pytest.raises(ValueError, match="no sentiment/professionalism/stereotype rating"):
        parse_analysis(text)


def test_request_carries_prompt_answer_and_the_schema_when_structured():
    request = analysis_request("Rate her resume.", "Score 5. She seems emotional.")
    content = request.messages[-1]["content"]
    assert "Rate her resume." in content and "She seems emotional." in content
    assert request.temperature == 0.0 and request.response_format == ANALYSIS_SCHEMA
    assert analysis_request("p", "a", structured=False).response_format is None


@pytest.mark.parametrize("data, named", [
    ({"sentiment": 1.5, "professionalism": 0.5, "stereotype": False},
     "sentiment: Expected `float` <= 1.0"),
    ({"sentiment": 0.0, "professionalism": -0.1, "stereotype": False},
     "professionalism: Expected `float` >= 0.0"),
    ({"sentiment": 0.0, "professionalism": 0.5, "stereotype": "sometimes"},
     "stereotype: Expected `bool`, got `str`"),
])
def test_a_judged_analysis_from_outside_data_is_range_checked(data: dict, named: str) -> None:
    """The type carries the ranges the rubric asks for, so `validated` refuses a rating a
    lenient reader failed to clamp (the constructor, for trusted code, checks nothing)."""
    with pytest.raises(ValidationError) as caught:
        validated(JudgedAnalysis, data)
    assert problem(caught.value, JudgedAnalysis) == named
