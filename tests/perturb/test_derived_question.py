"""An attacked item is built from a stored clean item and an attack's (or an uploaded
file's) text and options: checked as a Question, so a broken stored row or a non-text
option is refused naming the item and the field instead of being stored."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from evalcore.dataset.records import Question
from evalcore.perturb.set_storage import derived_question
from evalcore.perturb.sets import AttackSetError
from tests.perturb.attack_set_helpers import fake_engine, math_dataset  # noqa: F401


def _item(**changes: object) -> SimpleNamespace:
    """A stored item row: fields as attributes."""
    fields = {"id": 41, "idx": 3, "question": "Which is a fruit?", "reference": "1",
              "choices": ["stone", "apple"], "task_type": "choice", "language": "en"}
    return SimpleNamespace(**{**fields, **changes})


def test_an_attacked_row_becomes_a_question_with_the_clean_items_answer_key() -> None:
    row = {"source": _item(), "attacked": "Which is a frUit?", "attack_num": 1,
           "choices": ["st0ne", "appel"]}
    question = derived_question(row, "char")
    assert question == Question(idx=3, question="Which is a frUit?", reference="1",
                                choices=["st0ne", "appel"], task_type="choice", language="en",
                                meta={"original_item_id": 41,
                                      "original_question": "Which is a fruit?",
                                      "attack_level": "char", "attack_num": 1})


@pytest.mark.parametrize("row, named", [
    ({"source": _item(task_type="essay")}, "task_type: must be one of 'choice'"),
    ({"source": _item(language=None)}, "language: Expected `str`, got `null`"),
    ({"source": _item(), "choices": ["st0ne", 7]}, "choices[1]: Expected `str`, got `int`"),
    ({"source": _item(), "attacked": None}, "question: Expected `str`, got `null`"),
])
def test_a_row_that_makes_no_question_is_refused_naming_the_item(row: dict,
                                                                named: str) -> None:
    full = {"attacked": "Which is a frUit?", "attack_num": 1, **row}
    with pytest.raises(AttackSetError) as caught:
        derived_question(full, "char")
    message = str(caught.value)
    assert message.startswith(f"the attacked version of item 41 is not a valid question: {named}")
    assert message.endswith("; fix or drop that row") and "essay" not in message


def _break_item(engine, item_id: int) -> None:  # type: ignore[no-untyped-def]
    from sqlalchemy import update

    from evalcore.store.tables import Item
    ITEM = Item.__table__

    with engine.begin() as conn:
        conn.execute(update(ITEM).where(ITEM.c.id == item_id).values(task_type="essay"))


def test_a_broken_stored_item_stops_generating_and_editing_naming_it(
        engine, math_dataset, fake_engine) -> None:  # type: ignore[no-untyped-def]
    """The clean items an attack or a review reads are stored rows: checked as questions."""
    from evalcore.dataset import get_dataset, load_items
    from evalcore.perturb.generate import make_attack_set
    from evalcore.perturb.review import edit_attack_item, list_attack_items

    attack_set = make_attack_set(engine, dataset=math_dataset, level="word")
    first = list_attack_items(engine, attack_set.id)[0]
    _break_item(engine, first.source_item_id)
    with pytest.raises(AttackSetError) as caught:
        edit_attack_item(engine, first.id, "What number of apples?", reviewer="ann")
    assert str(caught.value).startswith(f"attack item {first.id}: its clean item is not a "
                                        "valid question (task_type: must be one of 'choice'")

    other = load_items(engine, get_dataset(engine, math_dataset).id)[1]
    _break_item(engine, other.id)
    with pytest.raises(AttackSetError) as caught:
        make_attack_set(engine, dataset=math_dataset, level="char")
    assert "an item of its source dataset is not a valid question (task_type: " in str(
        caught.value)
