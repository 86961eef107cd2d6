"""Storing datasets: one transaction, duplicates, names, loading and deleting."""
from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest
from sqlalchemy import func
from sqlmodel import Session, select

from evalcore.dataset import (delete_dataset, get_dataset, import_dataset, list_datasets,
                              load_items, load_questions)
from evalcore.errors import DatasetError, DuplicateDatasetError
from evalcore.store.tables import Dataset, Item, Run

HEADER = ["id", "question", "segmented_text", "equation", "answer"]


def _math_csv(n: int, bad_row: int | None = None) -> bytes:
    buf = io.StringIO()
    writer = csv.writer(buf)
    writer.writerow(HEADER)
    for i in range(n):
        answer = "" if i == bad_row else str(i * 3)
        writer.writerow([str(i), f"{i}的3倍是多少？", "", f"x={i}*3", answer])
    return buf.getvalue().encode("utf-8")


def _counts(engine) -> tuple[int, int]:
    with Session(engine) as s:
        return (s.exec(select(func.count()).select_from(Dataset)).one(),
                s.exec(select(func.count()).select_from(Item)).one())


def test_import_and_load_round_trip(engine) -> None:
    ds = import_dataset(engine, _math_csv(500), filename="maths.csv")
    assert (ds.name, ds.format, ds.task_type, ds.language, ds.item_count) == (
        "maths", "math23k", "math", "zh", 500)
    assert _counts(engine) == (1, 500)
    questions = load_questions(engine, ds.id)
    assert [q.idx for q in questions] == list(range(500))
    assert questions[7].reference == "21" and questions[7].meta["equation"] == "x=7*3"
    assert len(load_questions(engine, ds.id, limit=3)) == 3
    assert all(item.id is not None for item in load_items(engine, ds.id, limit=2))


def test_a_bad_row_in_the_middle_leaves_nothing(engine) -> None:
    with pytest.raises(DatasetError, match=r"maths\.csv row 252, column 'answer'"):
        import_dataset(engine, _math_csv(500, bad_row=250), filename="maths.csv")
    assert _counts(engine) == (0, 0)


def test_a_failure_while_writing_rolls_everything_back(engine, monkeypatch) -> None:
    """Even a database error after the dataset row was written leaves no trace."""
    import evalcore.dataset.importer as importer
    from evalcore.dataset.records import Question

    parsed = importer.parse_dataset(_math_csv(20), "maths.csv")
    parsed.questions.append(Question(idx=5, question="duplicate idx breaks the unique key"))
    from sqlalchemy.exc import IntegrityError

    with pytest.raises(IntegrityError, match="idx"):
        importer.store_parsed(engine, parsed)
    assert _counts(engine) == (0, 0)


def test_same_content_twice_is_refused_unless_allowed(engine, tmp_path: Path) -> None:
    path = tmp_path / "first.csv"
    path.write_bytes(_math_csv(5))
    first = import_dataset(engine, path)
    with pytest.raises(DuplicateDatasetError, match="already imported as dataset 'first'"):
        import_dataset(engine, path.read_bytes(), filename="renamed.csv")
    copy = import_dataset(engine, path, name="second copy", allow_duplicate=True)
    assert copy.sha256 == first.sha256 and copy.id != first.id
    assert _counts(engine) == (2, 10)


def test_names_are_unique(engine) -> None:
    import_dataset(engine, _math_csv(3), filename="maths.csv")
    with pytest.raises(DatasetError, match="a dataset named 'maths' already exists"):
        import_dataset(engine, _math_csv(4), filename="maths.csv")
    other = import_dataset(engine, _math_csv(4), filename="maths.csv", name="maths-4")
    assert other.name == "maths-4"


def test_get_list_and_delete(engine) -> None:
    a = import_dataset(engine, _math_csv(3), filename="a.csv")
    b = import_dataset(engine, _math_csv(4), filename="b.csv")
    assert [d.name for d in list_datasets(engine)] == ["a", "b"]
    assert get_dataset(engine, "b").id == b.id
    assert get_dataset(engine, a.id).name == "a" and get_dataset(engine, str(a.id)).name == "a"
    with pytest.raises(DatasetError, match=r"no dataset 'zzz'; known datasets: \['a', 'b'\]"):
        get_dataset(engine, "zzz")
    delete_dataset(engine, "a")
    assert _counts(engine) == (1, 4)


def test_delete_is_refused_while_runs_use_the_dataset(engine) -> None:
    ds = import_dataset(engine, _math_csv(3), filename="used.csv")
    with Session(engine) as s:
        s.add(Run(kind="eval", dataset_id=ds.id, model="m"))
        s.commit()
    with pytest.raises(DatasetError, match=r"dataset 'used' is used by 1 run\(s\).*delete those "
                                           r"runs first"):
        delete_dataset(engine, "used")
    assert _counts(engine) == (1, 3)


def test_custom_file_with_mapping(engine, tmp_path: Path) -> None:
    path = tmp_path / "quiz.csv"
    path.write_text("Prompt text,Gold,Topic\n2+2?,4,maths\n首都是？,北京,地理\n", encoding="utf-8")
    with pytest.raises(DatasetError, match="match no known format"):
        import_dataset(engine, path)
    ds = import_dataset(engine, path, mapping={"question": "Prompt text", "reference": "Gold"})
    assert (ds.format, ds.task_type) == ("mapped", "open")
    qs = load_questions(engine, ds.id)
    # "2+2?" has no words of either language, so it takes the file's (Chinese) language
    assert [(q.language, q.reference, q.meta) for q in qs] == [
        ("zh", "4", {"Topic": "maths"}), ("zh", "北京", {"Topic": "地理"})]
