"""Word lists for the attacks (noise, stop words, units, antonyms, domain terms) from
data/lexicon.toml, and the words no swap may bring in from data/blocklist.toml.

The lists are data so a reviewer can extend them without touching the algorithms. Loaded
once per process.
"""
from __future__ import annotations

import functools
import re
import tomllib
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evalcore.resources import ensure_language_env

LEXICON_PATH = Path(__file__).with_name("data") / "lexicon.toml"
BLOCKLIST_PATH = Path(__file__).with_name("data") / "blocklist.toml"


@dataclass(frozen=True)
class Lexicon:
    """Everything data/lexicon.toml holds, as sets ready for lookups."""

    zh_noise: tuple[str, ...]
    zh_stop: frozenset[str]
    zh_negations: frozenset[str]
    zh_units: frozenset[str]
    zh_numeral_chars: frozenset[str]
    zh_antonym_chars: frozenset[tuple[str, str]]
    zh_antonyms: frozenset[tuple[str, str]]
    en_noise: tuple[str, ...]
    en_stop: frozenset[str]
    en_number_words: frozenset[str]
    en_units: frozenset[str]
    en_antonyms: frozenset[tuple[str, str]]
    en_avoid: frozenset[tuple[str, str]]
    option_patterns: tuple[re.Pattern[str], ...]
    zh_terms: frozenset[str] = frozenset()
    zh_name_suffixes: frozenset[str] = frozenset()
    en_terms: frozenset[str] = frozenset()
    zh_block_chars: frozenset[str] = frozenset()
    zh_block_words: tuple[str, ...] = ()
    en_block: frozenset[str] = frozenset()
    zh_paraphrases: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """Reviewed replacements, word -> candidates (they may replace stop words)."""
    en_paraphrases: dict[tuple[str, str], tuple[str, ...]] = field(default_factory=dict)
    """(lemma, part of speech) -> replacement lemmas."""
    zh_quantifier_chars: frozenset[str] = frozenset()
    zh_avoid: frozenset[tuple[str, str]] = frozenset()
    zh_not_before: frozenset[tuple[str, str]] = frozenset()
    """(word, next token): the word is not replaced before it (男生 before 装)."""
    zh_not_after: frozenset[tuple[str, str]] = frozenset()
    """(previous token, word): the word is not replaced after it (每把椅子, 的和)."""
    zh_before_noun: frozenset[str] = frozenset()
    """Table words replaced only before a noun (这个班 -> 该班)."""
    zh_phrases: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """Reviewed multi-token paraphrases (phrases.py), lower-cased phrase -> replacements."""
    en_phrases: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """Contractions both ways and multi-word paraphrases (phrases.py)."""
    en_not_before: frozenset[tuple[str, str]] = frozenset()
    """(lemma, next word): the lemma is not replaced before that word (happen to)."""
    en_fixed_phrases: tuple[str, ...] = ()
    """Set phrases WordNet lacks as lemmas ("happy birthday"): sense_context.py."""
    en_collocations: frozenset[tuple[str, str]] = frozenset()
    """(verb lemma, object noun) light-verb collocations: the verb keeps (sense_verbs.py)."""
    en_selection: dict[str, tuple[str, str]] = field(default_factory=dict)
    """"lemma/POS" or a phrase -> (subject | object, what the neighbour noun must be:
    living / physical, or "-living" for must not be): sense.en_selection_ok."""

    def is_zh_term(self, word: str) -> bool:
        """A maths/science term, or a word holding one (最小公倍数, 年利率)."""
        return word in self.zh_terms or any(len(t) > 1 and t in word for t in self.zh_terms)

    def blocked(self, candidate: str, language: str) -> bool:
        """A candidate no swap may introduce (offensive or sexual vocabulary)."""
        if language == "zh":
            return bool(set(candidate) & self.zh_block_chars) or any(
                w in candidate for w in self.zh_block_words)
        return candidate.lower() in self.en_block

    def is_antonym(self, a: str, b: str) -> bool:
        """True when `a` and `b` are listed antonyms (either language, either order)."""
        pair = (a.lower(), b.lower())
        return pair in self.zh_antonyms or pair in self.en_antonyms

    def flips_zh_meaning(self, word: str, candidate: str) -> bool:
        """A Chinese candidate that brings in a negation or an opposite character.

        增加 -> 减少 (增/减), 进口 -> 出口 (进/出), 容易 -> 不易 (不): each character new in the
        candidate is checked against the characters only the original has.
        """
        if self.is_antonym(word, candidate):
            return True
        added = set(candidate) - set(word)
        if added & self.zh_negations:
            return True
        removed = set(word) - set(candidate)
        return any((a, b) in self.zh_antonym_chars for a in removed for b in added)


def _pairs(rows: list[list[str]]) -> frozenset[tuple[str, str]]:
    out: set[tuple[str, str]] = set()
    for a, b in rows:
        out.add((a.lower(), b.lower()))
        out.add((b.lower(), a.lower()))
    return frozenset(out)


@functools.lru_cache(maxsize=1)
def load_lexicon(path: Path = LEXICON_PATH, blocklist: Path = BLOCKLIST_PATH) -> Lexicon:
    """Parse the TOML files once."""
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    block = tomllib.loads(blocklist.read_text(encoding="utf-8"))
    zh, en = data["zh"], data["en"]
    return Lexicon(
        zh_noise=tuple(zh["noise_particles"]) + tuple(zh["noise_punct"]),
        zh_stop=frozenset(zh["stop"]),
        zh_negations=frozenset(zh["negations"]),
        zh_units=frozenset(zh["units"]),
        zh_numeral_chars=frozenset(zh["numeral_chars"]),
        zh_antonym_chars=_pairs(zh["antonym_chars"]),
        zh_antonyms=_pairs(zh["antonyms"]),
        en_noise=tuple(en["noise_letters"]) + tuple(en["noise_punct"]),
        en_stop=frozenset(en["stop"]),
        en_number_words=frozenset(en["number_words"]),
        en_units=frozenset(en["units"]),
        en_antonyms=_pairs(en["antonyms"]),
        en_avoid=frozenset((a.lower(), b.lower()) for a, b in en.get("avoid", [])),
        option_patterns=tuple(re.compile(p) for p in data["options"]["label_patterns"]),
        zh_terms=frozenset(zh.get("terms", [])),
        zh_name_suffixes=frozenset(zh.get("name_suffixes", [])),
        en_terms=frozenset(w.lower() for w in en.get("terms", [])),
        zh_block_chars=frozenset(block["zh"]["chars"]),
        zh_block_words=tuple(block["zh"]["words"]),
        en_block=frozenset(w.lower() for w in block["en"]["words"]),
        zh_quantifier_chars=frozenset(zh.get("quantifier_chars", [])),
        zh_avoid=frozenset((a, b) for a, b in zh.get("avoid", [])),
        zh_paraphrases=_table([(a, b) for a, b in zh.get("paraphrases", [])]),
        en_paraphrases=_table([((a, pos), b) for a, b, pos in en.get("paraphrases", [])]),
        zh_before_noun=frozenset(zh.get("before_noun", [])),
        zh_not_before=frozenset((a, b) for a, b in zh.get("not_before", [])),
        zh_not_after=frozenset((a, b) for a, b in zh.get("not_after", [])),
        zh_phrases=_table([(a, b) for a, b in zh.get("phrases", [])]),
        en_not_before=frozenset((a, b) for a, b in en.get("not_before", [])),
        en_phrases=_table([(a.lower().replace("’", "'"), b) for a, b in en.get("phrases", [])]),
        en_fixed_phrases=tuple(p.lower() for p in en.get("fixed_phrases", [])),
        en_collocations=frozenset((a, b) for a, b in en.get("collocations", [])),
        en_selection=_selection(en.get("selection", {})),
    )


def _selection(rows: dict[str, list[str]]) -> dict[str, tuple[str, str]]:
    """lexicon.toml `en.selection`, checked: a typo must not silently allow every swap."""
    out = {}
    for key, (role, need) in rows.items():
        if role == "next" and (need.isalpha() or need == "-utterance"):
            out[key.lower()] = (role, need.lower())  # the word right after: say -> state + that
            continue
        if role not in ("subject", "object") or need.lstrip("-") not in ("living", "physical"):
            raise ValueError(f"lexicon.toml en.selection {key!r}: {role!r} {need!r}; use "
                             "subject|object and living|physical (or -living|-physical), "
                             "or next and a word")
        out[key.lower()] = (role, need)
    return out


def _table(rows: list[tuple[Any, str]]) -> dict[Any, tuple[str, ...]]:
    out: dict[Any, list[str]] = {}
    for key, value in rows:
        out.setdefault(key, []).append(value)
    return {k: tuple(v) for k, v in out.items()}


@functools.lru_cache(maxsize=1)
def wordnet() -> Any:
    """NLTK's WordNet, loaded once from evalcore's language data (no download). The English
    sense rules (`sense`) and the candidates (`word`) both read it: it lives here, below
    both, so neither imports the other for it."""
    ensure_language_env()
    import nltk.data
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

    class _WordNet(WordNetCorpusReader):
        def map_wn(self, version: str = "wordnet") -> None:
            """No offset map. NLTK 3.9+ compares the loaded version ("3.0") with the corpus
            name ("wordnet") and so maps WordNet onto itself on every load, reading
            index.sense twice: 2 of the 4.5 s of CPU a load took (importing nltk included). The
            map serves only the multilingual data, and no OMW reader is given here."""

    try:
        root = nltk.data.find("corpora/wordnet")
    except LookupError:
        root = nltk.data.find("corpora/wordnet.zip/wordnet/")
    with warnings.catch_warnings():  # "multilingual functions are not available": none used
        warnings.simplefilter("ignore", UserWarning)
        return _WordNet(root, None)
