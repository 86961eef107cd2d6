"""Answer consistency across rounds: how often a model gives the same answer to the same
question, whatever its verdict. Answers are compared by `answer_key` (normalised text, a
bare number in one canonical form). Pure, standard library only."""
from __future__ import annotations

import functools
import math
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass
from typing import Any, Callable, Optional, Sequence

from evalcore.metrics.stability import MetricInputError

_KEEP_IN_NUMBERS = {".", ","}
_IN_CONTEXT = {".", ",", "-"}
"""The punctuation a number may keep, decided by its neighbours (a "+" is a symbol, and
symbols are kept anyway)."""
_CONTEXT_MARK = re.compile("[.,-]")
_LAST_PUNCTUATION_PLANE = 0x20000
"""Unicode assigns punctuation (category P*) only in planes 0 and 1."""


def _char_class(codes: list[int]) -> str:
    ranges: list[tuple[int, int]] = []
    for c in codes:
        if ranges and ranges[-1][1] == c - 1:
            ranges[-1] = (ranges[-1][0], c)
        else:
            ranges.append((c, c))
    return "[" + "".join(re.escape(chr(a)) if a == b else f"{re.escape(chr(a))}-{re.escape(chr(b))}"
                         for a, b in ranges) + "]"


@functools.cache
def _punctuation(plane_end: int) -> re.Pattern[str]:
    """Every punctuation code point below `plane_end` as one character class, built once,
    so `re` finds a reply's few punctuation marks in C instead of `unicodedata` being
    asked about each character. Three sizes, the smallest that covers a text: ASCII (most
    replies: built from 128 code points, not the 131,072 of the two planes), the Basic
    Multilingual Plane (which `re` matches with a bitmap), and both planes."""
    marks = [c for c in range(plane_end) if unicodedata.category(chr(c))[0] == "P"
             and chr(c) not in _IN_CONTEXT]
    return re.compile(_char_class(marks))


def _punctuation_for(text: str) -> re.Pattern[str]:
    if text.isascii():
        return _punctuation(0x80)
    return _punctuation(0x10000 if max(text) <= "\uffff" else _LAST_PUNCTUATION_PLANE)


def normalize_answer(text: str) -> str:
    """Fold answers that differ only in width, case, spacing or punctuation.

    NFKC turns full-width letters, digits and punctuation into ASCII; casefold; other
    punctuation becomes a space, except a decimal point or thousands comma between
    digits and a sign in front of a number (so "-3", "3.5" and "35" stay different);
    runs of whitespace collapse to one space.
    """
    text = unicodedata.normalize("NFKC", text).casefold()

    pattern = _punctuation_for(text)
    # the other marks become spaces first: a neighbour that was one is no digit, letter,
    # '.' or ',' either way, so the marks decided by their neighbours decide the same
    text = pattern.sub(" ", text)

    def mark(match: re.Match[str]) -> str:
        i, ch = match.start(), match.group()
        prev = text[i - 1] if i > 0 else ""
        nxt = text[i + 1] if i + 1 < len(text) else ""
        in_number = ch in _KEEP_IN_NUMBERS and prev.isdigit() and nxt.isdigit()
        sign = ch == "-" and nxt.isdigit() and not (prev.isalnum() or prev in _KEEP_IN_NUMBERS)
        return ch if in_number or sign else " "

    return " ".join(_CONTEXT_MARK.sub(mark, text).split())


@dataclass(frozen=True, slots=True)
class Consistency:
    """How often a question got the same answer, without a reference."""

    rounds: int
    """Rounds considered, including those without an answer."""
    answered: int
    distinct: int
    """Distinct normalised (or extracted) answers."""
    top_answer: Optional[str]
    top_share: float
    """Count of the most common answer / `rounds`: errors lower consistency."""

    def to_json_dict(self) -> dict[str, Any]:
        return {"rounds": self.rounds, "answered": self.answered, "distinct": self.distinct,
                "top_answer": self.top_answer, "top_share": self.top_share}


_PLAIN_NUMBER = re.compile(r"[+-]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?")


def answer_key(text: str) -> str:
    """An answer as consistency compares it: `normalize_answer`, and a bare number in one
    canonical form, so "1,200", "1200" and "1200.0" are one answer (exactly, on the digits).

    The number is canonicalised as text, not through Decimal arithmetic: a model may answer
    with hundreds of digits, more than any decimal context holds (the default 28-digit
    context raised InvalidOperation on `quantize` and took the Stability page with it).
    """
    folded = normalize_answer(text)
    if _PLAIN_NUMBER.fullmatch(folded):
        return _canonical_number(folded)
    return folded


def _canonical_number(number: str) -> str:
    """"-001,200.50" -> "-1200.5": no thousands commas, leading or trailing zeros, no "-0";
    digits of any script as ASCII (the regex's \\d accepts them)."""
    if not number.isascii():
        number = "".join(str(unicodedata.decimal(ch)) if ch.isdigit() else ch for ch in number)
    sign = "-" if number.startswith("-") else ""
    whole, _, frac = number.lstrip("+-").replace(",", "").partition(".")
    whole, frac = whole.lstrip("0") or "0", frac.rstrip("0")
    if whole == "0" and not frac:
        sign = ""
    return f"{sign}{whole}.{frac}" if frac else f"{sign}{whole}"


def answer_consistency(answers: Sequence[Optional[str]],
                       extractor: Optional[Callable[[str], Optional[str]]] = None,
                       key: Callable[[str], str] = answer_key) -> Consistency:
    """Distinct answers and the share of the most common one for one question.

    `extractor` (e.g. "the number in the answer") is applied to the raw answer before
    normalising; None from it or a None answer (a failed call) means no answer. Ties
    for the most common answer go to the one seen first. `key` is `answer_key`, or a
    report's memo of it that its answer groups share.
    """
    if not answers:
        raise MetricInputError("answer consistency needs at least one round (empty list).")
    seen: Counter[str] = Counter()
    for raw in answers:
        if raw is None:
            continue
        value = extractor(raw) if extractor is not None else raw
        if value is None:
            continue
        seen[key(str(value))] += 1
    answered = sum(seen.values())
    top, top_count = seen.most_common(1)[0] if seen else (None, 0)
    return Consistency(rounds=len(answers), answered=answered, distinct=len(seen),
                       top_answer=top, top_share=top_count / len(answers))


def consistency_summary(per_question: Sequence[Sequence[Optional[str]]],
                        extractor: Optional[Callable[[str], Optional[str]]] = None
                        ) -> dict[str, Any]:
    """Answer consistency of every question and the means over questions."""
    if not per_question:
        raise MetricInputError("no questions to measure answer consistency on (empty input).")
    return consistency_of([answer_consistency(a, extractor) for a in per_question])


def consistency_of(results: Sequence[Consistency]) -> dict[str, Any]:
    """`consistency_summary` of questions already measured one at a time, so a report
    that streams a run's rounds keeps each question's figures, not its answers."""
    if not results:
        raise MetricInputError("no questions to measure answer consistency on (empty input).")
    return {
        "questions": [r.to_json_dict() for r in results],
        "mean_distinct": math.fsum(r.distinct for r in results) / len(results),
        "mean_top_share": math.fsum(r.top_share for r in results) / len(results),
    }
