"""Rules scorers: read the final answer out of a free-text reply, compare with the reference.

Pure, fast, standard library only (the CLI and the runner import this). This module holds
the verdict helpers every rule shares and the numeric rules; `rules_choice` the options,
`rules_labels` sentiment, 0/1 lists and exact match; `registry.RULES` names them all.

Replies are messy: they restate the question and its numbers, list every option, correct
themselves ("... wait, the answer is 800"), mix Chinese and English, use full-width digits.
So every scorer first normalises with NFKC (full-width -> ASCII) and then prefers an explicit
final-answer marker ("the answer is", "答案是", "**...**") over anything else it can find.

Verdicts:

- `correct=True/False` is the 0/1 verdict; `correct=None` only when the item cannot be
  judged (no or unreadable reference).
- A reply from which no answer can be read is wrong, and its reason starts with
  `"invalid:"`; a reply that names two different answers is wrong with a reason starting
  `"ambiguous:"`. `is_invalid()` recognises both, so metrics can count them apart.
"""
from __future__ import annotations

import bisect
import itertools
import math
import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Iterable, Optional, Sequence

from evalcore.dataset.records import Question
from evalcore.scorers.base import Score, Scorer
from evalcore.scorers.extract import strip_checks, strip_parentheticals

INVALID = "invalid"
AMBIGUOUS = "ambiguous"


def is_invalid(score: Score) -> bool:
    """True when no single answer could be read from the reply (invalid or ambiguous)."""
    return score.correct is False and score.reason.startswith((INVALID, AMBIGUOUS))


def unparsed_summary(reasons: Iterable[Optional[str]], what: str = "answers"
                     ) -> dict[str, Any]:
    """Count and share of replies the rules could not read, from their scores' reasons
    (one per answered round), with the warning a report shows when there are any.

    An accuracy resting on replies nobody could read measures the parser, not the model,
    so every report (stability, robustness, fairness, BBQ) says how many there were.
    """
    reasons = list(reasons)
    unread = sum(1 for r in reasons if is_unread_reason(r))
    return unparsed_counts(unread, len(reasons), what)


def is_unread_reason(reason: str | None) -> bool:
    """True for a score's reason saying no single answer could be read from the reply."""
    return (reason or "").startswith((INVALID, AMBIGUOUS))


def unparsed_counts(unread: int, answers: int, what: str = "answers") -> dict[str, Any]:
    """`unparsed_summary` from counts a report tallied while streaming its rows."""
    share = unread / answers if answers else None
    warning = (f"{unread} of {answers} {what} ({share:.0%}) could not be read (no single "
               "answer found) and count as wrong; see their reasons, or use a judge model"
               if unread else None)
    return {"answers": answers, "unparsed": unread, "unparsed_share": share,
            "parse_rate": None if share is None else 1.0 - share, "warning": warning}


def wrong_score(kind: str, why: str, extracted: Optional[str] = None) -> Score:
    """A wrong verdict whose reason starts with `kind` (INVALID, AMBIGUOUS)."""
    return Score(value=0.0, correct=False, reason=f"{kind}: {why}", extracted=extracted)


def unjudged_score(why: str) -> Score:
    """No verdict (correct=None): the item cannot be judged (no or unreadable reference)."""
    return Score(value=0.0, correct=None, reason=why)


MAX_LABEL_DIGITS = 6
"""An option label longer than this is a number in the text (a year, a 200-digit reply),
not an option: never converted (int() refuses more than 4,300 digits)."""


def normalize(text: str) -> str:
    """NFKC (full-width digits, letters, colon, percent -> ASCII) without gluing numbers.

    The full-width comma becomes ", " so "44，20" stays two numbers, not 4420.
    """
    text = text.replace("\uff0c", ", ").replace("\u3001", ", ")
    text = unicodedata.normalize("NFKC", text)
    return text.replace("\u2212", "-").replace("\u00d7", "*").replace("\u00f7", "/")


_CN_DIGITS = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4,
              "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}


def cn_int(text: str) -> Optional[int]:
    """Chinese numerals 0..99 ("三", "十二", "二十一"); None if not one."""
    if not text or any(ch not in _CN_DIGITS and ch != "十" for ch in text):
        return None
    if "十" not in text:
        return _CN_DIGITS[text] if len(text) == 1 else None
    tens, _, ones = text.partition("十")
    if len(tens) > 1 or len(ones) > 1:
        return None
    return (_CN_DIGITS[tens] if tens else 1) * 10 + (_CN_DIGITS[ones] if ones else 0)


# ============================================================================ numeric (math)

_NUMBER = re.compile(
    r"(?P<sign>(?<![\w.)\]])-|负|零下)?"
    r"(?:(?P<whole>\d+)(?:\s*又\s*|\s+)(?P<mnum>\d+)\s*/\s*(?P<mden>\d+)"      # 2 1/2, 2又1/2
    r"|(?P<cden>\d+(?:\.\d+)?)\s*分之\s*(?P<cnum>\d+(?:\.\d+)?)"                  # 4分之3
    r"|(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d*\.\d+|\d+)"                        # 1,200.5 .5 800
    r"(?:(?P<exp>[eE][+-]?\d+)(?![\w])|\s*[*xX]\s*10\s*\^\s*(?P<pow>[+-]?\d+))?"     # 1e3 1.2*10^3
    r"(?:\s*/\s*(?P<den>\d+(?:\.\d+)?))?)"                                        # 3/4
    r"(?P<pct>\s*%)?(?:\s*(?P<mult>万|亿))?"
)
_STRONG_NUMERIC_MARKERS = re.compile(
    r"(?:final\s+answer|answer|result)\s*(?:is|was|would\s+be|should\s+be|will\s+be|[:=])"
    r"\s*:?"
    r"|(?:最终)?(?:正确)?(?:答案|结果|答)\s*(?:应该|应)?\s*(?:是|为|[:=])"
    r"|\\boxed\{",
    re.IGNORECASE,
)
_WEAK_NUMERIC_MARKERS = re.compile(r"所以|因此|\b(?:therefore|thus|hence|so)\b",
                                   re.IGNORECASE)
"""Conclusions: the answer is in their clause (after its '=' or its last number)."""
_BOLD = re.compile(r"\*\*(.+?)\*\*", re.DOTALL)
_DIGIT = re.compile(r"\d")
_CLAUSE_END = re.compile(r"[。！？!?;；\n]|[.,](?=\s|$)")


@dataclass(frozen=True)
class _Number:
    text: str
    values: tuple[float, ...]
    """Readings to accept: one, or two for a percentage (80% -> 0.8 and 80)."""
    start: int


def _to_number(match: re.Match[str]) -> Optional[_Number]:
    g = match.groupdict()
    try:
        if g["whole"] is not None:
            value = int(g["whole"]) + int(g["mnum"]) / int(g["mden"])
        elif g["cden"] is not None:
            value = float(g["cnum"]) / float(g["cden"])
        else:
            value = float(g["num"].replace(",", "") + (g["exp"] or ""))
            if g["pow"] is not None:
                value *= 10.0 ** int(g["pow"])
            if g["den"] is not None:
                value /= float(g["den"])
    except (ZeroDivisionError, OverflowError, ValueError):
        # ValueError: an int of more than 4,300 digits (Python's conversion limit); no
        # answer has that many, so such a run is not read as a number
        return None
    if g["sign"]:
        value = -value
    if g["mult"]:
        value *= 1e4 if g["mult"] == "万" else 1e8
    values = (value / 100, value) if g["pct"] else (value,)
    return _Number(match.group(0).strip(), values, match.start())


def find_numbers(text: str) -> list[_Number]:
    """Every number in already-normalised `text`, in order."""
    found = (_to_number(m) for m in _NUMBER.finditer(text))
    return [n for n in found if n is not None]


def _first_valid_end(matches: Sequence[re.Match[str]], starts: Sequence[int],
                     pos: int, stop: Optional[int] = None) -> Optional[int]:
    """End of the first readable number starting in [pos, stop), from the reply's matches."""
    for i in range(bisect.bisect_left(starts, pos), len(matches)):
        m = matches[i]
        if stop is not None and m.start() >= stop:
            return None
        if _to_number(m) is not None:
            return m.end()
    return None


def _after_last_marker(text: str, markers: Iterable[re.Match[str]],
                       matches: Sequence[re.Match[str]], starts: Sequence[int]
                       ) -> Optional[_Number]:
    """The first number after the LAST marker that has one, at the marker's position.

    The number is read from the text after the marker (a "-" right after "答案是" is its
    sign), but only as far as the first number the whole reply holds there: a reply
    repeating "the answer is" 70,000 times is read in linear time, not by re-reading the
    rest of the reply after each marker.
    """
    for marker in reversed(list(markers)):
        end = _first_valid_end(matches, starts, marker.end())
        if end is None:
            continue
        after = find_numbers(text[marker.end():end])
        if after:
            return _Number(after[0].text, after[0].values, marker.start())
    return None


def _pick_in(text: str, offset: int = 0) -> Optional[_Number]:
    """The answer within one sentence: the number right after its last '=', else its last."""
    eq = text.rfind("=")
    matches = list(_NUMBER.finditer(text))
    after_eq = (m for m in matches if m.start() > eq) if eq >= 0 else iter(())
    for m in itertools.chain(after_eq, reversed(matches)):  # converted lazily: a reply may hold 500,000
        chosen = _to_number(m)
        if chosen is not None:
            return _Number(chosen.text, chosen.values, chosen.start + offset)
    return None


REPEATED_REPLY_CHARS = 2048
"""Replies up to this long are read once per text (a bounded cache of the latest): a
stability run asks each question again and again, and a model at a low temperature
repeats its reply word for word; reading one is tens of microseconds of Python."""


def extract_number(answer: str) -> _Number | None:
    r"""The final numeric answer of a reply (see `_extract_number`)."""
    if len(answer) <= REPEATED_REPLY_CHARS:
        return _extract_repeated(answer)
    return _extract_number(answer)


@lru_cache(maxsize=1024)
def _extract_repeated(answer: str) -> _Number | None:
    return _extract_number(answer)


def _extract_number(answer: str) -> Optional[_Number]:
    r"""The final numeric answer of a reply.

    A self-check after the answer ("check: 7+3=10", "验证：6×4=24") is cut off first.
    Order: the number right after the LAST explicit marker ("answer is", "答案是", "答：",
    `\boxed{`) or inside the last bold span `**...**`, whichever comes later; else the
    number of the last conclusion's clause ("所以", "therefore", "so": after its "=", else
    its last number); else, outside parentheses where possible, in the last clause (split at 。，,.;!? and new lines) that holds a number, the number after its
    last "=", else its last number. Working on the last clause keeps an earlier step
    ("每边44÷4+1=12棵，所以周长是800米") from winning; a unit conversion after the answer
    ("800 m, i.e. 0.8 km") does win, so say "答案是" / "the answer is" in the prompt.
    """
    text = strip_checks(normalize(answer), _DIGIT)
    matches = list(_NUMBER.finditer(text))
    starts = [m.start() for m in matches]
    strong: list[_Number] = []
    marked = _after_last_marker(text, _STRONG_NUMERIC_MARKERS.finditer(text), matches, starts)
    if marked:
        strong.append(marked)
    for bold in _BOLD.finditer(text):
        picked = _pick_in(bold.group(1))
        if picked:
            strong.append(_Number(picked.text, picked.values, bold.start()))
    if strong:
        return max(strong, key=lambda n: n.start)
    clause_ends = [m.start() for m in _CLAUSE_END.finditer(text)]
    for marker in reversed(list(_WEAK_NUMERIC_MARKERS.finditer(text))):  # the last one wins
        at = bisect.bisect_left(clause_ends, marker.end())
        end = clause_ends[at] if at < len(clause_ends) else len(text)
        if _first_valid_end(matches, starts, marker.end(), end) is None:
            continue  # no number in its clause: skipped without reading it
        clause = text[marker.end():end]
        bare = strip_parentheticals(clause)
        picked = _pick_in(bare if _DIGIT.search(bare) else clause)
        if picked:
            return _Number(picked.text, picked.values, marker.start())
    bare = strip_parentheticals(text)
    return _last_clause_number(bare if _DIGIT.search(bare) else text)


def _last_clause_number(text: str) -> Optional[_Number]:
    start = 0
    last: Optional[_Number] = None
    for end in [m.end() for m in _CLAUSE_END.finditer(text)] + [len(text)]:
        picked = _pick_in(text[start:end], start)
        last = picked or last
        start = end
    return last


@lru_cache(maxsize=4096)
def parse_reference_number(reference: str) -> Optional[float]:
    """A reference such as "800.0", "3/4", "1,200", "80%" (read as 0.8). Cached: a run
    reads each question's reference once per round."""
    numbers = find_numbers(normalize(reference.strip()))
    return numbers[0].values[0] if len(numbers) == 1 else None


def make_numeric_scorer(rel_tol: float = 1e-4, abs_tol: float = 1e-6) -> Scorer:
    """A math scorer comparing the reply's final number with the reference.

    Tolerance is `math.isclose(pred, ref, rel_tol, abs_tol)`: relative 1e-4 absorbs float
    noise and 4-5 significant digits of rounding; the absolute 1e-6 makes 0 comparable.
    A percentage in the reply is accepted under either reading, "80%" == 0.8 and == 80,
    because Math23K references carry no unit ("买书用去80%" style questions are stored as 0.8
    or as 80). A bare 80 does NOT match 0.8.
    """

    def numeric(answer: str, question: Question) -> Score:
        if question.reference is None or not question.reference.strip():
            return unjudged_score("no reference number")
        ref = parse_reference_number(question.reference)
        if ref is None:
            return unjudged_score(f"reference {question.reference!r} is not a number")
        found = extract_number(answer)
        if found is None:
            return wrong_score(INVALID, "no number in the reply")
        ok = any(math.isclose(v, ref, rel_tol=rel_tol, abs_tol=abs_tol) for v in found.values)
        readings = " or ".join(f"{v:g}" for v in found.values)
        verdict = "matches" if ok else "differs from"
        return Score(value=float(ok), correct=ok, extracted=found.text,
                     reason=f"read {found.text!r} ({readings}), {verdict} reference {ref:g}")

    return numeric


numeric = make_numeric_scorer()
