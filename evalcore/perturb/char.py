"""Character-level attack: noise between words, and optional typos inside free words.

The method's rule sets the number of edits: 2 below 15 words, else one per 10 words.
Noise never goes next to a number, a maths operator, a unit or an option label (the
method's "20,米"), and typos never touch protected words.
"""
from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from evalcore.perturb.lexicon import load_lexicon
from evalcore.perturb.tokens import Language, Token, count_words

CHAR_OPS = ("insert", "swap", "drop", "keyboard")
"""`insert`: noise between words; `swap`: two neighbouring letters (characters in Chinese);
`drop`: one letter; `keyboard`: a letter becomes a QWERTY neighbour (English only)."""

_ROWS = ("qwertyuiop", "asdfghjkl", "zxcvbnm")
_KEYBOARD = {
    ch: "".join(row[j] for j in (i - 1, i + 1) if 0 <= j < len(row))
    + "".join(other[i] for other in _ROWS if other is not row and i < len(other)
              and abs(_ROWS.index(other) - _ROWS.index(row)) == 1)
    for row in _ROWS for i, ch in enumerate(row)
}


def edit_count(n_words: int) -> int:
    """The method's rule: 2 edits for texts under 15 words, else one per 10 words."""
    return 2 if n_words < 15 else n_words // 10


def _blocks_noise(tok: Token) -> bool:
    return tok.kind in ("number", "op") or tok.protect in ("number", "op", "unit", "label",
                                                          "options")


def insertion_gaps(tokens: Sequence[Token], language: Language) -> list[int]:
    """Token indexes noise may be inserted before.

    English: the start of every whitespace word but the first; Chinese: between any two
    jieba tokens. A gap next to a number, operator, unit or option label is left out.
    """
    gaps = []
    for i in range(1, len(tokens)):
        if language == "en":
            if tokens[i].kind == "space" or tokens[i - 1].kind != "space" or i < 2:
                continue
            left, right = tokens[i - 2], tokens[i]
        else:
            left, right = tokens[i - 1], tokens[i]
            if left.kind == "space" or right.kind == "space":
                continue
        if not (_blocks_noise(left) or _blocks_noise(right)):
            gaps.append(i)
    return gaps


def typo_targets(tokens: Sequence[Token], language: Language) -> list[int]:
    """Free words long enough for a typo (English: 3+ letters; Chinese: 2+ characters
    and no numeral character: 下半年 must not lose its 半)."""
    least = 2 if language == "zh" else 3
    numerals = load_lexicon().zh_numeral_chars
    return [i for i, t in enumerate(tokens)
            if t.kind == "word" and not t.protect and len(t.text) >= least
            and (t.text.isalpha() if language == "en" else not set(t.text) & numerals)]


def _typo(word: str, op: str, rng: random.Random) -> str | None:
    if op == "swap":
        spots = [j for j in range(len(word) - 1) if word[j] != word[j + 1]]
        if not spots:
            return None
        j = rng.choice(spots)
        return word[:j] + word[j + 1] + word[j] + word[j + 2:]
    if op == "drop":
        j = rng.randrange(1, len(word)) if len(word) > 1 else 0
        return word[:j] + word[j + 1:]
    if op == "keyboard":
        spots = [j for j, ch in enumerate(word) if ch.lower() in _KEYBOARD]
        if not spots:
            return None
        j = rng.choice(spots)
        new = rng.choice(_KEYBOARD[word[j].lower()])
        return word[:j] + (new.upper() if word[j].isupper() else new) + word[j + 1:]
    raise ValueError(f"unknown character op {op!r}; choose from {', '.join(CHAR_OPS)}")


def char_attack(tokens: list[Token], language: Language, rng: random.Random, *,
                ops: Sequence[str] = ("insert",), edits: int | None = None,
                ) -> tuple[str, int, dict[str, Any]]:
    """(attacked text, edits made, details) for one segmented question.

    `edits=None` applies the method's rule; each edit draws its op from `ops`. Fewer edits
    are made when the text has too few free gaps or words (details["wanted"] tells).
    """
    unknown = set(ops) - set(CHAR_OPS)
    if unknown or not ops:
        raise ValueError(f"character ops {sorted(unknown) or '[]'} not known; "
                         f"choose from {', '.join(CHAR_OPS)}")
    usable = [op for op in ops if not (language == "zh" and op == "keyboard")]
    n_words = count_words(tokens, language)
    wanted = edit_count(n_words) if edits is None else max(0, int(edits))
    lex = load_lexicon()
    noise = lex.zh_noise if language == "zh" else lex.en_noise
    gaps = insertion_gaps(tokens, language)
    targets = typo_targets(tokens, language)
    rng.shuffle(gaps)
    rng.shuffle(targets)
    inserts: dict[int, str] = {}
    typos: dict[int, str] = {}
    log: list[dict[str, Any]] = []
    for _ in range(wanted):
        choices = [op for op in usable if (gaps if op == "insert" else targets)]
        if not choices:
            break
        op = rng.choice(choices)
        if op == "insert":
            at, piece = gaps.pop(), rng.choice(noise)
            inserts[at] = piece
            log.append({"op": op, "token": at, "noise": piece})
            continue
        at = targets.pop()
        new = _typo(tokens[at].text, op, rng)
        if new is None or new == tokens[at].text:
            continue
        typos[at] = new
        log.append({"op": op, "token": at, "before": tokens[at].text, "after": new})
    out = []
    for i, tok in enumerate(tokens):
        if i in inserts:
            out.append(inserts[i] + (" " if language == "en" else ""))
        out.append(typos.get(i, tok.text))
    return "".join(out), len(log), {"words": n_words, "wanted": wanted, "edits": log}
