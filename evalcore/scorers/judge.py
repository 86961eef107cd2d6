"""A judge model as scorer: a strict 0/1 rubric in, `{"score": 0|1, "reason": "..."}` out.

Structured output (`response_format` json_schema) is asked for where the provider
supports it; the reply is parsed robustly either way, because small and local models
wrap JSON in prose or code fences. A reply that cannot be read is a judge error
(score 0, as the stability method says), counted apart from model errors.
"""
from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any, Optional

from evalcore.dataset.records import Question
from evalcore.providers.base import ChatRequest
from evalcore.scorers.base import Score

JUDGE_SCHEMA: dict[str, Any] = {
    "type": "json_schema",
    "json_schema": {
        "name": "verdict",
        "strict": True,
        "schema": {
            "type": "object",
            "properties": {
                "score": {"type": "integer", "enum": [0, 1]},
                "reason": {"type": "string"},
            },
            "required": ["score", "reason"],
            "additionalProperties": False,
        },
    },
}

RUBRIC = """You are a strict grader. Decide whether the ANSWER to the QUESTION is correct.
Rules:
- Score 1 only if the answer's final conclusion is right{ref_rule}; otherwise score 0.
- Ignore style, length and language; judge only correctness.
- An answer that refuses, hedges between options, or gives no final answer scores 0.
Reply with JSON only: {{"score": 0 or 1, "reason": "one short sentence"}}.

QUESTION:
{question}
{choices}{reference}
ANSWER:
{answer}"""


def judge_request(question: Question, answer: str, *, structured: bool = True) -> ChatRequest:
    """The chat request that asks a judge model for a 0/1 verdict on `answer`."""
    choices = "".join(f"choice {i}: {c}\n" for i, c in enumerate(question.choices))
    reference = (f"\nREFERENCE ANSWER:\n{question.reference}\n"
                 if question.reference not in (None, "") else "")
    text = RUBRIC.format(
        ref_rule=" and agrees with the REFERENCE ANSWER" if reference else "",
        question=question.question, choices=choices, reference=reference, answer=answer)
    return ChatRequest.user(text, temperature=0.0,
                            response_format=JUDGE_SCHEMA if structured else None)


_FENCE = "```"
_OBJECT = re.compile(r"\{[^{}]*\}")
"""A flat {...} span: linear to find, where `\\{.*?\\}` re-read the rest of the reply
from every "{" (a reply of a million braces took hours)."""
_SCORE_FIELD = re.compile(r"[\"']?score[\"']?\s*[:=]\s*[\"']?([01])\b", re.I)


def parse_verdict(text: str) -> Score:
    """Read a judge reply; an unreadable one becomes score 0 with reason 'judge error: ...'."""
    verdict = _from_json(text)
    if verdict is None:
        match = _SCORE_FIELD.search(text)
        if match:
            verdict = (int(match.group(1)), _reason_after(text))
    if verdict is None:
        snippet = " ".join(text.split())[:120]
        return Score(value=0.0, correct=False,
                     reason=f"judge error: no 0/1 verdict in judge reply: {snippet!r}")
    score, reason = verdict
    return Score(value=float(score), correct=bool(score), reason=reason or "(judge gave no reason)",
                 extracted=str(score))


def json_objects(text: str) -> Iterator[dict[str, Any]]:
    """The JSON objects a model reply may hold, most likely first: fenced blocks, the
    whole reply, then every flat {...} span (small models wrap JSON in prose)."""
    parts = text.split(_FENCE)
    fenced = [p[4:] if p.startswith("json") else p for p in parts[1:-1:2]]  # closed fences
    candidates = fenced + [text] + [m.group(0) for m in _OBJECT.finditer(text)]
    for chunk in candidates:
        try:
            data = json.loads(chunk.strip())
        except (ValueError, RecursionError):  # JSONDecodeError; nesting deeper than Python's stack
            continue
        if isinstance(data, dict):
            yield data


def _from_json(text: str) -> Optional[tuple[int, str]]:
    for data in json_objects(text):
        if "score" in data:
            try:
                score = int(float(data["score"]))
            except (TypeError, ValueError, OverflowError):  # OverflowError: Infinity, 1e999
                continue
            if score in (0, 1):
                return score, str(data.get("reason", "")).strip()
    return None


def _reason_after(text: str) -> str:
    match = re.search(r"[\"']?reason[\"']?\s*[:=]\s*[\"']?(.+?)[\"']?\s*(?:[,}]|$)", text, re.I | re.S)
    return match.group(1).strip() if match else ""
