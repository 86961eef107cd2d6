"""The task type of a guessed mapping is read off the answers; the duplicate check counts
the mapping."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalcore.dataset import (
    dataset_info,
    guess_file_mapping,
    guess_task,
    import_dataset,
    parse_dataset,
)
from evalcore.errors import DuplicateDatasetError
from evalcore.scorers.registry import rules_scorer

NUMERIC = "question,target\nWhat is 45 times 2?,90\nHow many days has a week?,7\nHalf of 9?,4.5\n"


def test_numeric_targets_make_a_math_file_that_a_worded_reply_passes() -> None:
    parsed = parse_dataset(NUMERIC.encode(), "plain.csv")
    assert parsed.task_type == "math"
    assert parsed.meta["task_guess"] == "all numbers (3 answers looked at)"
    first = parsed.questions[0]
    score = rules_scorer(first.task_type)("The answer is 90.", first)
    assert score.correct is True


def test_a_gbk_chinese_question_answer_file_is_math_too() -> None:
    data = "问题,答案\n一周有几天？,7\n一年有几个月？,12\n".encode("gbk")
    parsed = parse_dataset(data, "gbk.csv")
    assert parsed.task_type == "math" and parsed.questions[1].reference == "12"


@pytest.mark.parametrize(("answers", "choices", "task"), [
    (["positive", "negative", "正面"], False, "sentiment"),
    (["B", "a", "(C)"], True, "choice"),
    (["3", "1/2", "50%", "-2.5"], False, "math"),
])
def test_answers_name_their_task(answers: list[str], choices: bool, task: str) -> None:
    found = guess_task(answers, has_choices=choices)
    assert found is not None and found.task_type == task


def test_option_letters_without_option_columns_say_so() -> None:
    found = guess_task(["A", "C", "B"], has_choices=False)
    assert found is not None and found.task_type == "open"
    assert "no option columns" in found.reason


@pytest.mark.parametrize("answers", [["Paris", "7"], ["0", "1", "1"], [], ["", " "]])
def test_mixed_or_ambiguous_answers_guess_nothing(answers: list[str]) -> None:
    assert guess_task(answers, has_choices=False) is None


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(max_size=30), max_size=20), st.booleans())
def test_any_answers_give_a_known_task_or_none(answers: list[str], choices: bool) -> None:
    found = guess_task(answers, has_choices=choices)
    assert found is None or found.task_type in ("math", "sentiment", "choice", "open")


def test_the_file_guess_and_the_stored_dataset_name_the_reason(engine, tmp_path: Path) -> None:
    path = tmp_path / "plain.csv"
    path.write_text(NUMERIC, encoding="utf-8")
    guess = guess_file_mapping(path)
    assert guess.mapping is not None and guess.mapping.task_type == "math"
    assert "task type math: all numbers (3 answers looked at)" in guess.describe()
    info = dataset_info(import_dataset(engine, path))
    assert info["task_type"] == "math"
    assert info["guessed_task"] == "all numbers (3 answers looked at)"
    assert "numbers" in info["guessed_mapping"]


def test_the_same_file_with_another_mapping_is_another_dataset(engine) -> None:
    data = NUMERIC.encode()
    import_dataset(engine, data, filename="plain.csv")
    other = {"question": "question", "reference": "target", "task_type": "open"}
    again = import_dataset(engine, data, filename="plain.csv", name="plain-open", mapping=other)
    assert again.task_type == "open"
    with pytest.raises(DuplicateDatasetError, match="'plain-open'"):
        import_dataset(engine, data, filename="plain.csv", name="third", mapping=other)


def test_cli_import_says_which_task_it_guessed(run, tmp_path: Path) -> None:
    path = tmp_path / "plain.csv"
    path.write_text(NUMERIC, encoding="utf-8")
    code, out, _ = run("import", str(path))
    assert code == 0 and "task math" in out and "all numbers (3 answers looked at)" in out
    code, out, _ = run("show", "plain", "--json")
    assert json.loads(out)["guessed_task"] == "all numbers (3 answers looked at)"
