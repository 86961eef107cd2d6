"""Column mappings: suggestions from column names and applying a mapping."""
from __future__ import annotations

import csv
import io
import json

import pytest

from evalcore.dataset import ColumnMapping, guess_mapping, parse_dataset, suggest_mapping
from evalcore.errors import DatasetError


def _csv(header: list[str], *rows: list[str]) -> bytes:
    buf = io.StringIO()
    writer = csv.writer(buf)
    writer.writerow(header)
    writer.writerows(rows)
    return buf.getvalue().encode("utf-8")


@pytest.mark.parametrize("columns,question,reference,choices,task", [
    (["Question", "Answer"], "Question", "Answer", None, "open"),
    (["题目", "标准答案", "难度"], "题目", "标准答案", None, "open"),
    (["问题", "答案"], "问题", "答案", None, "open"),
    (["prompt", "label"], "prompt", "label", None, "open"),
    (["question", "options", "answer"], "question", "answer", "options", "choice"),
    (["question", "A", "B", "C", "D", "answer"], "question", "answer", ["A", "B", "C", "D"],
     "choice"),
    (["question", "option_1", "option_2", "option_3", "correct"], "question", "correct",
     ["option_1", "option_2", "option_3"], "choice"),
    (["context", "question", "choice0", "choice1", "label"], ["context", "question"], "label",
     ["choice0", "choice1"], "choice"),
])
def test_suggest_mapping(columns, question, reference, choices, task) -> None:
    m = suggest_mapping(columns)
    assert m is not None
    assert (m.question, m.reference, m.choices, m.task_type) == (question, reference, choices, task)


def test_suggest_mapping_without_a_question_column() -> None:
    assert suggest_mapping(["foo", "bar"]) is None


def test_mapping_with_option_columns_letters_and_meta() -> None:
    data = _csv(["Item", "O1", "O2", "O3", "Key", "Topic", "Notes"],
                ["Largest ocean?", "Atlantic", "Pacific", "Indian", "b", "geo", "x"],
                ["最大的行星是？", "木星", "火星", "", "A", "天文", "y"])
    mapping = {"question": "Item", "choices": ["O1", "O2", "O3"], "reference": "Key",
               "task_type": "choice", "meta": ["Topic"]}
    parsed = parse_dataset(data, "quiz.csv", mapping=mapping)
    first, second = parsed.questions
    assert parsed.format == "mapped" and parsed.meta["mapping"]["reference"] == "Key"
    assert (first.reference, first.language, first.meta) == ("1", "en", {"Topic": "geo"})
    assert (second.reference, second.language, second.choices) == ("0", "zh", ["木星", "火星"])


def test_mapping_keeps_unused_columns_by_default_and_counts_from_one() -> None:
    data = _csv(["q", "opts", "ans", "src"], ["2+2?", "3|4|5", "2", "book"])
    mapping = ColumnMapping(question="q", choices="opts", choices_separator="|", reference="ans",
                            task_type="choice", index_base=1)
    q = parse_dataset(data, "x.csv", mapping=mapping).questions[0]
    assert q.choices == ["3", "4", "5"] and q.reference == "1" and q.meta == {"src": "book"}


def test_mapping_choices_as_json_list_and_reference_as_text() -> None:
    data = _csv(["q", "opts", "ans"], ["Sky colour?", json.dumps(["red", "blue"]), "blue"])
    mapping = {"question": "q", "choices": "opts", "reference": "ans", "task_type": "choice"}
    q = parse_dataset(data, "x.csv", mapping=mapping).questions[0]
    assert q.choices == ["red", "blue"] and q.reference == "1"


@pytest.mark.parametrize("task,value,expected", [
    ("math", "12.5", "12.5"), ("sentiment", "正面", "positive"), ("translation", "你好", "你好"),
    ("open", "", None), ("multi_tf", "[1, 0]", "[1, 0]"),
])
def test_mapping_reference_per_task_type(task: str, value: str, expected) -> None:
    data = _csv(["q", "c", "r"], ["question text", json.dumps(["a", "b"]), value])
    mapping = {"question": "q", "reference": "r", "task_type": task,
               "choices": "c" if task == "multi_tf" else None, "language": "zh"}
    q = parse_dataset(data, "x.csv", mapping=mapping).questions[0]
    assert q.reference == expected and q.task_type == task and q.language == "zh"


def test_mapping_that_does_not_fit_the_file() -> None:
    data = _csv(["q", "a"], ["x", "1"])
    with pytest.raises(DatasetError, match=r"columns \['question'\] are not in the file"):
        parse_dataset(data, "x.csv", mapping={"question": "question"})
    with pytest.raises(DatasetError, match="task type 'math' needs a reference column"):
        parse_dataset(data, "x.csv", mapping={"question": "q", "task_type": "math"})
    with pytest.raises(DatasetError, match="needs option columns"):
        parse_dataset(data, "x.csv", mapping={"question": "q", "reference": "a",
                                              "task_type": "choice"})


def test_mapping_errors_name_the_row_and_column() -> None:
    data = _csv(["q", "opts", "ans"], ["ok?", '["a", "b"]', "0"], ["bad?", '["a", "b"]', "7"])
    with pytest.raises(DatasetError, match=r"x\.csv row 3, column 'ans': '7' is not one of the 2 "
                                           r"options"):
        parse_dataset(data, "x.csv", mapping={"question": "q", "choices": "opts",
                                              "reference": "ans", "task_type": "choice"})


@pytest.mark.parametrize("header, row, used, task", [
    (["question", "answer"], ["What is 2+2?", "4"], ("question", "answer"), "math"),
    (["id", "问题", "答案"], ["1", "一周有几天？", "7"], ("问题", "答案"), "math"),
    (["题目", "答案", "难度"], ["一年有几个月？", "12", "易"], ("题目", "答案"), "math"),
    (["prompt", "target"], ["Capital of France?", "Paris"], ("prompt", "target"), "open"),
    (["input", "reference"], ["Say hi", "hi"], ("input", "reference"), "open"),
])
def test_question_and_answer_files_import_without_a_mapping(header, row, used, task) -> None:
    parsed = parse_dataset(_csv(header, row), "qa.csv")
    q = parsed.questions[0]
    assert (parsed.format, parsed.task_type) == ("mapped", task)  # numbers: read as math
    assert (q.question, q.reference) == (row[header.index(used[0])], row[header.index(used[1])])
    assert parsed.meta["mapping_guessed"] is True
    assert parsed.meta["mapping"]["question"] == used[0]
    assert set(q.meta) == set(header) - set(used)


def test_a_jsonl_question_answer_file_imports_without_a_mapping() -> None:
    lines = [{"question": "一周有几天？", "answer": "7"}, {"question": "Two plus two?", "answer": 4}]
    data = "\n".join(json.dumps(x, ensure_ascii=False) for x in lines).encode("utf-8")
    parsed = parse_dataset(data, "qa.jsonl")
    assert [(q.reference, q.language) for q in parsed.questions] == [("7", "zh"), ("4", "en")]


@pytest.mark.parametrize("header, role, candidates", [
    (["question", "prompt", "answer"], "question", ["question", "prompt"]),
    (["question", "answer", "label"], "reference", ["answer", "label"]),
    (["instruction", "input", "output"], "question", ["input", "instruction"]),
    (["问题", "题目", "答案"], "question", ["问题", "题目"]),
])
def test_an_ambiguous_guess_is_refused_with_the_candidates(header, role, candidates) -> None:
    guess = guess_mapping(header)
    assert not guess.certain and guess.ambiguous() == {role: candidates}
    with pytest.raises(DatasetError, match=rf"the {role} could be any of") as info:
        parse_dataset(_csv(header, ["x"] * len(header)), "qa.csv")
    assert all(repr(c) in str(info.value) for c in candidates)
    # the explicit mapping the message asks for settles it
    mapping = {"question": candidates[0] if role == "question" else header[0],
               "reference": candidates[1] if role == "reference" else header[-1]}
    assert parse_dataset(_csv(header, ["x"] * len(header)), "qa.csv", mapping=mapping)


def test_a_question_without_an_answer_column_is_not_imported_blindly() -> None:
    guess = guess_mapping(["question", "notes"])
    assert guess.mapping is not None and not guess.certain
    with pytest.raises(DatasetError, match="no column is named like a reference answer"):
        parse_dataset(_csv(["question", "notes"], ["Why?", "n"]), "q.csv")


def test_a_known_format_wins_over_the_guess(shared_datasets) -> None:
    parsed = parse_dataset(shared_datasets / "trusted-evaluation" / "Math23Ktest.csv")
    assert parsed.format == "math23k" and "mapping_guessed" not in parsed.meta


def test_a_given_mapping_is_not_called_a_guess() -> None:
    parsed = parse_dataset(_csv(["question", "answer"], ["q", "a"]), "qa.csv",
                           mapping={"question": "question", "reference": "answer"})
    assert parsed.meta["mapping_guessed"] is False
