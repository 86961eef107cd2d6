"""Phrase-level swaps for the word attack: contractions and reviewed multi-word paraphrases.

TextAttack's CheckList recipe swaps contractions both ways (`WordSwapContract`,
`WordSwapExtend`: "do not" <-> "don't"), which change the wording and never the meaning;
short questions (CODAH, TruthfulQA) have few content words that are free to replace, but
many such function-word phrases. lexicon.toml `phrases` lists them (zh and en, one way),
with a few reviewed multi-word paraphrases ("in order to" -> "so as to", 照这样 -> 按这样).

A phrase matches whole tokens (case-insensitive, either apostrophe); its tokens must be
free, except the capitalised first word of a sentence ("Do not ...", "What's ..."): the
tokenizer protects every capitalised English word as a possible name, but a listed
function phrase is not one. A contraction in 's is not expanded before a past participle
("what's happened" is "what has happened").
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from evalcore.perturb.lexicon import load_lexicon
from evalcore.perturb.tokens import Language, Token

_SENTENCE_END = frozenset(".!?。！？\n")
_CLITICS = ("'s", "'re", "'m", "'ll", "'ve", "'d")
"""A contraction ending in one of these needs a word after it ("Yes, I am." stays)."""
_BETWEEN = frozenset(["ever", "never", "not", "already", "just", "always", "recently", "also",
                      "since", "often", "finally", "really", "certainly", "probably"])
_HAS_AFTER = frozenset(["been", "got", "gotten", "gone", "had", "done", "made", "become"])


@dataclass(frozen=True)
class PhraseSite:
    """Tokens `start`..`end` (exclusive) read `before` and may become one of `options`."""

    start: int
    end: int
    before: str
    options: tuple[str, ...]


def _norm(text: str) -> str:
    return text.lower().replace("’", "'")


def _table(language: Language) -> dict[str, tuple[str, ...]]:
    lex = load_lexicon()
    return lex.zh_phrases if language == "zh" else lex.en_phrases


def _free(tok: Token, at_start: bool) -> bool:
    """A token a phrase may cover: free, a sentence-start capital, or a reference word
    (then the replacement must keep it, see `_keeps`)."""
    if tok.kind == "space":
        return tok.text == " "
    if tok.kind != "word":
        return False
    return tok.protect in ("", "reference") or (at_start and tok.protect == "entity")


def _keeps(tokens: Sequence[Token], option: str) -> bool:
    """Every reference word of the span is still a word of the replacement."""
    words = set(_norm(option).split())
    return all(_norm(t.text) in words for t in tokens if t.protect == "reference")


def _sentence_start(tokens: Sequence[Token], i: int) -> bool:
    for tok in reversed(tokens[:i]):
        if tok.kind != "space":
            return tok.text in _SENTENCE_END or tok.text[-1:] in ('"', "“")
        if "\n" in tok.text:
            return True
    return True


def _next_word(tokens: Sequence[Token], j: int) -> str:
    while j < len(tokens) and tokens[j].kind == "space":
        j += 1
    return tokens[j].text.lower() if j < len(tokens) and tokens[j].kind == "word" else ""


def _case_like(source: str, replacement: str, apostrophe: str) -> str:
    out = replacement.replace("'", apostrophe)
    return out[:1].upper() + out[1:] if source[:1].isupper() else out


def phrase_sites(tokens: Sequence[Token], language: Language) -> list[PhraseSite]:
    """Every place a listed phrase matches, longest first at each start, not overlapping
    each other (an earlier match wins)."""
    table = _table(language)
    if not table:
        return []
    longest = max(len(k) for k in table)
    sites: list[PhraseSite] = []
    taken = -1
    for i, first in enumerate(tokens):
        if i <= taken or first.kind != "word":
            continue
        start_ok = _sentence_start(tokens, i) and first.text[:1].isupper()
        text, best = "", None
        for j in range(i, len(tokens)):
            tok = tokens[j]
            if not _free(tok, start_ok and j == i):
                break
            text += tok.text
            if len(text) > longest:
                break
            key = _norm(text)
            if key in table and tok.kind == "word":
                best = (j + 1, text, table[key])
        if best is None:
            continue
        end, before, options = best
        after = _next_word(tokens, end)
        if _norm(before).endswith("'s") and _is_participle(_past_adverbs(tokens, end)):
            continue
        options = tuple(o for o in options if _keeps(tokens[i:end], o)
                        and (after or not o.endswith(_CLITICS)))
        if not options:
            continue
        apostrophe = "’" if "’" in before else "'"
        sites.append(PhraseSite(i, end, before,
                                tuple(_case_like(before, o, apostrophe) for o in options)))
        taken = end - 1
    return sites


def _past_adverbs(tokens: Sequence[Token], j: int) -> str:
    """The first word after `j` that is not an adverb ("she's ever slept": slept), so an
    's before an adverb and a participle reads as has."""
    import lemminflect

    word = _next_word(tokens, j)
    while word and set(lemminflect.getAllLemmas(word)) == {"ADV"} or word in _BETWEEN:
        while j < len(tokens) and tokens[j].kind == "space":
            j += 1
        j += 1
        word = _next_word(tokens, j)
    return word


def _is_participle(word: str) -> bool:
    """A past participle: 's before it is has ("she's slept", "it's been", "he's
    worked"), whatever the verb's form (lemminflect's VBN of any reading)."""
    if word in _HAS_AFTER or (word.endswith("ed") and len(word) > 3):
        return True
    import lemminflect

    return any(word in (f.lower() for f in lemminflect.getInflection(lemma, tag="VBN"))
               for lemma in lemminflect.getAllLemmas(word).get("VERB", ()))
