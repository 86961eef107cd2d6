"""Hostile model replies for the property tests: whatever a small model (or an attacker)
may send back, as hypothesis strategies, plus a few dedicated huge inputs.

A reader of replies must return or refuse with its documented exception, never raise
anything else and never hang; `HUGE` holds the inputs too big for hypothesis to draw
(one each, run once per reader).
"""
from __future__ import annotations

from hypothesis import settings
from hypothesis import strategies as st

FAST = settings(max_examples=60, deadline=None, database=None)
"""Enough draws to find shape bugs, cheap enough for the folder to stay under a minute."""
SLOW = settings(max_examples=15, deadline=None, database=None)
"""For readers that tokenise or embed (jieba, rouge): a few draws each."""

_NUMBERS = st.one_of(
    st.integers().map(str),
    st.integers(min_value=10 ** 150, max_value=10 ** 260).map(str),  # the demo's 184-256 digits
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.sampled_from(["NaN", "nan", "inf", "-inf", "Infinity", "1e999", "-1e-999", "1e309",
                     "1,000,000,000.000", "0.0000", "-0", "١٢٣", "１２３", "3/0", "0/0",
                     "2 1/0", "0分之3", "1.5*10^99999", "12%", "3万", "1" * 600, "1" * 4400,
                     "9" * 400 + "/" + "9" * 400, "choice 99999999999", "第九十九个"]))
_WORDS = st.sampled_from([
    "the answer is", "答案是", "**", "\\boxed{", "therefore", "所以", "=", "choice", "option",
    "选项", "Sentence", "句子", "(", ")", "[", "]", "{", "}", "```json", "```", '"score":',
    '"reason":', "positive", "negative", "正面", "负面", "true", "false", "A", "B", "I think",
    "\n", "\r\n", "\t", "\x00", "\x1b[31m", "\u202e", "\ufeff", "\u200b", "\ud7ff", "🙂",
    "ﷺ", "Ⅻ", "½", "٣", "𝟙𝟚", "check:", "验证：", "第", "个", "万", "亿", "%", "/", "-", "+"])
_ALL_TEXT = st.text(alphabet=st.characters(codec="utf-8"), max_size=200)
"""Any code point a reply can carry (control characters, surrogates excluded by utf-8)."""

replies = st.one_of(
    _ALL_TEXT,
    st.lists(st.one_of(_NUMBERS, _WORDS, _ALL_TEXT), max_size=25).map(" ".join),
    st.lists(st.one_of(_NUMBERS, _WORDS), max_size=25).map("".join),
)
"""A model reply: arbitrary text, number soup, markers, control and mixed-script characters."""

choices_lists = st.lists(st.one_of(st.text(max_size=20), _NUMBERS, _WORDS), max_size=6)
"""The options of a choice item, as a (possibly odd) dataset may hold them."""

MEGA = 1_000_000
HUGE: dict[str, str] = {
    "digits": "1" * MEGA,
    "spaced digits": "1 " * (MEGA // 2),
    "nested parens": "(" * (MEGA // 2) + ")" * (MEGA // 2),
    "open parens": "(" * MEGA,
    "nested json": "[" * (MEGA // 2) + "]" * (MEGA // 2),
    "braces": "{" * MEGA,
    "markers": "the answer is " * (MEGA // 14),
    "chinese": "答案是三" * (MEGA // 4),
    "bold": "**1** " * (MEGA // 6),
    "lines": "choice 1: true\n" * (MEGA // 15),
    "controls": "".join(chr(c) for c in range(32)) * (MEGA // 32),
}
"""One-megabyte replies, each a shape that makes a naive parser quadratic or recursive."""
HUGE_CASES = sorted(HUGE)
