"""Swaps a native reader rejects in their sentence, one sentence per failure class of the
blind audit (fixed pairings, another thing or person, wrong sense, degree forms, register).

Each sentence is attacked with every word allowed to change, under several seeds: the
swap named must never be made. These need the embedded model (the fluency check)."""
from __future__ import annotations

import random

import pytest

from evalcore.perturb.swaps import word_attack
from evalcore.perturb.tokens import segment

pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("wordnet_ready")]

SEEDS = range(4)

CASES = [
    # fixed pairings
    ("Tom grabbed the remote and changed the channel to the news.", "changed", "altered"),
    ("The driver reduced speed before the sharp curve.", "reduced", "lowered"),
    ("After finishing her first slice, Maria asked for another one.", "finishing",
     "completing"),
    # another thing or person
    ("She finally got her license after failing the driving test twice.", "license",
     "permit"),
    ("The racehorse was sick, so its owner called the doctors at the stable.", "doctors",
     "physicians"),
    ("The student asked the professor a question about mechanical engineering.", "student",
     "pupil"),
    # wrong sense or register for the context
    ("Lions are big cats that live in prides on the savanna.", "live in", "reside in"),
    ("Penguins are animals that huddle together to stay warm.", "animals", "beasts"),
    ("Rats and mice are animals that squeeze through tiny holes.", "animals", "beasts"),
    ("You got a new puppy today, so you are happy.", "happy", "glad"),
    ("The class went on a trip to the zoo last Friday.", "trip", "journey"),
    # degree forms
    ("This is the most difficult puzzle in the book.", "difficult", "hard"),
]

REGISTER = [
    ("I want a new bike for my birthday.", "want", "desire"),
    ("The kids eat pizza every Friday night.", "eat", "consume"),
    ("He played with a toy car on the kitchen floor.", "car", "automobile"),
]


def _pairs(sentence: str, **kwargs: object) -> set[tuple[str, str]]:
    made: set[tuple[str, str]] = set()
    for seed in SEEDS:
        _, pairs, _ = word_attack(segment(sentence, "en"), "en", random.Random(seed),
                                  replacements=40, **kwargs)
        made |= {(a.lower(), b.lower()) for a, b in pairs}
    return made


@pytest.mark.parametrize(("sentence", "word", "bad"), CASES + REGISTER,
                         ids=[c[2] for c in CASES + REGISTER])
def test_swap_a_reader_rejects_is_not_made(sentence: str, word: str, bad: str) -> None:
    assert (word, bad) not in _pairs(sentence)


def test_register_moves_are_made_when_the_user_asks() -> None:
    from evalcore.perturb.swaps import Style

    sentence = "I want a new bike for my birthday."
    assert ("want", "desire") not in _pairs(sentence)
    assert ("want", "desire") in _pairs(sentence, style=Style(keep_register=False))
