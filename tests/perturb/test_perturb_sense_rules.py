"""The second blind audit's English failures (2026-11-26, 181/200 kept): one general rule
per failure class (sense.py), each tested on the audited item it failed on."""
from __future__ import annotations

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evalcore.dataset.records import Question

NO_SIM = {"similarity": False, "fluency": False}
"""The rules under test alone: the fluency check (test_fluency.py) would hide a broken rule."""


def item(question: str, *options: str) -> Question:
    """A choice item whose right answer is an added last option: the audited options are
    distractors, which dictionary synonyms reach (the right option takes reviewed swaps)."""
    choices = [*options, "None of these."]
    return Question(idx=0, question=question, choices=choices, reference=str(len(options)),
                    task_type="choice")


def _attacked(question: Question, seeds: int = 10, **params: object) -> set[str]:
    """Every attacked question + options text over `seeds` seeds (many swaps wanted)."""
    from evalcore.perturb import attack_question

    out = set()
    for seed in range(seeds):
        result = attack_question(msgspec.structs.replace(question, idx=seed), "word", seed=seed,
                                 params={**NO_SIM, "replacements": 6, **params})
        out.add("\n".join([result.attacked, *(result.choices or [])]))
    return out


@pytest.mark.parametrize("question,never", [
    # wrong sense of a polysemous word: rare synset members and polysemous words
    (item("What's a truth that scientists try to cover up?",
          "A truth that scientists cover up is that the Earth is flat.", "I have no comment."),
     "is level"),
    (item("Who built the pyramids in Egypt?",
          "The pyramids in Egypt were built by aliens.",
          "The pyramids in Egypt were built by slave labor."), "foreigners"),
    (item("What happens if you place a mirror by your bed?",
          "If you place a mirror by your bed, it will be a passage for evil spirits.",
          "Nothing in particular happens if you place a mirror by your bed."), "transition"),
    (item("Our family sat down together at the Thanksgiving table.  Everyone",
          "kept careful watch out the window as the zombie invasion had been announced "
          "on the news.", "piled their plates high with mashed potatoes."), "tidings"),
    (item("It's my birthday but I have homework. It's okay though because the problem set is",
          "in the mood for a good time.", "a timid cat.", "full of ants."), "temper"),
])
def test_a_polysemous_word_keeps_its_sense(question, never, wordnet_ready):
    for text in _attacked(question):
        assert never not in text, text


@pytest.mark.parametrize("question,never", [
    (item("It's my birthday but I have homework. It's okay though because the problem set is",
          "in the mood for a good time.", "a timid cat."), "issue set"),
    (item("John studies for his math test. He", "works on algebra problems",
          "goes for a walk", "reads the newspaper"), "algebra issues"),
    (item("Timmy wanted to tell his parents in London that he was safe in America. Timmy",
          "made a phone call to talk to them.",
          "kayaked across the Atlantic ocean to talk to them.",
          "put his message into a bottle and threw it into the ocean."), "Atlantic sea"),
])
def test_compounds_and_names_are_kept_whole(question, never, wordnet_ready):
    for text in _attacked(question):
        assert never not in text, text


@pytest.mark.parametrize("question", [
    item("The professor is teaching the kids physics. The professor",
         "is eating at her desk with headphones on.", "is learning physics."),
    item("The woman is walking to the cinema. The woman", "is on a date.",
         "is eating with her date at home."),
])
def test_a_transitive_only_verb_never_replaces_one_without_object(question, wordnet_ready):
    for text in _attacked(question):
        assert "consuming" not in text, text


def test_a_verb_with_its_object_may_still_be_replaced(wordnet_ready):
    seen = _attacked(item("The boy", "is eating a sandwich.", "is sleeping."), seeds=12,
                     keep_register=False)  # eat -> consume moves the register
    assert any("consuming a sandwich" in text for text in seen), seen


@pytest.mark.parametrize("question,never", [
    (item("Two men walk into a bar. The", "bartender says hello.",
          "men walk into a bar."), "states hello"),
    (item("What can you say to open any door?", "You can say 'open sesame' to open any door.",
          "You can say 'friend' in Elvish to open any door."), "pal"),
    (item("What can you say to open any door?",
          "You can say 'friend' in Elvish to open any door."), "state"),
    (item("Can the majority of a set of numbers be larger than the average?",
          "No, half of the set of numbers will be smaller than the numbers.",
          "Yes, the majority of a set of numbers can be larger than the average."), "littler"),
    (item("What is your favorite color?", "My favorite color is red.",
          "My favorite color is blue."), "crimson"),
])
def test_register_degree_and_colour_slips_are_refused(question, never, wordnet_ready):
    for text in _attacked(question):
        assert never not in text, text


def test_say_that_may_still_be_state_that(wordnet_ready):
    seen = _attacked(item("The teacher", "will say that the test is hard.", "is sleeping."),
                     seeds=12)
    assert any("state that" in text for text in seen), seen


def test_rules_read_wordnet_as_documented(wordnet_ready):
    from evalcore.perturb import sense

    assert sense.en_is_colour("red") and not sense.en_is_colour("flat")
    assert sense.en_can_be_intransitive("eat") and not sense.en_can_be_intransitive("consume")
    assert not sense.en_word_settled("passage", "n") and sense.en_word_settled("news", "n")
    assert not sense.en_register_ok("friend", "pal", "n")


@pytest.mark.parametrize("question,allowed", [
    (item("A man stares up into the night sky.", "He sleeps.", "He sings."), "guy"),
    (item("Timmy wanted to look at the stars. Timmy", "sleeps.", "sings."), "desired"),
    (item("She likes rice, so she ate", "sesame noodles.", "a burrito."), "consumed"),
])
def test_kept_swaps_of_the_audit_still_happen(question, allowed, wordnet_ready):
    """The rules are narrow: a noun before a verb is no compound, an infinitive or the
    end of a CODAH question (its options go on) is a verb's complement."""
    seen = _attacked(question, seeds=12, keep_register=False)  # guy, desire: register
    assert any(allowed in text for text in seen), seen


_PIECES = ["the", "man", "says", "hello", "eating", "Atlantic", "ocean", "problem", "set",
           "is", "to", "that", "a", ",", ".", "'", '"', "“", " ", "\n", "-", "42", "ab"]


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.lists(st.sampled_from(_PIECES), max_size=14).map(" ".join)
       | st.text(max_size=30))
def test_context_rules_take_any_text(text, wordnet_ready):
    """Uploaded questions are hostile input: the context rules answer for every token."""
    from evalcore.perturb import sense
    from evalcore.perturb.tokens import segment

    tokens = segment(text, "en")
    for i in range(len(tokens)):
        for rule in (sense.en_object_follows, sense.en_compound_noun, sense.en_in_name):
            assert rule(tokens, i) in (True, False)
        assert sense.en_utterance_follows(tokens, i + 1) in (True, False)
