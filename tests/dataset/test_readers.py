"""read_table: encodings, every cell as text, row numbering, JSON shapes, repairs."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalcore.dataset.readers import read_table, row_label
from evalcore.errors import DatasetError

CSV_TEXT = "id,question,answer\n1,小明有3个苹果，又买了5个，一共有几个？,8\n2,零的平方是多少？,0\n"


@pytest.mark.parametrize("encoding,expected", [
    ("utf-8", "utf-8"), ("utf-8-sig", "utf-8-sig"), ("gbk", "gb18030"),
    ("gb18030", "gb18030"), ("utf-16", "utf-16"),
])
def test_csv_encodings_are_detected(tmp_path: Path, encoding: str, expected: str) -> None:
    path = tmp_path / "maths.csv"
    path.write_bytes(CSV_TEXT.encode(encoding))
    df = read_table(path)
    assert list(df.columns) == ["id", "question", "answer"]  # no BOM glued to 'id'
    assert df.loc[0, "question"] == "小明有3个苹果，又买了5个，一共有几个？"
    assert df.attrs["encoding"] == expected


def test_cells_stay_text(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    path.write_text("a,b,c\n0,007,NA\n1.0,,null\n", encoding="utf-8")
    df = read_table(path)
    assert df.to_dict("records") == [{"a": "0", "b": "007", "c": "NA"},
                                     {"a": "1.0", "b": "", "c": "null"}]


def test_bytes_need_a_filename() -> None:
    with pytest.raises(DatasetError, match="file name"):
        read_table(b"a,b\n1,2\n")
    assert read_table(b"a,b\n1,2\n", "upload.csv").shape == (1, 2)


def test_blank_rows_are_dropped_but_numbering_follows_the_sheet(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    path.write_text("q,a\nfirst,1\n,\nthird,3\n", encoding="utf-8")
    df = read_table(path)
    assert df["q"].tolist() == ["first", "third"]
    assert [row_label(df, i) for i in range(2)] == ["row 2", "row 4"]


def test_semicolon_and_tab_separated(tmp_path: Path) -> None:
    (tmp_path / "s.csv").write_text("q;a\nx;1\n", encoding="utf-8")
    (tmp_path / "t.tsv").write_text("q\ta\nx\t1\n", encoding="utf-8")
    assert read_table(tmp_path / "s.csv").to_dict("records") == [{"q": "x", "a": "1"}]
    assert read_table(tmp_path / "t.tsv").to_dict("records") == [{"q": "x", "a": "1"}]


def test_unquoted_comma_in_last_column_is_joined_and_reported(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    path.write_text("q,answer,note\nok,1,fine\nbad,2,first, then more\n", encoding="utf-8")
    df = read_table(path)
    assert df.loc[1, "note"] == "first, then more"
    assert len(df.attrs["repairs"]) == 1 and "row 3" in df.attrs["repairs"][0]


def test_jsonl_lines_and_nested_values(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    rows = [{"q": "a", "label": 0, "info": {"x": [1, 2]}}, {"q": "b", "label": 2, "extra": None}]
    path.write_text(json.dumps(rows[0]) + "\n\n" + json.dumps(rows[1]) + "\n", encoding="utf-8")
    df = read_table(path)
    assert df["label"].tolist() == ["0", "2"]
    assert json.loads(df.loc[0, "info"]) == {"x": [1, 2]}
    assert df.loc[0, "extra"] == "" and df.loc[1, "info"] == ""
    assert row_label(df, 1) == "line 3"


def test_jsonl_bad_line_is_named(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text('{"q": "a"}\n{"q": oops}\n', encoding="utf-8")
    with pytest.raises(DatasetError, match=r"t\.jsonl line 2: not valid JSON"):
        read_table(path)


@pytest.mark.parametrize("payload", [
    [{"q": "a", "n": 1}, {"q": "b", "n": 2}],
    {"data": [{"q": "a", "n": 1}, {"q": "b", "n": 2}]},
])
def test_json_list_or_data_key(tmp_path: Path, payload: object) -> None:
    path = tmp_path / "t.json"
    path.write_text(json.dumps(payload), encoding="utf-8")
    df = read_table(path)
    assert df.to_dict("records") == [{"q": "a", "n": "1"}, {"q": "b", "n": "2"}]
    assert row_label(df, 1) == "item 2"


def test_json_of_wrong_shape(tmp_path: Path) -> None:
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"rows": []}), encoding="utf-8")
    with pytest.raises(DatasetError, match="list of objects"):
        read_table(path)


def test_xlsx_numbers_become_text(tmp_path: Path) -> None:
    import openpyxl

    wb = openpyxl.Workbook()
    ws = wb.active
    ws.append(["question", "answer"])
    ws.append(["一加一", 2])
    ws.append(["a half", 0.5])
    ws.append(["zero", "0"])
    wb.save(tmp_path / "t.xlsx")
    df = read_table(tmp_path / "t.xlsx")
    assert df["answer"].tolist() == ["2", "0.5", "0"]
    assert row_label(df, 2) == "row 4"


def test_unsupported_and_missing_files(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match="unsupported file type .pdf"):
        read_table(b"%PDF", "paper.pdf")
    with pytest.raises(DatasetError, match=".xls workbooks are not supported"):
        read_table(b"\xd0\xcf", "old.xls")
    with pytest.raises(DatasetError, match="file not found"):
        read_table(tmp_path / "nope.csv")


def test_header_only_file_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "h.csv").write_text("question,answer\n", encoding="utf-8")
    with pytest.raises(DatasetError, match="no data rows"):
        read_table(tmp_path / "h.csv")
