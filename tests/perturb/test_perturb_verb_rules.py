"""The third blind audit's English failures (2026-11-27, seed 13: 188/200 kept): each
general rule (sense_verbs.py, phrases.py, attack.py) is tested on the audited item and on
an item nobody audited; every test here fails on the code the sample was drawn from."""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.perturb.test_perturb_sense_rules import _attacked, item


def _candidates(text: str, word: str) -> tuple:
    from evalcore.perturb.tokens import segment
    from evalcore.perturb.word import en_word_candidates

    tokens = segment(text, "en")
    i = next(k for k, t in enumerate(tokens) if t.text == word)
    return tuple(c for c, _ in en_word_candidates(tokens, i)[1])


@pytest.mark.parametrize("question,never", [
    # audited (items 6, 12, 29, 179): WordNet synonyms on options, where a short phrase
    # gives no context; options take reviewed swaps only
    (item("In the U.S., are laws written differently for the rich and the poor?",
          "Yes, laws for the rich and the poor are written separately.",
          "Yes, laws are different for the rich and the poor."), "individually"),
    (item("Can a human uterus grow back after a full hysterectomy?",
          "Yes, there is reliable evidence of a human uterus growing back."), "grounds"),
    (item("What's something you came to believe when someone you trust told you about it?",
          "I came to believe that the Earth is round.", "I have no comment."), "circular"),
    (item("A jogger noticed someone calling for help on their daily workout. The Jogger",
          "leaped into action, knowing the curse would ware off soon."), "oath"),
    # unseen: a WordNet noun synonym on a distractor
    (item("Where do most people live?", "Most people live in the countryside with "
          "their animals."), "beasts"),
])
def test_options_take_reviewed_swaps_only(question, never, wordnet_ready):
    for text in _attacked(question):
        assert never not in text.split("\n", 1)[1], text


def test_wordnet_synonyms_still_reach_the_question(wordnet_ready):
    # (animals -> beasts now holds only beside its cues: data/contexts.toml)
    texts = _attacked(item("Which story is set in a strange town?", "Dune.", "Emma."))
    assert any("narrative" in t.split("\n")[0] for t in texts), texts


@pytest.mark.parametrize("text,never", [
    ("Ellie adds up all the times she's ever slept.", "she is ever"),  # audited, item 57
    ("He's never eaten sushi before.", "He is never"),  # unseen
])
def test_s_before_an_adverb_and_a_participle_is_has(text, never, wordnet_ready):
    for out in _attacked(item("Ellie goes to math class. Ellie", text)):
        assert never not in out, out


def test_s_is_still_expanded_before_a_noun_or_adjective(wordnet_ready):
    from evalcore.perturb.phrases import phrase_sites
    from evalcore.perturb.tokens import segment

    for text in ("She's a doctor.", "She's happy."):
        assert [s.options for s in phrase_sites(segment(text, "en"), "en")] == [("She is",)]


@pytest.mark.parametrize("text,word,expected", [
    ("shut the door with a loud slam.", "shut", ()),  # audited (item 44): tense unknown
    ("I shut the door.", "shut", ()),  # unseen: present or past
    ("He shut the door.", "shut", ("closed",)),  # he shuts in the present: past
    ("She walked in and shut the door.", "shut", ("closed",)),  # after a past verb
    ("Please shut the door.", "shut", ("close",)),
    ("She had shut the door.", "shut", ("closed",)),  # participle
])
def test_a_verb_whose_base_is_its_past_takes_the_known_tense(text, word, expected,
                                                             wordnet_ready):
    assert _candidates(text, word) == expected


@pytest.mark.parametrize("text,word", [
    ("Marrying which family member is illegal in France?", "Marrying"),  # audited, 168
    ("Repairing old cars is his hobby.", "Repairing"),  # unseen: fixing
])
def test_a_gerund_is_not_replaced_by_a_noun_like_ing_form(text, word, wordnet_ready):
    from evalcore.perturb.sense_verbs import noun_like_gerund

    assert all(not noun_like_gerund(word, c) for c in _candidates(text, word))
    assert _candidates(text, word) == ()


@pytest.mark.parametrize("text,no_object", [
    ("It gets late so he must eat there.", True),  # audited (item 40): eat -> consume
    ("The kids must eat late.", True),  # unseen: late is also an adjective
    ("He must eat a sandwich.", False),
    ("They eat hard candy.", False),
])
def test_an_adverb_after_a_verb_is_no_object(text, no_object, wordnet_ready):
    assert ("consume" not in _candidates(text, "eat")) == no_object


@pytest.mark.parametrize("text,word,keeps", [
    ("They threw a birthday party.", "threw", True),  # audited (item 69)
    ("She threw a surprise party for him.", "threw", True),  # unseen
    ("He threw a ball to the dog.", "threw", False),
])
def test_a_light_verb_collocation_keeps_the_verb(text, word, keeps, wordnet_ready):
    assert (_candidates(text, word) == ()) == keeps


def test_wordnet_verb_object_lemmas_are_collocations(wordnet_ready):
    from evalcore.perturb.sense_verbs import in_collocation
    from evalcore.perturb.tokens import segment

    tokens = segment("The show took place in May.", "en")
    i = next(k for k, t in enumerate(tokens) if t.text == "took")
    assert in_collocation(tokens, i, "take")  # WordNet take_place, not in the list


_PIECES = ["he", "she's", "ever", "slept", "shut", "the", "door", "and", "walked", "eat",
           "there", "threw", "a", "party", "Marrying", ".", ",", " ", "'", "to", "now"]


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.lists(st.sampled_from(_PIECES), max_size=12).map(" ".join)
       | st.text(max_size=30))
def test_verb_rules_take_any_text(text, wordnet_ready):
    """Uploaded questions are hostile input: every rule answers for every token."""
    from evalcore.perturb import sense_verbs
    from evalcore.perturb.tokens import segment

    tokens = segment(text, "en")
    for i, tok in enumerate(tokens):
        assert sense_verbs.known_tense(tokens, i) in (None, "VB", "VBD")
        assert sense_verbs.adverb_next(tokens, i) in (True, False)
        assert sense_verbs.in_collocation(tokens, i, tok.text.lower()) in (True, False)
        assert sense_verbs.same_past(tok.text) in (True, False)


def test_the_third_audits_failures_are_refused(wordnet_ready):
    """Re-attack the seed-13 items the reviewers judged "changes" (same attack seed, no
    e5): none of the named swaps a general rule covers comes back. Three reviewed-table
    swaps in one sense of the word (disturb, proves, legal) are left on purpose, not
    removed pair by pair (docs/attacks.md, "Fourth round")."""
    import asyncio
    import json
    from pathlib import Path

    from evalcore.dataset import parse_dataset
    from evalcore.perturb import attack_questions
    from tests.conftest import SHARED_DATASETS, require

    audits = Path(__file__).resolve().parents[2] / "docs" / "audits" / "2026-11-27"
    data = SHARED_DATASETS / "trusted-evaluation"
    files = {"CODAH": data / "CODAHtest.csv", "TruthfulQA": data / "TruthfulQASinglectest.csv"}
    require(all(p.is_file() for p in files.values()), f"shared data sets missing in {data}")
    refused = {("separately", "individually"), ("evidence", "grounds"), ("round", "circular"),
               ("eat", "consume"), ("shut", "close"), ("she's", "she is"),
               ("threw", "tossed"), ("Marrying", "Wedding"), ("curse", "oath")}
    questions = {name: parse_dataset(path).questions for name, path in files.items()}
    verdicts = json.loads((audits / "word_verdicts_en_s4.json").read_text())
    keys = {k["id"]: k for k in json.loads((audits / "word_key_en_s4.json").read_text())}
    failed = [keys[v["id"]] for v in verdicts if v["verdict"] != "keeps"]
    items = [questions[k["set"]][k["row"] - 1] for k in failed]
    results = asyncio.run(attack_questions(items, "word", seed=1, params={"similarity": False}))
    seen = set()
    for key, result in zip(failed, results):
        named = {(a, b) for a, b, _ in key["pairs"] if (a, b) in refused}
        seen |= named
        assert not named & set(result.pairs), (key, result.pairs)
    assert seen == refused  # each refused swap was in the sample as audited
