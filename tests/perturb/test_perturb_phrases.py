"""Phrase swaps of the word attack: contractions both ways, reviewed multi-word paraphrases,
protected words kept, and the recorded pairs say exactly what changed."""
from __future__ import annotations

import random

import pytest

from evalcore.perturb.phrases import phrase_sites
from evalcore.perturb.tokens import segment


def _sites(text: str, language: str = "en", reference: tuple[str, ...] = ()) -> dict:
    return {s.before: s.options for s in phrase_sites(segment(text, language, reference),
                                                       language)}


def test_round_9_function_phrases():
    """Second swaps for short sentences: reviewed function phrases, the longest first."""
    assert _sites("The woman is now drying the dog.") == {"is now": ("is currently",)}
    assert _sites("The dog eats a lot of food.") == {"a lot of": ("lots of",)}
    assert _sites("He fell asleep and then woke up.") == {
        "fell asleep": ("dozed off",), "and then": ("and after that",), "woke up": ("awoke",)}
    assert _sites("Yes, I would.") == {}  # a contraction needs a word after it


def test_contractions_both_ways_keep_case_and_apostrophe():
    assert _sites("The dog does not like it. Don't go!") == {
        "does not": ("doesn't",), "Don't": ("Do not",)}
    assert _sites("I am sure it’s late.") == {"I am": ("I'm",), "it’s": ("it is",)}
    assert _sites("What is the capital? It cannot be.") == {
        "What is": ("What's",), "cannot": ("can't",)}


@pytest.mark.parametrize("text", [
    "Yes, I am.",                       # a contraction needs a word after it
    "It's been a long day.",            # 's before a participle is "has"
    "What's happened to him?",
    "Ask Will not Bob.",                # a capitalised word inside a sentence may be a name
    "The 3 dozen eggs.",
])
def test_no_site_where_a_swap_would_break_the_sentence(text):
    assert _sites(text) == {}


def test_reference_words_survive_phrase_swaps():
    assert _sites("What happens if you eat it?", reference=("happens",)) == {
        "What happens if": ("What happens when",)}
    assert _sites("The bird is able to fly.") == {"is able to": ("can",)}
    assert _sites("The bird is able to fly.", reference=("able",)) == {}


def test_zh_phrases_span_several_tokens():
    found = _sites("照这样的速度，还剩多少千米？", "zh")
    assert set(found["照这样"]) == {"按这样", "按照这样"}


@pytest.mark.parametrize("language,text", [
    ("en", "I am sure that he is not able to come, and it is true that we do not know."),
    ("zh", "照这样计算，甲队修完这条路还剩多少米？"),
])
def test_pairs_rebuild_the_original(language, text, wordnet_ready, zh_synonyms_ready):
    from evalcore.perturb.swaps import word_attack

    phrases = 0
    for seed in range(8):
        out, pairs, details = word_attack(segment(text, language), language,
                                          random.Random(seed), replacements=4)
        phrases += sum(1 for d in details["replacements"] if d["pos"] == "phrase")
        rebuilt = out
        for old, new in reversed(pairs):
            at = rebuilt.find(new)
            assert at >= 0, (new, out)
            rebuilt = rebuilt[:at] + old + rebuilt[at + len(new):]
        assert rebuilt == text, (pairs, out)
        assert len(dict(pairs)) == len(set(pairs))
    assert phrases >= 4  # phrases are actually chosen


def test_phrase_tables_bring_in_nothing_forbidden():
    from evalcore.perturb.lexicon import load_lexicon

    lex = load_lexicon()
    assert len(lex.en_phrases) >= 60 and lex.zh_phrases
    for phrase, options in lex.zh_phrases.items():
        for option in options:
            assert not lex.flips_zh_meaning(phrase, option), (phrase, option)
            assert not (set(option) - set(phrase)) & lex.zh_numeral_chars, (phrase, option)
            assert not lex.blocked(option, "zh"), option
    for phrase, options in lex.en_phrases.items():
        assert phrase == phrase.lower()
        for option in options:
            assert not any(lex.blocked(w, "en") for w in option.split()), option
            assert _negations(phrase) == _negations(option), (phrase, option)


def _negations(text: str) -> int:
    """Negations in a phrase: "not", "cannot", and every n't ("whether or not" has none)."""
    words = text.lower().replace("or not", "").replace("can't", "can not").replace("won't", "will not").split()
    return sum(w in ("not", "cannot", "never", "no") or w.endswith("n't") for w in words)
