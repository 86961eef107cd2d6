"""Is a text Chinese or English? One rule, used by import, prompts, scorers and attacks.

The rule: count CJK characters and Latin words; Chinese when there is at least one CJK
character and they are not outnumbered by Latin words, English when there are Latin
words, undecided when there is neither (a bare number such as "12"). Counting Latin
*words* against CJK *characters* keeps "usermode-helper API 是个很简单的 API" Chinese and
"I love 北京" English. A file's columns never decide the language: an English file in
the Math23K layout is English.
"""
from __future__ import annotations

import re
from collections import Counter
from typing import Iterable, Literal, Optional

Language = Literal["zh", "en"]
LANGUAGES: tuple[str, ...] = ("zh", "en")

_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002a6df]")
_LATIN_WORD = re.compile(r"[A-Za-z]+")


def text_language(text: str) -> Optional[Language]:
    """'zh', 'en', or None when the text has neither CJK characters nor Latin words."""
    cjk = len(_CJK.findall(text or ""))
    latin = len(_LATIN_WORD.findall(text or ""))
    if cjk and cjk >= latin:
        return "zh"
    return "en" if latin else None


def detect_language(text: str, default: Language = "en") -> Language:
    """The language of `text` by the rule above; `default` when the text cannot tell."""
    return text_language(text) or default


def majority_language(texts: Iterable[str], default: Language = "en") -> Language:
    """The language most texts are in (ties go to Chinese, as in `text_language`);
    `default` when none of them can tell. A dataset's language is this over its questions."""
    counts = Counter(lang for lang in map(text_language, texts) if lang is not None)
    if not counts:
        return default
    return "zh" if counts["zh"] >= counts["en"] else "en"
