"""The stability CSV: layout, BOM, formula safety, ordering checks, streaming memory."""
from __future__ import annotations

import csv
import io
import random
import tracemalloc
from itertools import islice
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Iterator

import pytest

from evalcore.errors import EvalcoreError
from evalcore.metrics.stability import stability_summary
from evalcore.report.export import (
    ExportInputError,
    csv_bytes,
    header,
    safe_cell,
    write_stability_csv,
)

BOM = b"\xef\xbb\xbf"


def synthetic_calls(items: int, rounds: int, seed: int = 0, text: int = 0) -> Iterator[dict]:
    """Calls ordered by item then round, as the store yields them; `text` pads each string."""
    rng = random.Random(seed)
    pad = "x" * text
    for i in range(items):
        for r in range(1, rounds + 1):
            ok = rng.random() < 0.6
            yield {"item_idx": i, "question": f"问题 {i}? {pad}", "reference": str(i % 4),
                   "task_type": "choice", "round": r, "answer": f"answer {i}/{r} {pad}",
                   "score": float(ok), "correct": ok, "reason": f"reason {i}/{r} {pad}"}


def read_back(data: bytes) -> list[list[str]]:
    assert data.startswith(BOM)
    return list(csv.reader(io.StringIO(data.decode("utf-8-sig"), newline="")))


def test_headers_in_both_languages() -> None:
    assert header(2, "zh") == [
        "题目编号", "问题", "标准答案", "类型",
        "第1轮_答案", "第1轮_评分", "第1轮_理由", "第2轮_答案", "第2轮_评分", "第2轮_理由",
        "作答轮数", "出错轮数", "正确次数", "成功率"]
    assert header(1, "en") == [
        "question_id", "question", "reference_answer", "type",
        "round_1_answer", "round_1_score", "round_1_reason", "answered_rounds",
        "errored_rounds", "correct_count", "success_rate"]
    assert len(header(100)) == 4 + 3 * 100 + 4
    with pytest.raises(ExportInputError, match="lang"):
        header(2, "fr")  # type: ignore[arg-type]


@pytest.mark.parametrize("rounds", [1, 5, 100])
def test_file_round_trip_agrees_with_the_stability_summary(tmp_path: Path, rounds: int) -> None:
    items = 30
    path = tmp_path / "stability.csv"
    written = write_stability_csv(synthetic_calls(items, rounds, seed=rounds), rounds, path)
    assert written == items
    table = read_back(path.read_bytes())
    assert table[0] == header(rounds, "zh")
    body = table[1:]
    assert len(body) == items

    verdicts = {}
    for call in synthetic_calls(items, rounds, seed=rounds):
        verdicts.setdefault(call["item_idx"], []).append(call["correct"])
    summary = stability_summary(verdicts, rounds)
    for row, q in zip(body, summary.questions):
        assert int(row[0]) == q.key + 1  # the number the pages show: Q1 is item_idx 0
        scores = [int(row[4 + 3 * k + 1]) for k in range(rounds)]
        assert int(row[-2]) == sum(scores) == q.correct_count
        assert float(row[-1]) == pytest.approx(q.success_rate, abs=5e-5)
        assert row[4] == f"answer {q.key}/1 "
        assert row[1] == f"问题 {q.key}? "


def test_objects_work_like_dicts_and_english_headers() -> None:
    calls = [SimpleNamespace(**c) for c in synthetic_calls(3, 2, seed=4)]
    as_objects = csv_bytes(iter(calls), 2, lang="en")
    as_dicts = csv_bytes(synthetic_calls(3, 2, seed=4), 2, lang="en")
    assert as_objects == as_dicts
    assert read_back(as_dicts)[0][0] == "question_id"


ERRORED = [
    {"item_idx": 4, "question": "Q", "reference": "1", "task_type": "math", "round": 3,
     "answer": "1", "correct": True, "reason": "ok", "error": None},
    {"item_idx": 4, "question": "Q", "reference": "1", "task_type": "math", "round": 1,
     "answer": None, "correct": False, "reason": "model error: timed out",
     "error": "timed out after 60s (gave up after 6 attempts)"},
    {"item_idx": 4, "question": "Q", "reference": "1", "task_type": "math", "round": 4,
     "answer": "2", "correct": False, "reason": "wrong", "error": None},
]


def test_errored_rounds_are_left_out_by_default(tmp_path: Path) -> None:
    row = read_back(csv_bytes(ERRORED, 4))[1]
    assert row[:4] == ["5", "Q", "1", "math"]  # Q5: item_idx 4
    assert row[4:7] == ["", "", "model error: timed out"]  # no verdict: no score
    assert row[7:10] == ["", "", ""]  # round 2 never ran
    assert row[10:13] == ["1", "1", "ok"]
    assert row[13:16] == ["2", "0", "wrong"]
    assert row[-4:] == ["2", "2", "1", "0.5"]  # answered, errored, correct, 1 of 2 answered


def test_errored_rounds_as_wrong_is_the_seed_rule(tmp_path: Path) -> None:
    row = read_back(csv_bytes(ERRORED, 4, failure_policy="as_wrong"))[1]
    assert row[4:7] == ["", "0", "model error: timed out"]  # errored round scores 0
    assert row[-4:] == ["2", "2", "1", "0.25"]
    with pytest.raises(ExportInputError, match="exclude, as_wrong"):
        csv_bytes(ERRORED, 4, failure_policy="ignore")  # type: ignore[arg-type]


def test_no_verdict_at_all_leaves_the_rate_empty() -> None:
    row = read_back(csv_bytes(ERRORED[1:2], 2))[1]
    assert row[-4:] == ["0", "2", "0", ""]


@pytest.mark.parametrize("value,expected", [
    ("=1+1", "'=1+1"), ("+cmd|' /C calc'!A0", "'+cmd|' /C calc'!A0"), ("@SUM(A1)", "'@SUM(A1)"),
    ("-2+3", "'-2+3"), ("\tx", "'\tx"), ("\r=1", "'\r=1"), ("=HYPERLINK(\"x\")", "'=HYPERLINK(\"x\")"),
    ("-3", "-3"), ("+2.5", "+2.5"), ("-1e5", "-1e5"), ("-.5", "-.5"),
    ("hello = world", "hello = world"), ("", ""), (3, 3), (-3, -3),
])
def test_safe_cell(value: Any, expected: Any) -> None:
    assert safe_cell(value) == expected


def test_formula_cells_are_neutralised_in_the_file() -> None:
    calls = [{"item_idx": 0, "question": "=1+1", "reference": "-3", "task_type": "math",
              "round": 1, "answer": "@evil", "correct": False, "reason": "-bad"}]
    row = read_back(csv_bytes(calls, 1))[1]
    assert row[1:3] == ["'=1+1", "-3"]
    assert row[4] == "'@evil" and row[6] == "'-bad"


def test_text_stream_output_and_csv_bytes_agree(tmp_path: Path) -> None:
    buffer = io.StringIO(newline="")
    write_stability_csv(synthetic_calls(5, 3), 3, buffer, lang="en")
    path = tmp_path / "out.csv"
    write_stability_csv(synthetic_calls(5, 3), 3, str(path), lang="en")
    data = csv_bytes(synthetic_calls(5, 3), 3, lang="en")
    assert buffer.getvalue().encode("utf-8") == path.read_bytes() == data
    assert data.startswith(BOM) and data.count(BOM) == 1


def test_multiline_text_stays_in_one_cell() -> None:
    calls = [{"item_idx": 0, "question": 'a "quoted"\nsecond line', "reference": "x",
              "task_type": "open", "round": 1, "answer": "l1\r\nl2", "correct": True,
              "reason": "r"}]
    table = read_back(csv_bytes(calls, 1))
    assert len(table) == 2
    assert table[1][1] == 'a "quoted"\nsecond line' and table[1][4] == "l1\r\nl2"


def test_empty_input_writes_only_the_header() -> None:
    table = read_back(csv_bytes(iter(()), 2))
    assert table == [header(2)]


@pytest.mark.parametrize("calls,match", [
    ([{"item_idx": 2, "round": 1}, {"item_idx": 1, "round": 1}], "not ordered by item"),
    ([{"item_idx": 1, "round": 1}, {"item_idx": 2, "round": 1}, {"item_idx": 1, "round": 2}],
     "not ordered by item"),
    ([{"item_idx": 1, "round": 1}, {"item_idx": 1, "round": 1}], "appears twice"),
    ([{"item_idx": 1, "round": 3}], "outside 1..2"),
    ([{"item_idx": 1, "round": 0}], "outside 1..2"),
])
def test_bad_input_is_refused(calls: list, match: str) -> None:
    with pytest.raises(ExportInputError, match=match) as info:
        csv_bytes(calls, 2)
    assert isinstance(info.value, EvalcoreError)


def test_bad_round_count_is_refused() -> None:
    with pytest.raises(ExportInputError, match="n_rounds"):
        csv_bytes([], 0)


def peak_bytes(work) -> int:
    tracemalloc.start()
    try:
        work()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_100000_call_run_streams_in_small_memory(tmp_path: Path) -> None:
    """1,000 questions x 100 rounds, ~300 bytes of text per call: a size check, not timing."""
    budget = 20 * 1024 * 1024
    path = tmp_path / "big.csv"
    counted = []

    def stream() -> None:
        counted.append(write_stability_csv(synthetic_calls(1000, 100, text=100), 100, path))

    peak = peak_bytes(stream)
    assert counted == [1000]
    assert peak < budget, f"peak {peak / 1e6:.1f} MB"
    assert path.stat().st_size > budget  # the output itself would not fit in the budget

    # The budget can fail: holding a quarter of the same calls in a list takes over a
    # quarter of it (so holding them all would not fit). A quarter keeps the test quick.
    quarter = peak_bytes(lambda: len(list(islice(synthetic_calls(1000, 100, text=100), 25_000))))
    assert quarter > budget / 4, f"control only used {quarter / 1e6:.1f} MB"
