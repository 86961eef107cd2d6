"""Split a question into tokens and mark the ones no attack may touch.

Chinese goes through jieba (words + part-of-speech flags, HMM off: fast and stable),
English through a regex (whitespace is kept as tokens so that joining the tokens gives the
text back exactly). Numbers are cut out before jieba sees the text, so "9.1/7" or "80%"
stay one token. Protected: numbers and Chinese numerals, maths operators, units and measure
words (and any word right after a number), option labels (and glued options), named
entities (and a word before a name suffix: 光明 in 光明剧院), quoted titles (《》, quotes),
maths/science terms, words of the reference answer.

A private `jieba.Tokenizer` is used (`scorers.text.jieba_tokenizer`, ROUGE's too):
importing `synonyms` swaps jieba's global dictionary, and the same question must segment
the same way whether or not it was loaded.
"""
from __future__ import annotations

import functools
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

from evalcore.perturb.lexicon import load_lexicon, wordnet
from evalcore.perturb.wn_names import lemma_names
from evalcore.scorers.text import jieba_tokenizer

Language = Literal["zh", "en"]
Kind = Literal["word", "number", "punct", "space", "op"]

NUMBER = re.compile(r"\d+(?:[.．]\d+)?(?:\s?/\s?\d+(?:[.．]\d+)?)?\s?[%％‰]?")
MATH_OPS = frozenset("+-*/=×÷<>≤≥()（）%％^")
_EN_TOKEN = re.compile(
    r"\s+|\d+(?:[.,]\d+)*(?:/\d+)?%?|[A-Za-z]+(?:['’][A-Za-z]+)*|[^\sA-Za-z\d]")
ZH_ENTITY_FLAGS = frozenset({"nr", "nrt", "nrfg", "nrf", "ns", "nt", "nz"})
_SENTENCE_END = frozenset(".!?。！？")


@dataclass
class Token:
    """One piece of the text; the pieces joined give the text back."""

    text: str
    kind: Kind
    flag: str = ""
    """jieba part of speech (Chinese) or "" (English)."""
    protect: str = ""
    """Why no attack may change it ("number", "unit", "label", "options", "entity",
    "title", "term", "reference", "op"), or "" when it is free."""
    stop: bool = False
    """A function word: free for noise and typos, never replaced by a synonym."""

    @property
    def is_word(self) -> bool:
        return self.kind in ("word", "number")


@functools.lru_cache(maxsize=1)
def _pos_tokenizer() -> Any:
    """jieba.posseg over a private dictionary instance (see the module docstring): the
    one ROUGE's words are cut with (`scorers.text.jieba_tokenizer`), so the process loads
    jieba's dictionary once.

    Importing `jieba.posseg` reads the dictionary's 349,046 part-of-speech tags for
    jieba's global tokenizer; when this import is the first and that dictionary is still
    jieba's own, the table is copied instead of read a second time (~0.25 s of CPU)."""
    fresh = "jieba.posseg" not in sys.modules
    import jieba.posseg

    tokenizer = jieba_tokenizer()
    if fresh and jieba.posseg.dt.tokenizer.dictionary == tokenizer.dictionary:
        pos = jieba.posseg.POSTokenizer.__new__(jieba.posseg.POSTokenizer)
        pos.tokenizer, pos.word_tag_tab = tokenizer, dict(jieba.posseg.dt.word_tag_tab)
        return pos
    return jieba.posseg.POSTokenizer(tokenizer)


def zh_word_flag(word: str) -> str:
    """jieba's dictionary part of speech of a Chinese word ("" if unknown)."""
    return _pos_tokenizer().word_tag_tab.get(word, "")


def option_spans(text: str) -> tuple[list[tuple[int, int]], tuple[int, int] | None]:
    """Spans of option labels, and the glued-options region (first label to the end).

    The region exists only when two or more labels are found, so a stray "Plan A." is not
    taken for a list of options.
    """
    lex = load_lexicon()
    labels = sorted({m.span() for p in lex.option_patterns for m in p.finditer(text)})
    region = (labels[0][0], len(text)) if len(labels) >= 2 else None
    return labels, region


def segment(text: str, language: Language, reference_words: Iterable[str] = ()) -> list[Token]:
    """Tokens of `text` with their protection marked."""
    tokens = _segment_zh(text) if language == "zh" else _segment_en(text)
    _mark(tokens, text, language, frozenset(w.lower() for w in reference_words))
    return tokens


def _segment_zh(text: str) -> list[Token]:
    lex = load_lexicon()
    tokens: list[Token] = []
    pos = 0
    for match in NUMBER.finditer(text):
        tokens.extend(_jieba_tokens(text[pos:match.start()]))
        tokens.append(Token(match.group(), "number", "m"))
        pos = match.end()
    tokens.extend(_jieba_tokens(text[pos:]))
    for tok in tokens:
        if tok.kind == "word" and (tok.flag == "m" or all(ch in lex.zh_numeral_chars
                                                          for ch in tok.text)):
            tok.kind = "number"
    return tokens


def _jieba_tokens(chunk: str) -> list[Token]:
    if not chunk:
        return []
    out = []
    for pair in _pos_tokenizer().cut(chunk, HMM=False):
        word, flag = pair.word, pair.flag
        if word.isspace():
            out.append(Token(word, "space"))
        elif all(ch in MATH_OPS for ch in word):
            out.append(Token(word, "op", flag))
        elif not any(ch.isalnum() for ch in word):
            out.append(Token(word, "punct", flag))
        else:
            out.append(Token(word, "word", flag))
    return out


def _segment_en(text: str) -> list[Token]:
    tokens = []
    for piece in _EN_TOKEN.findall(text):
        if piece.isspace():
            tokens.append(Token(piece, "space"))
        elif piece[0].isdigit():
            tokens.append(Token(piece, "number"))
        elif piece[0].isalpha():
            tokens.append(Token(piece, "word"))
        elif piece in MATH_OPS:
            tokens.append(Token(piece, "op"))
        else:
            tokens.append(Token(piece, "punct"))
    return tokens


_QUOTES = re.compile(r"《[^》]*》|「[^」]*」|“[^”]*”|\"[^\"\n]*\"|『[^』]*』"
                     r"|(?<![A-Za-z])'[^'\n]+'(?![A-Za-z])|(?<![A-Za-z])‘[^‘\n]+?’(?![A-Za-z])")
"""Quoted titles and quotations: 《book》, “a name”, "a quote", 'a word' are kept as
written (an apostrophe inside a word, "don't", "students'", opens or closes none)."""


@functools.lru_cache(maxsize=1)
def _zh_terms() -> re.Pattern[str]:
    """Every maths/science term of the lexicon, longest first."""
    terms = sorted(load_lexicon().zh_terms, key=len, reverse=True)
    return re.compile("|".join(map(re.escape, terms)) or "(?!)")


def _next_word(tokens: list[Token], i: int) -> Token | None:
    for tok in tokens[i + 1:]:
        if tok.kind != "space":
            return tok
    return None


def _after_number(tokens: list[Token], i: int) -> bool:
    for tok in reversed(tokens[:i]):
        if tok.kind != "space":
            return tok.kind == "number"
    return False


def _en_term(low: str, terms: frozenset[str]) -> bool:
    return low in terms or low[:-1] in terms or (low.endswith("es") and low[:-2] in terms)


def _mark(tokens: list[Token], text: str, language: Language, reference: frozenset[str]) -> None:
    lex = load_lexicon()
    labels, region = option_spans(text)
    quoted = [m.span() for m in _QUOTES.finditer(text)]
    terms = [m.span() for m in _zh_terms().finditer(text)] if language == "zh" else []
    start = 0
    for i, tok in enumerate(tokens):
        end = start + len(tok.text)
        low = tok.text.lower()
        if region and end > region[0]:
            tok.protect = "options"
        elif any(s < end and start < e for s, e in labels):
            tok.protect = "label"
        elif tok.kind == "number":
            tok.protect = "number"
        elif tok.kind == "op":
            tok.protect = "op"
        elif tok.kind == "word" and any(s < end and start < e for s, e in quoted):
            tok.protect = "title"
        elif tok.kind == "word" and any(s < end and start < e for s, e in terms):
            tok.protect = "term"  # 最小 of 最小公倍数, however jieba cut it
        elif tok.kind == "word" and _after_number(tokens, i):
            tok.protect = "unit"  # 45分, 3 dozen: whatever counts the number
        elif language == "zh" and tok.kind == "word":
            nxt = _next_word(tokens, i)
            if tok.text in lex.zh_units or tok.flag == "q":
                tok.protect = "unit"
            elif tok.flag in ZH_ENTITY_FLAGS:
                tok.protect = "entity"
            elif nxt is not None and nxt.text in lex.zh_name_suffixes:
                tok.protect = "entity"  # 光明 in 光明剧院
            elif lex.is_zh_term(tok.text):
                tok.protect = "term"
            elif tok.text in reference:
                tok.protect = "reference"
            tok.stop = tok.text in lex.zh_stop
        elif language == "en" and tok.kind == "word":
            if low in lex.en_number_words:
                tok.kind, tok.protect = "number", "number"
            elif low in lex.en_units:
                tok.protect = "unit"
            elif tok.text[0].isupper() and tok.text != "I" and not _common_start(tokens, i):
                tok.protect = "entity"  # names, and capitals inside a sentence
            elif _en_term(low, lex.en_terms):
                tok.protect = "term"
            elif low in reference:
                tok.protect = "reference"
            tok.stop = low in lex.en_stop
        start = end


def _common_start(tokens: list[Token], i: int) -> bool:
    """A capitalised word that only starts its sentence: its lowercase form is a common
    word (WordNet's first sense of it is written lower-case, lemminflect never tags it as a
    name) and no capitalised word follows ("Sugar may cause", "Foxes should not"; not
    "Einstein", "Paris", "NASA", "Bill Gates")."""
    text = tokens[i].text
    if not (text[1:].islower() or len(text) == 1):
        return False
    for tok in reversed(tokens[:i]):
        if tok.kind == "space":
            if "\n" in tok.text:
                break
            continue
        if tok.text not in _SENTENCE_END and tok.text not in ('"', "“"):
            return False
        break
    nxt = _next_word(tokens, i)
    if nxt is not None and nxt.kind == "word" and nxt.text[:1].isupper():
        return False  # "Bill Gates", "Will Smith": a name goes on
    return _common_word(text.lower())


@functools.lru_cache(maxsize=20_000)
def _common_word(low: str) -> bool:
    import lemminflect

    lemmas = lemminflect.getAllLemmas(low)
    if not lemmas or "PROPN" in lemmas:
        return False
    forms = {low, *(l for ls in lemmas.values() for l in ls)}  # children -> child
    every = lemma_names(low)  # nltk's synsets' lemma names, without importing nltk
    if every is None:
        every = [l.name() for s in wordnet().synsets(low) for l in s.lemmas()]
    names = [n for n in every if n.lower() in forms]
    return bool(names) and names[0].islower()  # its first sense: fox, not Paris


def entities(text: str, language: Language) -> list[str]:
    """Named entities a reviewer would miss if they changed: jieba nr/ns/nt/nz words;
    in English, capitalised words that do not start a sentence (and are not "I")."""
    if language == "zh":
        return [t.text for t in _segment_zh(text) if t.flag in ZH_ENTITY_FLAGS]
    out, start = [], True
    for tok in _segment_en(text):
        if tok.kind == "space":
            continue
        if tok.kind == "word" and tok.text[0].isupper() and tok.text != "I" and not start:
            out.append(tok.text)
        start = tok.text in _SENTENCE_END
    return out


def count_words(tokens: list[Token], language: Language) -> int:
    """Words for the method's edit-count rule: jieba words (zh) or whitespace words (en),
    punctuation-only pieces not counted."""
    if language == "zh":
        return sum(1 for t in tokens if t.is_word)
    text = "".join(t.text for t in tokens)
    return sum(1 for w in text.split() if any(ch.isalnum() for ch in w))
