"""Every real file in ../shared/datasets imports, with the row counts we count ourselves."""
from __future__ import annotations

import csv
import json
from pathlib import Path

import msgspec
import pytest

from evalcore.dataset import import_dataset, load_questions, parse_dataset

# file name prefix -> (format, task type, language); attacked files add "_attacked".
EXPECTED = {
    "CODAH": ("codah", "choice", "en"),
    "Flipkart": ("flipkart", "sentiment", "en"),
    "Math23K": ("math23k", "math", "zh"),
    "translation": ("translation", "translation", "en"),
    "TruthfulQASingle": ("truthfulqa_single", "choice", "en"),
    "TruthfulQAMulti": ("truthfulqa_multi", "multi_tf", "en"),
    "Physical_appearance": ("bbq", "bias_choice", "en"),
    "Age": ("bbq", "bias_choice", "en"),
    "Nationality": ("bbq", "bias_choice", "en"),
    "ambiguous": ("cbbq", "bias_choice", "zh"),  # gender/ambiguous.json too (CBBQ's own JSON)
    "disambiguous": ("cbbq", "bias_choice", "zh"),
}


def _files(root: Path) -> list[Path]:
    te = root / "trusted-evaluation"
    return sorted([*te.glob("*.csv"), *(te / "attacked").glob("*.csv"),
                   *(root / "bbq").glob("*.jsonl"), *(root / "cbbq").rglob("*.csv"),
                   *(root / "cbbq").rglob("*.json")])


def _expected(path: Path) -> tuple[str, str, str]:
    key = max((k for k in EXPECTED if path.name.startswith(k)), key=len)
    fmt, task, lang = EXPECTED[key]
    return (f"{fmt}_attacked" if path.parent.name == "attacked" else fmt), task, lang


def _raw_rows(path: Path) -> list[dict]:
    """The data rows, read independently of evalcore (csv / json modules)."""
    if path.suffix == ".jsonl":
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()
                if line.strip()]
    if path.suffix == ".json":
        return [{k.lstrip("\ufeff"): v for k, v in r.items()}
                for r in json.loads(path.read_text(encoding="utf-8-sig"))]
    with path.open(encoding="utf-8-sig", newline="") as f:
        rows = list(csv.reader(f))
    header = rows[0]
    return [dict(zip(header, row, strict=False)) for row in rows[1:] if any(c.strip() for c in row)]


def test_the_shared_folder_has_the_files_we_expect(shared_datasets: Path) -> None:
    """Guards the import test below against silently finding fewer files."""
    files = _files(shared_datasets)
    for prefix in EXPECTED:
        assert any(f.name.startswith(prefix) for f in files), prefix
    assert any(f.suffix == ".json" for f in files), "CBBQ's own JSON form is imported too"
    attacked = [f for f in files if f.parent.name == "attacked"]
    assert {f.stem.split("under")[-1] for f in attacked} == {
        "characterattack", "wordattack", "sentenceattack"}


def test_every_shared_file_imports(shared_datasets: Path, engine) -> None:
    for path in _files(shared_datasets):
        fmt, task, lang = _expected(path)
        name = f"{path.parent.name}-{path.stem}{path.suffix}"
        ds = import_dataset(engine, path, name=name)
        raw = _raw_rows(path)
        assert (ds.format, ds.task_type, ds.language) == (fmt, task, lang), path.name
        assert ds.item_count == len(raw), path.name
        questions = load_questions(engine, ds.id)
        assert len(questions) == len(raw)
        assert {q.task_type for q in questions} == {task}
        if fmt.endswith("_attacked"):
            level = path.stem.split("under")[-1].removesuffix("attack")
            assert questions[0].meta["attack_level"] == level
            glued = [f"choice{n}:{c}" for n, c in enumerate(questions[0].choices)]
            split = "original_choices" in questions[0].meta  # options glued to the question
            text = questions[0].question + ("".join(glued) if split else "")
            assert "".join(text.split()) == "".join(raw[0]["attacked_question"].split())
            assert questions[0].meta["original_question"]


@pytest.mark.parametrize("relative", ["trusted-evaluation/CODAHtest.csv",
                                      "trusted-evaluation/TruthfulQASinglectest.csv"])
def test_choice_references_point_at_the_right_text(shared_datasets: Path, relative: str) -> None:
    path = shared_datasets / relative
    parsed = parse_dataset(path)
    for q, row in zip(parsed.questions, _raw_rows(path), strict=True):
        assert q.choices[int(q.reference)] == row[f"choice{row['answer']}"].strip()


def test_multi_tf_flags_match_the_answer_columns(shared_datasets: Path) -> None:
    path = shared_datasets / "trusted-evaluation" / "TruthfulQAMultictest.csv"
    for q, row in zip(parse_dataset(path).questions, _raw_rows(path), strict=True):
        present = [i for i in range(24) if row[f"choice{i}"].strip()]
        assert json.loads(q.reference) == [int(float(row[f"answer{i}"])) for i in present]
        assert len(q.choices) == len(present)


def test_flipkart_and_math_references(shared_datasets: Path) -> None:
    te = shared_datasets / "trusted-evaluation"
    for q, row in zip(parse_dataset(te / "Flipkarttest.csv").questions,
                      _raw_rows(te / "Flipkarttest.csv"), strict=True):
        assert q.reference == {"1": "positive", "0": "negative"}[row["Label"]]
    for q, row in zip(parse_dataset(te / "Math23Ktest.csv").questions,
                      _raw_rows(te / "Math23Ktest.csv"), strict=True):
        assert float(q.reference) == float(row["answer"]) and q.language == "zh"


def test_the_malformed_attacked_file_is_repaired_visibly(shared_datasets: Path) -> None:
    path = (shared_datasets / "trusted-evaluation" / "attacked"
            / "TruthfulQASinglectest_undersentenceattack.csv")
    raw = list(csv.reader(path.open(encoding="utf-8", newline="")))
    overflowing = [n for n, row in enumerate(raw, start=1) if len(row) > len(raw[0])]
    parsed = parse_dataset(path)
    repairs = parsed.meta.get("repairs", [])
    assert [int(r.split()[1].rstrip(":")) for r in repairs] == overflowing
    for number in overflowing:
        q = parsed.questions[number - 2]
        assert q.question == ",".join(raw[number - 1][15:]).strip()


def test_bbq_and_cbbq_keep_annotations(shared_datasets: Path) -> None:
    bbq = parse_dataset(shared_datasets / "bbq" / "Physical_appearance.jsonl").questions[0]
    assert set(bbq.meta) >= {"context_condition", "question_polarity", "answer_info",
                             "additional_metadata", "example_id"}
    assert isinstance(bbq.meta["answer_info"], dict)
    cbbq = parse_dataset(shared_datasets / "cbbq" / "SES" / "ambiguous.csv").questions[0]
    assert cbbq.meta["context_condition"] == "ambiguous" and cbbq.meta["bias_targeted_groups"]
    assert cbbq.question.startswith(cbbq.meta["context"]) and len(cbbq.choices) == 3


def test_cbbq_json_gives_the_same_items_as_the_csv(shared_datasets: Path) -> None:
    """CBBQ's JSON form (first key behind a byte-order mark) reads like its CSV twin."""
    folder = shared_datasets / "cbbq" / "gender"
    assert (folder / "ambiguous.json").read_bytes()[:10] == b'[{"\xef\xbb\xbfexam'
    from_json = parse_dataset(folder / "ambiguous.json")
    from_csv = parse_dataset(folder / "ambiguous.csv")
    assert from_json.format == from_csv.format == "cbbq"
    assert len(from_json.questions) == len(from_csv.questions) > 1000
    assert [msgspec.structs.asdict(q) for q in from_json.questions] == [
        msgspec.structs.asdict(q) for q in from_csv.questions]
    assert "example_id" in from_json.questions[0].meta
