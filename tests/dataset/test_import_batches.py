"""Imports in batches: one transaction whatever the size (a bad last row stores nothing),
progress after each batch, and the streamed reader agreeing with the whole-file one."""
from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import func, select

from evalcore.dataset import import_dataset, read_table
from evalcore.dataset.importer import BATCH_ROWS
from evalcore.dataset.readers import stream_table
from evalcore.errors import DatasetError
from evalcore.store.tables import Dataset, Item

MAPPING = {"question": "question", "reference": "answer", "task_type": "open", "language": "en"}
ROWS = BATCH_ROWS * 3 + 17


def _write(path: Path, rows: int, bad_last: bool = False) -> Path:
    lines = ["question,answer"] + [f'"Question {i}, with a comma",{i}' for i in range(rows)]
    if bad_last:
        lines[-1] = ",999"  # no question text: the last row is refused
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _counts(engine) -> tuple[int, int]:  # type: ignore[no-untyped-def]
    with engine.connect() as conn:
        return (conn.execute(select(func.count()).select_from(Dataset)).scalar_one(),
                conn.execute(select(func.count()).select_from(Item)).scalar_one())


def test_many_batches_one_dataset_with_progress(engine, tmp_path):
    seen: list[int] = []
    dataset = import_dataset(engine, _write(tmp_path / "big.csv", ROWS), mapping=MAPPING,
                             on_progress=seen.append)
    assert dataset.item_count == ROWS and _counts(engine) == (1, ROWS)
    assert seen == [BATCH_ROWS, 2 * BATCH_ROWS, 3 * BATCH_ROWS, ROWS]
    assert dataset.language == "en" and dataset.meta["languages"] == {"en": ROWS}


def test_a_bad_last_row_stores_nothing_after_earlier_batches(engine, tmp_path):
    seen: list[int] = []
    with pytest.raises(DatasetError, match=rf"row {ROWS + 1}\b"):
        import_dataset(engine, _write(tmp_path / "bad.csv", ROWS, bad_last=True),
                       mapping=MAPPING, on_progress=seen.append)
    assert seen[:3] == [BATCH_ROWS, 2 * BATCH_ROWS, 3 * BATCH_ROWS]  # batches were written
    assert _counts(engine) == (0, 0)  # ... and rolled back with the transaction


def test_stream_matches_the_whole_file_reader(tmp_path):
    path = tmp_path / "mixed.csv"
    path.write_bytes("q,a,c\nx,1,2\n\n\"multi\nline\",2\ny,3,4,5\n".encode("gb18030"))
    stream = stream_table(path)
    rows = list(stream.rows)
    df = read_table(path)
    assert [r for _, r in rows] == df.to_dict("records")
    assert [n for n, _ in rows] == df.attrs["row_numbers"] == [2, 4, 5]
    assert stream.repairs == df.attrs["repairs"] and len(stream.repairs) == 1
