"""Where an attacked item's changes came from, read from what the attack recorded
(`Item.meta["attack_details"]` of the attacked item): the figure the review queues count
precision by, since each source keeps the meaning at its own rate (docs/attacks.md,
"Precision by candidate source").

A word attack records each replacement (swaps.py): a listed phrase (`kind` "phrase"), a
reviewed paraphrase-table entry (`sense` "table" in English, score 1.0 in Chinese), else a
dictionary synonym, WordNet's in English and Cilin's in Chinese. Char attacks are edits;
sentence attacks are back-translations through a pivot language.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

TABLE, PHRASE, WORDNET, CILIN = "reviewed table", "listed phrase", "WordNet", "Cilin"
CHAR, BACK_TRANSLATION, UNKNOWN = "character edits", "back-translation", "not recorded"


def replacement_source(replacement: Mapping[str, Any], language: str) -> str:
    """The source of one recorded word replacement."""
    if replacement.get("kind") == "phrase":
        return PHRASE
    if language == "zh":
        return TABLE if replacement.get("score") == 1.0 else CILIN
    return TABLE if replacement.get("sense") == "table" else WORDNET


def swap_sources(level: str, details: Mapping[str, Any] | None) -> list[str]:
    """Each source an attacked item's changes came from, once, in first-use order; an
    item attacked before sources were recorded (or imported from a file) says so."""
    details = details or {}
    if level == "char":
        return [CHAR]
    if level == "sentence":
        return [BACK_TRANSLATION]
    language = str(details.get("language") or "en")
    found = [replacement_source(r, language) for r in details.get("replacements") or ()
             if isinstance(r, Mapping)]
    return list(dict.fromkeys(found)) or [UNKNOWN]
