"""All 500 Math23K and CODAH questions, character and word level: every number and option
kept unless flagged, no glued choices, English swaps keep part of speech, no antonyms.
Checked here with our own regexes, not only through guard.py."""
from __future__ import annotations

import asyncio
import copy
import re
from collections import Counter

import pytest

from evalcore.dataset import parse_dataset
from evalcore.perturb import attack_questions

ARABIC = re.compile(r"\d+(?:\.\d+)?")
ZH_NUMERAL = re.compile(r"[零〇一二两三四五六七八九十百千万亿半]+")
CHAR_PARAMS = [{"similarity": False},
               {"similarity": False, "ops": ["insert", "swap", "drop", "keyboard"]}]


@pytest.fixture(scope="module")
def math23k(shared_datasets):
    return parse_dataset(shared_datasets / "trusted-evaluation" / "Math23Ktest.csv").questions


@pytest.fixture(scope="module")
def codah(shared_datasets):
    return parse_dataset(shared_datasets / "trusted-evaluation" / "CODAHtest.csv").questions


def _numbers_kept(original: str, attacked: str) -> bool:
    if Counter(ARABIC.findall(original)) != Counter(ARABIC.findall(attacked)):
        return False
    runs = lambda t: Counter(r for r in ZH_NUMERAL.findall(t) if r != "一")
    return runs(original) == runs(attacked)


def _check(questions, results, *, max_flagged: float) -> None:
    assert len(results) == len(questions) == 500
    flagged = 0
    for q, r in zip(questions, results):
        serious = set(r.flags) - {"unchanged"}
        if serious:
            flagged += 1
            continue
        assert _numbers_kept(q.question, r.attacked), (q.idx, q.question, r.attacked)
        for choice in q.choices:  # options are never glued into the question
            assert choice not in r.attacked or choice in q.question, (q.idx, r.attacked)
        assert "choice0" not in r.attacked
    assert flagged <= max_flagged * len(questions), flagged


@pytest.mark.parametrize("params", CHAR_PARAMS, ids=["insert", "all-ops"])
def test_char_attack_math23k(math23k, params):
    before = [copy.deepcopy(q) for q in math23k]
    results = asyncio.run(attack_questions(math23k, "char", seed=0, params=params))
    _check(math23k, results, max_flagged=0.02)
    assert math23k == before  # nothing mutated: choices, references untouched
    assert sum(r.attack_num for r in results) > 900  # the rule gives ~2 per question


@pytest.mark.parametrize("params", CHAR_PARAMS, ids=["insert", "all-ops"])
def test_char_attack_codah(codah, params):
    results = asyncio.run(attack_questions(codah, "char", seed=0, params=params))
    _check(codah, results, max_flagged=0.02)
    assert sum(r.attack_num for r in results) > 900


def test_word_attack_math23k(math23k, zh_synonyms_ready):
    from evalcore.perturb.lexicon import load_lexicon

    results = asyncio.run(attack_questions(math23k, "word", seed=0, params={"similarity": False}))
    _check(math23k, results, max_flagged=0.02)
    lex = load_lexicon()
    pairs = [p for r in results for p in r.pairs]
    assert len(pairs) > 300  # the attack does attack
    for old, new in pairs:
        assert old != new and not lex.flips_zh_meaning(old, new), (old, new)
        assert not ZH_NUMERAL.search(new.replace(old, "")) or ZH_NUMERAL.search(old)
    for q, r in zip(math23k, results):  # pairs say exactly what changed
        text = r.attacked
        for old, new in reversed(r.pairs):
            assert new in text
        # attack_num counts places, as the method's does (a word replaced at its 4
        # occurrences is 4 edits); the rule stops once the places reach `wanted`
        placed = sum(x["occurrences"] for x in r.details["replacements"])
        assert r.attack_num == placed and len(r.pairs) <= r.details["wanted"]
        if r.pairs:
            last = r.details["replacements"][-1]["occurrences"]
            assert placed - last < r.details["wanted"]


def test_word_attack_codah(codah, wordnet_ready):
    import lemminflect

    from evalcore.perturb.lexicon import load_lexicon
    from evalcore.perturb.lexicon import wordnet

    # The properties checked here do not depend on the fluency check (it only drops swaps);
    # scoring every swap of 500 items with the model is test_fluency's and the bench's job.
    results = asyncio.run(attack_questions(codah, "word", seed=0,
                                           params={"similarity": False, "fluency": False}))
    _check(codah, results, max_flagged=0.02)
    wn, lex = wordnet(), load_lexicon()
    details = [d for r in results for d in r.details["replacements"] if d["pos"] != "phrase"]
    assert len(details) > 150  # word swaps; phrase swaps are tested in test_perturb_phrases
    for d in details:
        old, new, upos = d["before"], d["after"], d["pos"]
        assert upos in lemminflect.getAllLemmas(new), (old, new, upos)  # same part of speech
        lemma = lemminflect.getLemma(old, upos)[0]
        antonyms = {a.name() for s in wn.synsets(lemma) for l in s.lemmas()
                    for a in l.antonyms()}
        assert lemminflect.getLemma(new, upos)[0] not in antonyms, (old, new)
        assert not lex.is_antonym(lemma, lemminflect.getLemma(new, upos)[0]), (old, new)
    bad = {("points", "gunpoint"), ("will", "volition"), ("fail", "miscarry")}
    assert not bad & {(d["before"], d["after"]) for d in details}
