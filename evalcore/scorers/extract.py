"""What a reply says around its answer, to be set aside before the answer is read.

Replies check their own work ("x = 7 (check: 7+3=10)", "验证：6×4=24"), explain in
parentheses ("12 square meters (3 m x 4 m)") and list the options back ("1. 男生\\n2. 没有足够信息")
before or instead of choosing. The rules scorers read the answer from what is left.
Pure, standard library only.
"""
from __future__ import annotations

import re
import unicodedata
from typing import Sequence

_CHECK = re.compile(
    r"[(\[]?\s*(?:let'?s\s+)?(?:check(?:ing)?|verif(?:y|ication|ied)|double[- ]check|proof|"
    r"验证|检验|验算|检查)\s*[:：,，]", re.IGNORECASE)
_PAREN = re.compile(r"\([^()]*\)|（[^（）]*）|\[[^\[\]]*\]")
_LIST_LINE = re.compile(
    r"^\s*[-*]?\s*\**\s*(?:(?:choice|option|选项)\s*)?[(\[]?\s*(?P<label>\d+|[A-Za-z])\s*[)\]]?"
    r"\s*\**\s*[.:：、)\-]\s*(?P<text>.+?)\s*$", re.IGNORECASE)


def strip_checks(text: str, has_number: "re.Pattern[str]") -> str:
    """The text before a self-check ("check:", "验证：") when a number comes before it."""
    m = _CHECK.search(text)
    if m and m.start() > 0 and has_number.search(text[:m.start()]):
        return text[:m.start()]
    return text


MAX_NESTING = 16
"""Asides nested deeper than this are left in place: each level costs one pass over the
reply, so a reply of 500,000 nested "(" must not cost 500,000 passes."""


def strip_parentheticals(text: str) -> str:
    """The text without (...) / （...） / [...] asides (innermost first, up to MAX_NESTING
    levels deep)."""
    for _ in range(MAX_NESTING):
        text, removed = _PAREN.subn(" ", text)
        if not removed:
            break
    return text


def _squash(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).casefold()
    return "".join(ch for ch in text if not (ch.isspace() or unicodedata.category(ch)[0] in "PS"))


def strip_option_listing(text: str, choices: Sequence[str]) -> tuple[str, int]:
    """The reply without lines that restate an option ("1. 男生", "B) the cat").

    Returns (rest, listed): `listed` counts the distinct options restated. A reply that
    lists two or more options line by line is echoing the question; what it chooses must
    be said elsewhere ("答案是1"), else nothing is chosen.
    """
    options = {_squash(c): i for i, c in enumerate(choices) if _squash(c)}
    kept, listed = [], set()
    for line in text.splitlines():
        m = _LIST_LINE.match(line)
        squashed = _squash(m.group("text")) if m else ""
        if m and squashed in options:
            listed.add(options[squashed])
            continue
        kept.append(line)
    if len(listed) < 2:
        return text, 0
    return "\n".join(kept), len(listed)
