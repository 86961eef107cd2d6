"""XLSX imports: bounded before anything is parsed, cells read as a user sees them, the
sheet chosen when a workbook has several."""
from __future__ import annotations

import datetime as dt
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from evalcore.dataset import parse_dataset, read_table
from evalcore.dataset.workbook import SeveralSheetsError, number_text
from evalcore.errors import DatasetError
from tests.dataset.test_malformed_files import REPO, _migrated_home
from tests.dataset.workbooks import workbook, zip_bomb

PEAK_PROBE = ("import re, sys\nfrom evalcore import cli\n"
              "code = cli.main(['datasets', 'import', sys.argv[1]])\n"
              "status = open('/proc/self/status').read()\n"
              "print(int(re.search(r'VmHWM:\\s+(\\d+)', status).group(1)) // 1024)\n"
              "sys.exit(code)\n")
PEAK_BOUND_MB = 500


def _import_peak(path: Path, home: Path, **env: str) -> tuple[int, str, int]:
    """(exit code, stderr, peak RSS in MB) of `datasets import path` in a fresh process."""
    done = subprocess.run([sys.executable, "-c", PEAK_PROBE, str(path)], capture_output=True,
                          text=True, cwd=REPO, timeout=300, check=False,
                          env={"EVALCORE_HOME": str(home), "PATH": "/usr/bin:/bin", **env})
    return done.returncode, done.stderr, int(done.stdout.strip().splitlines()[-1])


def test_a_zip_bomb_is_refused_in_one_line_in_bounded_memory(tmp_path: Path) -> None:
    """2 MB of zip, one 2 GiB cell: refused from the zip directory (the CLI used to
    hold the cell, gigabytes; docs/imports.md); with the size cap raised, the streamed
    scan refuses the cell itself, still in bounded memory."""
    bomb = zip_bomb(tmp_path / "bomb.xlsx")
    assert bomb.stat().st_size < 3 << 20
    home = _migrated_home(tmp_path)
    code, err, peak = _import_peak(bomb, home)
    assert code == 2 and len(err.splitlines()) == 1, err[:500]
    assert re.search(r"bomb\.xlsx: the workbook unpacks to 2,14\d,\d{3},\d{3} bytes "
                     r"\(xl/worksheets/sheet1\.xml: .*EVALCORE_MAX_IMPORT_BYTES", err), err
    assert peak < PEAK_BOUND_MB, peak
    code, err, peak = _import_peak(bomb, home, EVALCORE_MAX_IMPORT_BYTES=str(4 << 30))
    assert code == 2 and len(err.splitlines()) == 1, err[:500]
    assert "sheet 'Sheet': cell B2 holds more than 1,048,576 characters" in err, err
    assert peak < PEAK_BOUND_MB, peak


def test_a_long_cell_and_a_long_shared_text_are_named_by_their_cell(
        tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("EVALCORE_MAX_FIELD_BYTES", "2048")
    path = workbook(tmp_path / "long.xlsx", {"Q": [["question", "answer"], ["q", "x" * 3000]]})
    with pytest.raises(DatasetError, match=r"long\.xlsx, sheet 'Q': cell B2 holds more than "
                                           r"2,048 characters"):
        read_table(path)
    shared = tmp_path / "shared.xlsx"  # the same, the text kept in sharedStrings.xml
    with zipfile.ZipFile(path) as src, zipfile.ZipFile(shared, "w") as out:
        for info in src.infolist():
            data = src.read(info.filename)
            if info.filename == "xl/worksheets/sheet1.xml":
                data = re.sub(rb'<c r="B2" t="inlineStr"><is><t>x+</t></is></c>',
                              b'<c r="B2" t="s"><v>0</v></c>', data)
            out.writestr(info, data)
        out.writestr("xl/sharedStrings.xml",
                     '<sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">'
                     f'<si><t>{"y" * 3000}</t></si></sst>')
    with pytest.raises(DatasetError, match=r"cell B2 holds more than 2,048 characters"):
        read_table(shared)


def test_an_error_cell_is_named_not_a_crash(tmp_path: Path) -> None:
    """`#DIV/0!` crashed the import with TypeError (cells.py) and exit 1."""
    path = workbook(tmp_path / "div0.xlsx", {"Sheet": [["question", "answer"], ["q", 1]]})
    _replace_cell(path, b'<c r="B2" t="n"><v>1</v></c>',
                  b'<c r="B2" t="e"><f>1/0</f><v>#DIV/0!</v></c>')
    with pytest.raises(DatasetError, match=r"div0\.xlsx, sheet 'Sheet', cell B2: holds the "
                                           r"error '#DIV/0!'"):
        parse_dataset(path)


def test_a_formula_never_calculated_is_named(tmp_path: Path) -> None:
    path = workbook(tmp_path / "f.xlsx", {"Sheet": [["question", "answer"], ["q", "=1+1"]]})
    with pytest.raises(DatasetError, match=r"cell B2 holds a formula with no saved result"):
        read_table(path)


def test_dates_booleans_numbers_and_saved_formula_results_read_as_shown(tmp_path: Path) -> None:
    path = workbook(tmp_path / "kinds.xlsx", {"Sheet": [
        ["question", "answer"],
        ["date", dt.datetime(2024, 3, 5)], ["time of day", dt.datetime(2024, 3, 5, 14, 30)],
        ["bool", True], ["float", 0.1 + 0.2], ["int", 800], ["sum", 2]]})
    _replace_cell(path, b'<c r="B7" t="n"><v>2</v></c>', b'<c r="B7"><f>1+1</f><v>2</v></c>')
    df = read_table(path)
    assert df["answer"].tolist() == ["2024-03-05", "2024-03-05 14:30:00", "TRUE", "0.3", "800",
                                     "2"]
    assert df.attrs["row_numbers"] == [2, 3, 4, 5, 6, 7]


def test_number_text_is_what_excel_shows() -> None:
    assert [number_text(v) for v in (0.5, 800.0, 1e-05, 0.1 + 0.2, 1e20, -3.0)] == [
        "0.5", "800", "1e-05", "0.3", "1e+20", "-3"]


def test_several_sheets_are_refused_without_a_choice_and_read_with_one(
        tmp_path: Path, run) -> None:
    """Sheets after the first were ignored without a word."""
    path = workbook(tmp_path / "two.xlsx", {
        "easy": [["question", "answer"], ["1+1", 2]],
        "empty": [],
        "hard": [["question", "answer"], ["2+2", 4], ["3+3", 6]]})
    with pytest.raises(SeveralSheetsError) as caught:
        read_table(path)
    assert caught.value.sheets == ["easy", "hard"]
    code, out, err = run("import", str(path))
    assert code == 2 and out == "" and len(err.splitlines()) == 1
    assert "two.xlsx: the workbook has 2 sheets with data, ['easy', 'hard']; choose one " \
           "(--sheet NAME" in err
    code, out, err = run("import", str(path), "--sheet", "hard")
    assert code == 0 and ": 2 items," in out, err
    code, out, err = run("import", str(path), "--sheet", "nope", "--name", "x")
    assert code == 2 and "no sheet named 'nope'; its sheets are ['easy', 'empty', 'hard']" in err
    one = workbook(tmp_path / "one.xlsx", {"data": [["question", "answer"], ["q", 1]],
                                           "notes": []})
    assert read_table(one)["question"].tolist() == ["q"]  # empty sheets are not a choice


def test_a_value_under_no_column_name_is_refused(tmp_path: Path) -> None:
    path = workbook(tmp_path / "extra.xlsx", {"S": [["question", "answer"], ["q", 1, "note"]]})
    with pytest.raises(DatasetError, match=r"extra\.xlsx row 2, cell C2: a value in a column "
                                           r"with no name"):
        read_table(path)


def test_a_doctype_is_refused(tmp_path: Path) -> None:
    path = workbook(tmp_path / "dtd.xlsx", {"S": [["question", "answer"], ["q", 1]]})
    _replace_cell(path, b"<worksheet", b'<!DOCTYPE x [<!ENTITY a "aaaa">]><worksheet')
    with pytest.raises(DatasetError, match=r"declares a DOCTYPE"):
        read_table(path)


def test_a_declared_huge_sheet_is_not_padded(tmp_path: Path) -> None:
    """A header at A1 and one value at A1048576: two rows read, not a million padded ones
    (openpyxl's iter_rows fills every missing row and column up to the dimension)."""
    path = workbook(tmp_path / "far.xlsx", {"S": [["question", "answer"], ["q", 1]]})
    _replace_cell(path, b'<dimension ref="A1:B2"/>', b'<dimension ref="A1:XFD1048576"/>')
    _replace_cell(path, b"</sheetData>", b'<row r="1048576"><c r="A1048576" t="inlineStr">'
                                         b"<is><t>far</t></is></c></row></sheetData>")
    df = read_table(path)
    assert df["question"].tolist() == ["q", "far"]
    assert df.attrs["row_numbers"] == [2, 1048576]


def _replace_cell(path: Path, old: bytes, new: bytes) -> None:
    """Rewrite the first sheet's XML (what openpyxl cannot write: errors, saved results)."""
    with zipfile.ZipFile(path) as src:
        members = [(info, src.read(info.filename)) for info in src.infolist()]
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as out:
        for info, data in members:
            if info.filename == "xl/worksheets/sheet1.xml":
                assert old in data, data[:800]
                data = data.replace(old, new, 1)
            out.writestr(info, data)


def test_a_sheet_named_for_a_csv_is_refused(run, tmp_path: Path) -> None:
    path = tmp_path / "plain.csv"
    path.write_text("question,answer\nq,1\n", encoding="utf-8")
    code, out, err = run("import", str(path), "--sheet", "S")
    assert code == 2 and "plain.csv: a sheet ('S') was named, but only an XLSX" in err
