"""Hostile input for the readers changed for bounded, honest imports: whatever the cells,
bytes or encodings, a workbook, CSV or JSON file is read as written or refused with the
project's one-line `DatasetError`, never another exception."""
from __future__ import annotations

import csv
import datetime as dt
import io
import json
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evalcore.dataset import read_table
from evalcore.errors import DatasetError
from tests.dataset.workbooks import workbook

FUZZ = settings(max_examples=60, deadline=None,
                suppress_health_check=[HealthCheck.too_slow])
_ODD = st.sampled_from(["\r", "\n", "\r\n", "\x1a", "\x00", "\t", '"', ",", "\u202e", "é",
                        "题", "ｶ", "😀", "#DIV/0!", "=1+1", " ", "NaN", "Infinity"])
_TEXT = st.lists(st.one_of(_ODD, st.text(max_size=6)), max_size=8).map("".join)
_CELL = st.one_of(st.none(), _TEXT, st.integers(-10**15, 10**15), st.booleans(),
                  st.floats(allow_nan=False, allow_infinity=False),
                  st.datetimes(min_value=dt.datetime(1900, 3, 1),
                               max_value=dt.datetime(9999, 1, 1)))


def _one_line_refusal(exc: DatasetError) -> None:
    assert str(exc) and "\n" not in str(exc), str(exc)[:300]


def _legal(value: object) -> object:
    """openpyxl refuses control characters in cells; Excel cannot hold them either."""
    if isinstance(value, str):
        return "".join(c for c in value if c in "\t\n\r" or ord(c) >= 0x20)
    return value


@FUZZ
@given(rows=st.lists(st.lists(_CELL, min_size=1, max_size=4), min_size=1, max_size=6),
       sheets=st.integers(1, 3))
def test_any_cells_in_any_sheets_are_read_or_refused(rows: list[list[object]],
                                                     sheets: int) -> None:
    with tempfile.TemporaryDirectory() as folder:
        book = {f"s{i}": [["question", "answer"]] + [[_legal(v) for v in row] for row in rows]
                for i in range(sheets)}
        path = workbook(Path(folder) / "fuzz.xlsx", book)
        try:
            df = read_table(path, sheet="s0" if sheets > 1 else None)
        except DatasetError as exc:
            _one_line_refusal(exc)
            return
        assert all(isinstance(v, str) for v in df.to_numpy().ravel())


@FUZZ
@given(position=st.integers(0, 10**6), garbage=st.binary(min_size=1, max_size=64))
def test_a_workbook_with_damaged_bytes_is_read_or_refused(position: int, garbage: bytes) -> None:
    with tempfile.TemporaryDirectory() as folder:
        data = bytearray(workbook(Path(folder) / "ok.xlsx",
                                  {"S": [["question", "answer"], ["q", 1]]}).read_bytes())
    at = position % len(data)
    data[at:at + len(garbage)] = garbage
    try:
        read_table(bytes(data), "damaged.xlsx")
    except DatasetError as exc:
        _one_line_refusal(exc)


@FUZZ
@given(rows=st.lists(st.tuples(_TEXT, _TEXT), min_size=1, max_size=8))
def test_csv_written_by_a_csv_writer_reads_back_as_written_or_is_refused(
        rows: list[tuple[str, str]]) -> None:
    """Cells holding CR, LF, Ctrl-Z, quotes: quoted by the writer (CRLF rows, as Excel
    writes them, so a CR is quoted too), so never split, never joined, never changed (a
    Ctrl-Z ending the file is the one noted repair)."""
    rows = [(q.replace("\x00", ""), a.replace("\x00", "")) for q, a in rows]
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(["question", "answer"])
    writer.writerows(rows)
    try:
        df = read_table(out.getvalue().encode("utf-8", errors="surrogatepass"), "w.csv")
    except DatasetError as exc:
        _one_line_refusal(exc)
        return
    kept = [list(r) for r in rows if any(c.strip() for c in r)]
    read = df.values.tolist()
    if df.attrs["repairs"]:
        assert "Ctrl-Z" in df.attrs["repairs"][0] and kept[-1][-1].endswith("\x1a")
        kept[-1][-1] = kept[-1][-1][:-1]
        kept = [r for r in kept if any(c.strip() for c in r)]
    assert read == kept


@FUZZ
@given(pairs=st.lists(st.tuples(st.sampled_from(["question", "answer", "q", " question"]),
                                st.sampled_from(['"a"', "1", "NaN", "Infinity", "-Infinity",
                                                 "1e5000", "1.5", "null", "[1, 2]"])),
                      min_size=1, max_size=5))
def test_json_objects_with_odd_keys_and_numbers_are_read_as_meant_or_refused(
        pairs: list[tuple[str, str]]) -> None:
    text = "{" + ", ".join(f"{json.dumps(k)}: {v}" for k, v in pairs) + "}"
    keys = [k.strip() for k, _ in pairs]
    for data, name in ((f"[{text}]".encode(), "odd.json"), (text.encode(), "odd.jsonl")):
        try:
            df = read_table(data, name)
        except DatasetError as exc:
            _one_line_refusal(exc)
            continue
        assert len(set(keys)) == len(keys)
        assert not {"NaN", "Infinity", "-Infinity", "1e5000"} & {v for _, v in pairs}
        assert list(df.columns) == keys


_SCRIPTS = st.sampled_from(["问题答案计算", "這是繁體中文", "日本語のテストｶﾀｶﾅ", "한국어 질문",
                            "Сколько будет", "café naïve", "ئۇيغۇرچە", "😀𠀀", "Ελληνικά"])
_ENCODINGS = st.sampled_from(["gb18030", "gbk", "big5", "shift_jis", "euc_kr", "cp1251",
                              "cp1252", "cp1250", "cp1253", "utf-8", "utf-16"])


@FUZZ
@given(lines=st.lists(st.tuples(_SCRIPTS, _ENCODINGS, st.sampled_from(["\n", "\r\n", "\r"])),
                      min_size=1, max_size=12))
def test_lines_in_mixed_scripts_and_encodings_are_read_or_refused(
        lines: list[tuple[str, str, str]]) -> None:
    """If every line is in one encoding and the file is accepted, it reads as written."""
    data = b"question,answer\n"
    for text, encoding, end in lines:
        data += (f"{text},1{end}").encode(encoding, errors="replace")
    try:
        df = read_table(data, "mixed.csv")
    except DatasetError as exc:
        _one_line_refusal(exc)
        return
    encodings = {e for _, e, _ in lines}
    if len(encodings) == 1 and df.attrs["encoding"] in encodings:
        written = [t.encode(e, errors="replace").decode(e) for t, e, _ in lines]
        assert all(q.strip() in written for q in df["question"])
