"""The stability CSV over hostile replies: every answer, reason and question is written
(formula cells neutralised), the file reads back with one row per question."""
from __future__ import annotations

import csv
import io

from hypothesis import given
from hypothesis import strategies as st

from evalcore.report.export import csv_bytes, safe_cell
from tests.properties.hostile import FAST, replies


@FAST
@given(replies)
def test_safe_cell_neutralises_or_keeps(text: str) -> None:
    cell = safe_cell(text)
    assert cell == text or cell == "'" + text


@FAST
@given(st.lists(st.tuples(replies, st.one_of(st.none(), st.booleans()), replies),
                min_size=1, max_size=4))
def test_stability_csv_of_hostile_rounds(rounds: list) -> None:
    rows = [{"item_idx": 0, "question": "q", "reference": "1", "task_type": "math",
             "round": r + 1, "answer": answer, "correct": correct, "reason": reason,
             "error": None if correct is not None else "HTTP 500"}
            for r, (answer, correct, reason) in enumerate(rounds)]
    for lang in ("zh", "en"):
        data = csv_bytes(rows, len(rounds), lang).decode("utf-8-sig")
        parsed = list(csv.reader(io.StringIO(data, newline="")))
        assert len(parsed) == 2 and len(parsed[1]) == len(parsed[0])
