"""The method's attacked files that glue the options into the attacked question."""
from __future__ import annotations

import csv
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from evalcore.dataset import load_questions
from evalcore.dataset.inline_options import split_marked_options
from evalcore.perturb.review import approve_unflagged, list_attack_items
from evalcore.perturb.set_import import import_attack_set

HEADER = ["attribute", "Question prompt", "choice0", "choice1", "choice2", "choice3", "answer",
          "attacked_question", "attack_num", "synword_pairs"]
CLEAN = [("I am feeling nervous. I fear that", "the exam is delayed.", "I doodle.",
          "my grandpa sings.", "I will fail.", "3"),
         ("My brother is good at math. He", "has a melon.", "is flying.", "looks tall.",
          "won a math contest.", "3")]


def _glued(stem: str, options: list[str]) -> str:
    return stem + " " + "".join(f"choice{n}:{o}" for n, o in enumerate(options))


def _write(path: Path) -> Path:
    rows = [  # row 1: the stem and option 3 attacked; row 2: nothing replaced
        ["o", *CLEAN[0], _glued("I am feeling aflutter. I fear that",
                                [*CLEAN[0][1:4], "I will miscarry"]), "2",
         "{'fail.': 'miscarry', 'nervous': 'aflutter'}"],
        ["o", *CLEAN[1], _glued(CLEAN[1][0], list(CLEAN[1][1:5])), "1", "{'the': 'the'}"]]
    with path.open("w", encoding="utf-8", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(HEADER)
        writer.writerows(rows)
    return path


def test_options_are_split_back_out_in_file_order() -> None:
    text = "Why?choice0:Yes. choice1:No. choice2:Maybe"
    assert split_marked_options(text, [0, 1, 2]) == ("Why?", ["Yes.", "No.", "Maybe"])
    assert split_marked_options(text, [2, 0, 1]) == ("Why?", ["Maybe", "Yes.", "No."])
    assert split_marked_options(text, [0, 1]) is None  # a choice2 the row does not have
    assert split_marked_options("Why? choice1:No. choice0:Yes.", [0, 1]) is None
    assert split_marked_options("Why? no markers", [0, 1]) is None


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from("choice0123: ab."), max_size=60),
       st.lists(st.integers(0, 4), min_size=1, max_size=4, unique=True))
def test_any_text_splits_into_the_asked_options_or_not_at_all(text: str, positions) -> None:
    found = split_marked_options(text, positions)
    assert found is None or (found[0] and len(found[1]) == len(positions) and all(found[1]))


def test_the_attacked_stem_and_options_are_stored_and_checked_one_by_one(engine, tmp_path
                                                                         ) -> None:
    attack_set = import_attack_set(engine, _write(tmp_path / "CODAH_underwordattack.csv"),
                                   similarity=False)
    items = list_attack_items(engine, attack_set.id)
    assert [i.attacked for i in items] == ["I am feeling aflutter. I fear that", CLEAN[1][0]]
    attacked = load_questions(engine, attack_set.dataset_id)
    assert attacked[0].choices == [*CLEAN[0][1:4], "I will miscarry"]
    clean = load_questions(engine, attack_set.source_dataset_id)
    assert clean[0].choices == list(CLEAN[0][1:5]) and clean[0].question == CLEAN[0][0]
    assert "original_choices" not in clean[0].meta
    assert items[0].flags == [] and items[1].flags == ["unchanged"]
    assert approve_unflagged(engine, attack_set.id, reviewer="ann") == 1


def test_the_shared_codah_word_attack_leaves_most_items_unflagged(engine, shared_datasets
                                                                  ) -> None:
    path = shared_datasets / "trusted-evaluation" / "attacked" / "CODAH_underwordattack.csv"
    attack_set = import_attack_set(engine, path, similarity=False)
    items = list_attack_items(engine, attack_set.id)
    assert len(items) == 500
    assert items[0].attacked == "I am feeling aflutter about my midterm tomorrow. I fear that"
    assert sum(1 for i in items if i.flags) < 250  # were all 500: "choice0..3" read as numbers
