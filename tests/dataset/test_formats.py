"""Format detection by columns and the per-format row builders."""
from __future__ import annotations

import json

import pytest

from evalcore.dataset import detect_format, list_formats, parse_dataset
from evalcore.dataset.formats import FORMATS, attack_level
from evalcore.errors import DatasetError

TQA_SINGLE = ["question", *[f"choice{i}" for i in range(13)], "answer"]
TQA_MULTI = ["question", *[f"choice{i}" for i in range(24)], *[f"answer{i}" for i in range(24)]]
BBQ = ["example_id", "question_index", "question_polarity", "context_condition", "category",
       "answer_info", "additional_metadata", "context", "question", "ans0", "ans1", "ans2", "label"]
CBBQ = ["example_id", "question_index", "question_polarity", "context_condition", "category",
        "subcategory", "bias_targeted_groups", "source", "context", "question", "ans0", "ans1",
        "ans2", "label"]


@pytest.mark.parametrize("columns,name,task", [
    (["attribute", "Question prompt", "choice0", "choice1", "choice2", "choice3", "answer"],
     "codah", "choice"),
    (["Summary", "Sentiment", "Label"], "flipkart", "sentiment"),
    (["id", "question", "segmented_text", "equation", "answer"], "math23k", "math"),
    (["english", "chinese"], "translation", "translation"),
    (TQA_SINGLE, "truthfulqa_single", "choice"),
    (TQA_MULTI, "truthfulqa_multi", "multi_tf"),
    (BBQ, "bbq", "bias_choice"),
    (CBBQ, "cbbq", "bias_choice"),
    (["id", "question", "segmented_text", "equation", "answer", "attacked_question", "attack_num"],
     "math23k_attacked", "math"),
    (["english", "chinese", "attacked_question"], "translation_attacked", "translation"),
    ([*TQA_MULTI, "attacked_question"], "truthfulqa_multi_attacked", "multi_tf"),
])
def test_detect_format(columns: list[str], name: str, task: str) -> None:
    spec = detect_format(columns)
    assert spec is not None and spec.name == name and spec.task_type == task


def test_unknown_columns_detect_nothing() -> None:
    assert detect_format(["question", "answer"]) is None
    assert detect_format([]) is None


def test_every_format_is_listed_and_detects_itself() -> None:
    names = [f.name for f in list_formats()]
    assert names == list(FORMATS)
    for spec in list_formats():
        assert detect_format(list(spec.required)) is spec


@pytest.mark.parametrize("filename,level", [
    ("Math23K_undercharacterattack.csv", "character"),
    ("CODAH_underwordattack.csv", "word"),
    ("TruthfulQASinglectest_undersentenceattack.csv", "sentence"),
    ("my_attacked_copy.csv", "unknown"),
])
def test_attack_level_from_file_name(filename: str, level: str) -> None:
    assert attack_level(filename) == level


def _csv(header: list[str], *rows: list[str]) -> bytes:
    import csv
    import io

    buf = io.StringIO()
    writer = csv.writer(buf)
    writer.writerow(header)
    writer.writerows(rows)
    return buf.getvalue().encode("utf-8")


def test_single_choice_with_a_gap_keeps_the_answer_pointing_at_the_same_text() -> None:
    options = ["Paris", "", "Lyon", "Nice"] + [""] * 9
    data = _csv(TQA_SINGLE, ["Capital of France?", *options, "2"])
    q = parse_dataset(data, "gap.csv").questions[0]
    assert q.choices == ["Paris", "Lyon", "Nice"]
    assert q.choices[int(q.reference)] == "Lyon"
    assert q.meta["original_option_index"] == [0, 2, 3]


def test_single_choice_answer_on_a_blank_option_is_an_error() -> None:
    options = ["Paris", "Lyon", ""] + [""] * 10
    data = _csv(TQA_SINGLE, ["Capital?", *options, "2"])
    with pytest.raises(DatasetError, match=r"gap\.csv row 2, column 'answer': '2' points to "
                                           r"option choice2, which is blank"):
        parse_dataset(data, "gap.csv")


def test_multi_tf_reference_is_a_flag_per_present_option() -> None:
    choices = ["yes", "no", "maybe"] + [""] * 21
    answers = ["1.0", "0", "1"] + [""] * 21
    q = parse_dataset(_csv(TQA_MULTI, ["Q?", *choices, *answers]), "m.csv").questions[0]
    assert q.task_type == "multi_tf"
    assert json.loads(q.reference) == [1, 0, 1] and q.choices == ["yes", "no", "maybe"]


def test_multi_tf_flag_for_a_blank_option_is_an_error() -> None:
    choices = ["yes", "no"] + [""] * 22
    answers = ["1", "0", "1"] + [""] * 21
    with pytest.raises(DatasetError, match="column 'answer2': '1' marks option choice2"):
        parse_dataset(_csv(TQA_MULTI, ["Q?", *choices, *answers]), "m.csv")


def test_flipkart_label_and_sentiment_must_agree() -> None:
    ok = parse_dataset(_csv(["Summary", "Sentiment", "Label"], ["great", "positive", "1"],
                            ["awful", "", "0"]), "f.csv")
    assert [q.reference for q in ok.questions] == ["positive", "negative"]
    with pytest.raises(DatasetError, match=r"row 2, column 'Label': '1' says positive"):
        parse_dataset(_csv(["Summary", "Sentiment", "Label"], ["meh", "negative", "1"]), "f.csv")


def test_math_answer_must_be_numeric_and_named_precisely() -> None:
    header = ["id", "question", "segmented_text", "equation", "answer"]
    rows = [[str(i), f"{i}加{i}等于几？", "", "", str(2 * i)] for i in range(1, 20)]
    rows[15][4] = ""
    with pytest.raises(DatasetError) as err:
        parse_dataset(_csv(header, *rows), "Math23Ktest.csv")
    assert str(err.value).startswith("Math23Ktest.csv row 17, column 'answer': '' is empty; "
                                     "every math item needs a numeric answer")
    assert "header is row 1" in str(err.value)
    rows[15][4] = "about seven"
    with pytest.raises(DatasetError,
                       match="row 17, column 'answer': 'about seven' is not a number"):
        parse_dataset(_csv(header, *rows), "Math23Ktest.csv")


def test_bbq_row_builds_context_question_and_keeps_annotations() -> None:
    record = {"example_id": 7, "question_index": "1", "question_polarity": "neg",
              "context_condition": "ambig", "category": "Age",
              "answer_info": {"ans0": ["old", "old"], "ans1": ["Unknown", "unknown"],
                              "ans2": ["young", "nonOld"]},
              "additional_metadata": {"stereotyped_groups": ["old"]},
              "context": "Two people met.", "question": "Who forgot?",
              "ans0": "The old one", "ans1": "Unknown", "ans2": "The young one", "label": 1}
    parsed = parse_dataset(json.dumps(record).encode(), "age.jsonl")
    q = parsed.questions[0]
    assert parsed.format == "bbq" and q.task_type == "bias_choice" and q.language == "en"
    assert q.question == "Two people met.\nWho forgot?"
    assert q.choices == ["The old one", "Unknown", "The young one"] and q.reference == "1"
    assert q.meta["answer_info"]["ans2"] == ["young", "nonOld"]
    assert q.meta["additional_metadata"] == {"stereotyped_groups": ["old"]}
    assert q.meta["context_condition"] == "ambig" and q.meta["example_id"] == "7"


def test_forced_format_reports_missing_columns() -> None:
    with pytest.raises(DatasetError, match=r"format 'codah' needs columns \['Question prompt'"):
        parse_dataset(_csv(["question", "answer"], ["q", "1"]), "x.csv", format="codah")
    with pytest.raises(DatasetError, match="unknown format 'nope'"):
        parse_dataset(_csv(["question", "answer"], ["q", "1"]), "x.csv", format="nope")


def test_unknown_columns_suggest_a_mapping() -> None:
    """An unambiguous question/answer file imports; two answer columns make the user choose."""
    assert parse_dataset(_csv(["题目", "标准答案"], ["1+1=?", "2"]), "x.csv").format == "mapped"
    with pytest.raises(DatasetError, match=r"match no known format.*\"question\":\"题目\""):
        parse_dataset(_csv(["题目", "标准答案", "答案"], ["1+1=?", "2", "2"]), "x.csv")
