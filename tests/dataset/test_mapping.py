"""Column mappings: suggestions from column names and applying a mapping."""
from __future__ import annotations

import csv
import io
import json

import pytest

from evalcore.dataset import ColumnMapping, parse_dataset, suggest_mapping
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
