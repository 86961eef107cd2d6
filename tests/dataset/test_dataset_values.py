"""Questions and column mappings are msgspec Structs whose constructor checks nothing, so
every way outside data becomes one (a `--mapping` JSON, the page's form, a file's cells, a
stored item row) is checked there: a wrong type or value is refused naming the field and
where it came from, and never becomes a Question that a run or a report reads."""
from __future__ import annotations

import json

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st
from sqlalchemy import update

from evalcore.dataset import (
    ColumnMapping,
    guess_mapping,
    import_dataset,
    load_questions,
    parse_dataset,
)
from evalcore.dataset.catalog import guessed_mapping
from evalcore.dataset.mapping import mapping_from
from evalcore.errors import DatasetError, RunError
from evalcore.store.run_items import questions_by_id
from evalcore.store.tables import Item
from evalcore.values import validated
from tests.properties.hostile import FAST

ITEM = Item.__table__

CSV = "question,answer\nHow many days in a week?,7\nHow many months in a year?,12\n".encode()


@pytest.mark.parametrize("mapping, text", [
    ({"question": "q", "task_type": "essay"},
     "column mapping: task_type: must be one of 'choice', 'multi_tf', 'sentiment'"),
    ({"question": 5}, "column mapping: question: Expected `str | array`, got `int`"),
    ({"question": ["q", 7]}, "column mapping: question[1]: Expected `str`, got `int`"),
    ({"question": "q", "index_base": 2}, "column mapping: index_base: must be one of 0, 1"),
    ({"question": "q", "language": "fr"}, "column mapping: language: must be one of 'auto'"),
    ({"question": "q", "meta": "notes"}, "column mapping: meta: Expected `array | null`"),
    ({"reference": "a"}, "column mapping: question: required"),
])
def test_a_mapping_from_json_or_a_form_is_checked_naming_the_field(mapping: dict,
                                                                  text: str) -> None:
    with pytest.raises(DatasetError) as caught:
        parse_dataset(CSV, "qa.csv", mapping=mapping)
    assert str(caught.value).startswith(text)
    assert "a mapping is a JSON object of question, reference, choices" in str(caught.value)
    assert "essay" not in str(caught.value) and "notes" not in str(caught.value)


def test_a_mapping_is_read_leniently_like_before() -> None:
    mapping = mapping_from({"question": "question", "reference": "answer", "index_base": "1"})
    assert mapping == ColumnMapping(question="question", reference="answer", index_base=1)


def test_a_misspelt_mapping_key_is_refused_not_dropped() -> None:
    """`choice_base` for `index_base` used to be dropped: the answers were read 0-based."""
    with pytest.raises(DatasetError) as caught:
        mapping_from({"question": "q", "reference": "answer", "choice_base": 1})
    text = str(caught.value)
    assert text.startswith("column mapping: unknown key(s) ['choice_base']")
    assert "index_base" in text


_CELLS = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False),
                   st.text(max_size=8), st.lists(st.text(max_size=4), max_size=3),
                   st.lists(st.integers(), max_size=2), st.just({"a": 1}))
_MAPPINGS = st.dictionaries(st.sampled_from(["question", "reference", "choices",
                                             "choices_separator", "task_type", "language",
                                             "meta", "index_base", "other"]),
                            st.one_of(_CELLS, st.sampled_from(["open", "choice", "zh", "auto"])),
                            max_size=6)


@FAST
@given(_MAPPINGS)
def test_any_mapping_json_is_a_checked_mapping_or_a_dataset_error(data: dict) -> None:
    try:
        mapping = mapping_from(data)
    except DatasetError as exc:
        assert str(exc).startswith("column mapping: ")
        return
    assert mapping is not None
    assert isinstance(mapping.question, (str, list)) and mapping.task_type in (
        "choice", "multi_tf", "sentiment", "math", "translation", "open", "bias_choice",
        "bias_pair")
    assert validated(ColumnMapping, msgspec.to_builtins(mapping)) == mapping


@pytest.mark.parametrize("field, value, named", [
    ("task_type", "essay", "task_type: must be one of 'choice'"),
    ("language", "fr", "language: must be one of 'zh', 'en'"),
])
def test_a_mapping_built_in_code_without_checks_still_makes_no_invalid_question(
        field: str, value: str, named: str) -> None:
    """ColumnMapping(...) checks nothing; the rows it builds are checked as questions."""
    mapping = ColumnMapping(question="question", reference="answer", **{field: value})
    with pytest.raises(DatasetError) as caught:
        parse_dataset(CSV, "qa.csv", mapping=mapping)
    message = str(caught.value)
    assert message.startswith("qa.csv row 2: the row does not make a question (")
    assert named in message


def test_the_mapping_a_dataset_records_is_json_and_reads_back() -> None:
    parsed = parse_dataset(CSV, "qa.csv", mapping={"question": ["question"],
                                                   "reference": "answer", "index_base": 1})
    stored = json.loads(json.dumps(parsed.meta["mapping"]))
    assert validated(ColumnMapping, stored) == ColumnMapping(
        question=["question"], reference="answer", index_base=1)
    assert guessed_mapping({"mapping": stored, "mapping_guessed": True}) == (
        "question <- 'question', reference <- 'answer' (task type open)")


def test_the_mapping_hint_is_the_guess_without_its_defaults() -> None:
    guess = guess_mapping(["问题", "题目", "答案"])
    assert guess.mapping_hint() == '{"question":"问题","reference":"答案"}'


@pytest.mark.parametrize("values, named", [
    ({"task_type": "essay"}, "task_type: must be one of 'choice'"),
    ({"choices": {"a": 1}}, "choices: Expected `array`, got `object`"),
    ({"language": "klingon"}, "language: must be one of 'zh', 'en'"),
])
def test_a_stored_item_that_is_no_question_is_refused_naming_it(engine, values: dict,
                                                               named: str) -> None:
    dataset = import_dataset(engine, CSV, filename="qa.csv")
    assert [q.reference for q in load_questions(engine, dataset.id)] == ["7", "12"]
    with engine.begin() as conn:
        first_id, item_id = [row.id for row in conn.execute(
            ITEM.select().where(ITEM.c.dataset_id == dataset.id).order_by(ITEM.c.idx))]
        conn.execute(update(ITEM).where(ITEM.c.id == item_id).values(**values))
    with pytest.raises(DatasetError) as caught:
        load_questions(engine, dataset.id)
    assert f"stored item {item_id} (Q2) is not a valid question ({named}" in str(caught.value)
    with pytest.raises(RunError) as caught_run:
        questions_by_id(engine, [first_id, item_id], what="run 1")
    assert f"run 1: stored item {item_id} is not a valid question ({named}" in str(
        caught_run.value)
