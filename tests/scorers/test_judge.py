import json

import msgspec
import pytest

from evalcore.dataset.records import Question
from evalcore.scorers.judge import JUDGE_SCHEMA, judge_request, parse_verdict

Q = Question(idx=0, question="2+2?", reference="4", task_type="math", language="en")


@pytest.mark.parametrize("reply, score", [
    ('{"score": 1, "reason": "matches the reference"}', 1),
    ('```json\n{"score": 0, "reason": "says 5"}\n```', 0),
    ('Sure! Here is my verdict: {"score": 1, "reason": "correct"} Hope it helps.', 1),
    ('{"score": "1", "reason": "ok"}', 1),
    ("score: 0\nreason: wrong number", 0),
    ('{"reason": "wrong", "score": 0}', 0),
])
def test_verdicts_are_read_from_prose_fences_and_json(reply, score):
    verdict = parse_verdict(reply)
    assert verdict.correct is bool(score)
    assert verdict.value == score
    assert not verdict.reason.startswith("judge error")


@pytest.mark.parametrize("reply", ["I think it is fine", '{"score": 3, "reason": "x"}', ""])
def test_unreadable_verdicts_are_judge_errors_scoring_zero(reply):
    verdict = parse_verdict(reply)
    assert verdict.value == 0 and verdict.correct is False
    assert verdict.reason.startswith("judge error")


def test_request_carries_question_reference_answer_and_schema():
    request = judge_request(Q, "The answer is 4.")
    text = request.messages[-1]["content"]
    assert "2+2?" in text and "REFERENCE ANSWER:\n4" in text and "The answer is 4." in text
    assert request.response_format == JUDGE_SCHEMA
    assert request.temperature == 0.0
    json.dumps(request.response_format)  # serialisable for the wire
    plain = judge_request(msgspec.structs.replace(Q, reference=None), "4", structured=False)
    assert plain.response_format is None and "REFERENCE" not in plain.messages[-1]["content"]
