"""The label rules: sentiment labels, 0/1 lists (multi_tf) and exact match, read out of
a free-text reply. Pure, fast, standard library only."""
from __future__ import annotations

import json
import re
import unicodedata
from typing import Optional, Sequence

from evalcore.dataset.records import Question
from evalcore.scorers.base import Score
from evalcore.scorers.rules import (
    INVALID,
    MAX_LABEL_DIGITS,
    normalize,
    unjudged_score,
    wrong_score,
)

# ============================================================================ sentiment

_SENTIMENT_WORDS = {
    "positive": re.compile(r"\bpositive\b|正面|积极|正向", re.IGNORECASE),
    "negative": re.compile(r"\bnegative\b|负面|消极|负向", re.IGNORECASE),
}
_REFERENCE_LABELS = {"positive": "positive", "1": "positive", "正面": "positive",
                     "negative": "negative", "0": "negative", "负面": "negative"}


def extract_sentiment(answer: str) -> tuple[Optional[str], str]:
    """The label the reply names, by the method's rule: a keyword match.

    Naming both labels ("neither positive nor negative") or neither is invalid; there is no
    negation handling, so "not negative" reads as negative.
    """
    text = normalize(answer)
    named = [label for label, pattern in _SENTIMENT_WORDS.items() if pattern.search(text)]
    if len(named) == 1:
        return named[0], "keyword"
    why = "names both positive and negative" if named else "names neither positive nor negative"
    return None, f"{INVALID}: {why}"


def sentiment(answer: str, question: Question) -> Score:
    """Sentiment by keyword (positive/negative, 正面/负面, 积极/消极) vs the reference label."""
    ref = _REFERENCE_LABELS.get(str(question.reference or "").strip().lower())
    if ref is None:
        return unjudged_score(f"reference {question.reference!r} is not positive/negative")
    label, how = extract_sentiment(answer)
    if label is None:
        return Score(value=0.0, correct=False, reason=how)
    ok = label == ref
    return Score(value=float(ok), correct=ok, extracted=label,
                 reason=f"read {label} ({how}), reference {ref}")


# ============================================================================ multi true/false

_VERDICT_WORDS = {"1": 1, "0": 0, "true": 1, "false": 0, "yes": 1, "no": 0,
                  "appropriate": 1, "inappropriate": 0, "correct": 1, "incorrect": 0,
                  "正确": 1, "错误": 0, "对": 1, "错": 0, "合适": 1, "不合适": 0, "是": 1, "否": 0}
_VERDICT = r"(?:1|0|true|false|yes|no|inappropriate|appropriate|incorrect|correct|" \
           r"不合适|合适|正确|错误|对|错|是|否)"
_LIST = re.compile(r"\[([^\[\]]*)\]")
_RUN = re.compile(r"(?<![\w.])[01](?:\s*[,;/\s]\s*[01])+(?![\w.])")
_LINE_LABEL = re.compile(
    r"^\s*[-*]?\s*\**\s*(?:choice|option|选项)?\s*(?P<idx>\d+)\s*\**\s*[:.)、\-]", re.IGNORECASE)
_LINE_VERDICT = re.compile(rf"(?<![\w.]){_VERDICT}(?![\w.])", re.IGNORECASE)


def _as_bits(items: Sequence[str]) -> Optional[list[int]]:
    bits = []
    for item in items:
        key = item.strip().strip("'\"").lower()
        try:
            bits.append(int(float(key)) if key not in _VERDICT_WORDS else _VERDICT_WORDS[key])
        except (ValueError, OverflowError):  # "nan", "inf", "1e999": not a 0/1
            return None
        if bits[-1] not in (0, 1):
            return None
    return bits or None


def _bracket_lists(text: str) -> list[list[int]]:
    lists = (_as_bits(re.split(r"[,;\s]+", m.group(1).strip())) for m in _LIST.finditer(text))
    return [b for b in lists if b]


def _bare_runs(text: str) -> list[list[int]]:
    return [[int(d) for d in re.findall(r"[01]", m.group(0))] for m in _RUN.finditer(text)]


_MAX_EXTRA_LINES = 32
"""Option lines labelled past the options are read (a length mismatch, scored), up to
this many: "choice 99999999: 1" must not build a list of a hundred million verdicts."""


def _option_lines(text: str, n_options: int, choices: Sequence[str]) -> Optional[list[int]]:
    """Per-option lines "choice0: ... 1" / "1. ... -> appropriate".

    Reads the last verdict word on each labelled line, after removing the option's own text
    (which may hold digits or "No, ...").
    """
    verdicts: dict[int, int] = {}
    options = sorted((normalize(c).strip() for c in choices if c.strip()), key=len, reverse=True)
    for line in text.splitlines():
        label = _LINE_LABEL.match(line)
        if not label or len(label.group("idx")) > MAX_LABEL_DIGITS:
            continue  # a line starting with a long number is no option line
        if int(label.group("idx")) > n_options + _MAX_EXTRA_LINES:
            continue
        rest = line[label.end():]
        for option in options:
            rest = rest.replace(option, " ")
        words = _LINE_VERDICT.findall(rest)
        if words:
            verdicts[int(label.group("idx"))] = _VERDICT_WORDS[words[-1].lower()]
    if not verdicts:
        return None
    base = 1 if 0 not in verdicts and len(verdicts) == n_options else 0  # renumbered 1..n
    size = max(n_options, max(verdicts) + 1 - base)
    return [verdicts.get(i + base, 0) for i in range(size)]


def extract_bits(answer: str, n_options: int,
                 choices: Sequence[str] = ()) -> tuple[Optional[list[int]], str]:
    """The reply's 0/1 judgements and how they were read.

    Sources: a "[1,0,1]" list, per-option lines, or a bare "1, 0, 1" / "1 0 1" run. One of
    the expected length is preferred (the prompt's own example list "[1,0,1]" may be
    echoed); the last of that length wins, as replies end with the answer.
    """
    text = normalize(answer)
    lines = _option_lines(text, n_options, choices)
    groups = [("list", _bracket_lists(text)), ("option lines", [lines] if lines else []),
              ("sequence", _bare_runs(text))]
    for how, found in groups:
        fitting = [bits for bits in found if len(bits) == n_options]
        if fitting:
            return fitting[-1], how
    for how, found in groups:
        if found:
            return found[-1], how
    return None, f"{INVALID}: no 0/1 list found"


def prf(pred: Sequence[int], gold: Sequence[int]) -> tuple[float, float, float]:
    """(precision, recall, F1) of the 1s in `pred` against `gold`, position by position.

    A missing prediction counts as 0, extra ones are ignored. Zero division gives 0 (as
    sklearn's zero_division=0), except that predicting no 1 when gold has none is perfect
    (1, 1, 1): there was nothing to find and nothing was wrongly claimed.
    """
    pred = list(pred[: len(gold)]) + [0] * max(0, len(gold) - len(pred))
    tp = sum(1 for p, g in zip(pred, gold) if p == 1 and g == 1)
    n_pred, n_gold = sum(1 for p in pred if p == 1), sum(1 for g in gold if g == 1)
    if n_pred == 0 and n_gold == 0:
        return 1.0, 1.0, 1.0
    precision = tp / n_pred if n_pred else 0.0
    recall = tp / n_gold if n_gold else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return precision, recall, f1


def parse_reference_bits(reference: Optional[str]) -> Optional[list[int]]:
    """A reference such as "[1, 1, 0]" or "[1.0, 0.0]" (JSON), or "1,0,1"."""
    if reference is None:
        return None
    try:
        data = json.loads(reference)
    except (TypeError, ValueError):
        data = re.split(r"[,;\s]+", str(reference).strip("[] "))
    if not isinstance(data, list):
        return None
    return _as_bits([str(x) for x in data if str(x).strip() not in ("", "None", "nan")])


def multi_tf(answer: str, question: Question) -> Score:
    """Multi true/false: value = F1 of the 1s, correct = the whole vector matches."""
    gold = parse_reference_bits(question.reference)
    if gold is None:
        return unjudged_score(f"reference {question.reference!r} is not a 0/1 list")
    pred, how = extract_bits(answer, len(gold), question.choices)
    if pred is None:
        return Score(value=0.0, correct=False, reason=how)
    precision, recall, f1 = prf(pred, gold)
    ok = pred == gold
    size = "" if len(pred) == len(gold) else f", length mismatch {len(pred)} vs {len(gold)}"
    return Score(value=f1, correct=ok, extracted=json.dumps(pred),
                 reason=f"read {pred} ({how}) vs {gold}{size}: "
                        f"precision {precision:.3f} recall {recall:.3f} F1 {f1:.3f}")


# ============================================================================ exact match


def normalize_text(text: str) -> str:
    """For exact match: NFKC, casefold, punctuation and symbols dropped, spaces collapsed."""
    text = unicodedata.normalize("NFKC", text).casefold()
    text = "".join(" " if unicodedata.category(ch)[0] in "PS" else ch for ch in text)
    return " ".join(text.split())


def exact_match(answer: str, question: Question) -> Score:
    """The whole reply equals the reference after `normalize_text`."""
    if question.reference is None or not question.reference.strip():
        return unjudged_score("no reference to match")
    got, ref = normalize_text(answer), normalize_text(question.reference)
    if not got:
        return wrong_score(INVALID, "empty reply")
    ok = got == ref
    return Score(value=float(ok), correct=ok, extracted=got,
                 reason=f"{'equals' if ok else 'differs from'} reference {ref!r} after normalising")
