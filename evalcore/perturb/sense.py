"""Context checks a candidate swap must pass so the word keeps its sense where it stands.

The blind audit of 110 unflagged word attacks found four English swaps in the wrong sense
and two Chinese swaps that broke a word; each failure class has a check here:

- English **selection** (lexicon.toml `en.selection`): some reviewed pairs keep the meaning
  only with the right kind of neighbour. "is sitting" -> "is seated" needs a living
  subject (not "a statue is sitting"), require -> need a living subject (not "laws
  require"), carry -> transport a thing, not a living object ("carrying a cat"), big ->
  large a physical head noun after it (not "the biggest lie"). The neighbour is read from the
  tokens (subject before, object or head noun after) and its first WordNet noun sense is
  looked up: a living thing (living_thing.n.01) or a physical entity
  (physical_entity.n.01). No neighbour found, no swap.
- Chinese **inside a longer word**: jieba may cut a dictionary word across two tokens
  (看完全书 is 看/完全/书, where 全书 "the whole book" is the word), so 书 -> 图书 gives
  全图书. A token that, whole, forms a dictionary word with part of a neighbour token is
  not replaced.
- Chinese **noun use of a verb**: jieba tags 需要 as a verb everywhere, but in 因供应需要，
  it is a noun ("the supply's needs"); a verb right after a noun and right before the
  end of its clause is read as a noun, and only a candidate that can be a noun replaces it.
"""
from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

from evalcore.perturb.lexicon import load_lexicon
from evalcore.perturb.tokens import _pos_tokenizer, Token
from evalcore.perturb.word import _wordnet

LIVING = "living_thing.n.01"
PHYSICAL = "physical_entity.n.01"
_PRONOUNS_LIVING = frozenset(["i", "you", "he", "she", "we", "they", "him", "her", "us",
                              "them", "me", "who", "someone", "somebody", "everyone", "people"])
_PRONOUNS_THING = frozenset(["it", "this", "that", "something", "what", "which"])
_SKIP_BEFORE = frozenset(["is", "are", "was", "were", "be", "been", "being", "am", "will",
                          "would", "can", "could", "should", "may", "might", "must", "do",
                          "does", "did", "not", "never", "also", "still", "always", "often",
                          "usually", "just", "now", "has", "have", "had", "all", "only"])
_SKIP_AFTER = frozenset(["a", "an", "the", "my", "your", "his", "her", "its", "our", "their",
                         "this", "that", "these", "those", "some", "any", "every", "each",
                         "another", "very", "most", "more", "so", "too"])
_CLAUSE_END = frozenset("，,。．.；;！!？?：:、")


@functools.lru_cache(maxsize=20_000)
def noun_kind(word: str) -> frozenset[str]:
    """{"living", "physical"} or a subset: what the first WordNet noun sense of `word` is.

    A pronoun counts as living (he, they, someone) or as a thing (it)."""
    low = word.lower()
    if low in _PRONOUNS_LIVING:
        return frozenset({"living", "physical"})
    if low in _PRONOUNS_THING:
        return frozenset()

    wn = _wordnet()
    senses = wn.synsets(low, "n")
    if not senses:
        return frozenset()
    above = {h.name() for h in senses[0].closure(lambda s: s.hypernyms()
                                                 + s.instance_hypernyms())}
    above.add(senses[0].name())
    return frozenset(k for k, name in (("living", LIVING), ("physical", PHYSICAL))
                     if name in above)


def _is_noun(word: str) -> bool:
    import lemminflect

    low = word.lower()
    return (low in _PRONOUNS_LIVING or low in _PRONOUNS_THING
            or "NOUN" in lemminflect.getAllLemmas(low))


def _words(tokens: Sequence[Token], start: int, step: int, limit: int = 4) -> list[str]:
    """Up to `limit` word texts from `start` in direction `step`, stopping at punctuation."""
    out: list[str] = []
    j = start
    while 0 <= j < len(tokens) and len(out) < limit:
        tok = tokens[j]
        if tok.kind == "punct":
            break
        if tok.kind in ("word", "number"):
            out.append(tok.text)
        j += step
    return out


def neighbour_noun(tokens: Sequence[Token], start: int, end: int, role: str) -> str | None:
    """The subject before tokens[start:end], or the object / head noun after them."""
    if role == "subject":
        for word in _words(tokens, start - 1, -1):
            if word.lower() in _SKIP_BEFORE:
                continue
            return word if _is_noun(word) else None
        return None
    import lemminflect

    after = [w for w in _words(tokens, end, 1, limit=5) if w.lower() not in _SKIP_AFTER]
    for n, word in enumerate(after):
        adjective = "ADJ" in lemminflect.getAllLemmas(word.lower())
        if adjective and n + 1 < len(after):
            continue  # "a heavy box": the noun comes after its adjectives
        if _is_noun(word):
            return word
        if not adjective:
            return None  # "carrying quickly": not a noun phrase
    return None


def en_selection_ok(tokens: Sequence[Token], start: int, end: int, key: str) -> bool:
    """Whether the swap of tokens[start:end] (lexicon key "lemma/POS" or a phrase) keeps
    its sense next to the noun the lexicon's `en.selection` names for it."""
    rule = load_lexicon().en_selection.get(key.lower())
    if rule is None:
        return True
    role, need = rule
    noun = neighbour_noun(tokens, start, end, role)
    if noun is None:
        return False
    kinds = noun_kind(noun)
    if need.startswith("-"):
        return need[1:] not in kinds
    return need in kinds


# ---------------------------------------------------------------- Chinese


@functools.lru_cache(maxsize=1)
def _zh_dictionary() -> Any:
    return _pos_tokenizer().word_tag_tab


ZH_WORD_FREQ = 50
"""Least jieba dictionary frequency of a word a token may not be split from: jieba's
dictionary also lists fillers of frequency 2-3 (共要, 买书, 市运) that are no words."""


@functools.lru_cache(maxsize=1)
def _zh_freq() -> Any:
    return _pos_tokenizer().tokenizer.FREQ


def zh_inside_longer_word(tokens: Sequence[Token], i: int) -> bool:
    """Whether token `i`, whole, and part of a neighbour token form a dictionary word:
    jieba cut 看完全书 as 看/完全/书, but 全书 (the whole book) is the word, so 书 -> 图书
    gives 全图书. Measured on Math23K: requiring the whole token, a split neighbour and a
    real word (frequency >= ZH_WORD_FREQ) keeps 全书 and drops the false alarms of any
    crossing (一共|有 holds 共有, 每天|生产 holds 天生)."""
    freq = _zh_freq()
    text = tokens[i].text
    prev = tokens[i - 1].text if i > 0 and tokens[i - 1].kind == "word" else ""
    nxt = tokens[i + 1].text if i + 1 < len(tokens) and tokens[i + 1].kind == "word" else ""
    for k in range(1, len(prev)):
        if freq.get(prev[-k:] + text, 0) >= ZH_WORD_FREQ:
            return True
    return any(freq.get(text + nxt[:k], 0) >= ZH_WORD_FREQ for k in range(1, len(nxt)))


def zh_used_as_noun(tokens: Sequence[Token], i: int) -> bool:
    """A verb right after a noun (or verbal noun) and right before the end of its clause:
    因供应需要， (the supply's needs), where jieba's dictionary tag says verb."""
    tok = tokens[i]
    if not tok.flag.startswith("v"):
        return tok.flag.startswith("n")
    prev = tokens[i - 1] if i > 0 else None
    nxt = tokens[i + 1] if i + 1 < len(tokens) else None
    return (prev is not None and prev.kind == "word" and prev.flag in ("n", "vn", "nz", "ns")
            and (nxt is None or (nxt.kind == "punct" and nxt.text[:1] in _CLAUSE_END)))


def zh_can_be_noun(word: str) -> bool:
    """jieba's dictionary tag of `word` is a noun or a verbal noun."""
    flag = _zh_dictionary().get(word, "")
    return flag.startswith("n") or flag == "vn"
