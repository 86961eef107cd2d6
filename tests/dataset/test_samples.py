"""The small sample files in data/samples import as documented."""
from __future__ import annotations

import json
from pathlib import Path

from evalcore.dataset import (import_dataset, load_questions, parse_dataset, read_table,
                              suggest_mapping)

SAMPLES = Path(__file__).resolve().parents[2] / "data" / "samples"


def test_gbk_maths_sample_is_detected_as_math23k() -> None:
    path = SAMPLES / "math_zh_gbk.csv"
    raw = path.read_bytes()
    assert raw.decode("gbk")  # really GBK, and really not UTF-8:
    try:
        raw.decode("utf-8")
        raise AssertionError("sample should not be valid UTF-8")
    except UnicodeDecodeError:
        pass
    parsed = parse_dataset(path)
    assert (parsed.format, parsed.task_type, parsed.language) == ("math23k", "math", "zh")
    expected = [line.split(",")[-1] for line in raw.decode("gbk").splitlines()[1:]]
    assert [q.reference for q in parsed.questions] == expected


def test_english_multiple_choice_jsonl_with_suggested_mapping(engine) -> None:
    path = SAMPLES / "mc_en.jsonl"
    mapping = suggest_mapping(list(read_table(path).columns))
    assert mapping is not None and mapping.task_type == "choice"
    ds = import_dataset(engine, path, mapping=mapping)
    raw = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    questions = load_questions(engine, ds.id)
    assert len(questions) == len(raw) == 10
    for q, row in zip(questions, raw, strict=True):
        letter_index = ord(row["answer"]) - ord("A")
        assert q.choices[int(q.reference)] == row["choices"][letter_index]
        assert q.language == "en" and q.meta["topic"] == row["topic"]


def test_xlsx_with_custom_columns_and_its_mapping_file(engine) -> None:
    path = SAMPLES / "quiz_custom_columns.xlsx"
    mapping = json.loads((SAMPLES / "quiz_custom_columns.mapping.json").read_text("utf-8"))
    ds = import_dataset(engine, path, mapping=mapping)
    questions = load_questions(engine, ds.id)
    df = read_table(path)
    assert len(questions) == len(df)
    assert {q.language for q in questions} == {"zh", "en"}
    for q, (_, row) in zip(questions, df.iterrows(), strict=True):
        assert q.choices[int(q.reference)] == row[f"Opt {row['Gold']}"]
        assert q.meta == {"Topic": row["Topic"]}
