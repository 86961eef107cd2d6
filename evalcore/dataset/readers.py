"""Read CSV, JSONL, JSON and XLSX into a DataFrame of strings, or, for imports, as a
stream of rows (`stream_table`).

Every cell is read as text (`"0"` stays `"0"`, `"800.0"` stays `"800.0"`, blanks are `""`)
because the formats decide what a cell means, not pandas. Each frame carries in
`df.attrs` how to name its rows in error messages, so a user can find the row:
spreadsheet numbering for CSV/XLSX (header = row 1), line numbers for JSONL, item numbers
for JSON.

`stream_table` reads CSV/TSV/TXT row by row from the file (or the uploaded bytes) with
the `csv` module, never holding the file's text or a DataFrame, so a 67 MB import stays
in bounded memory; `read_table` builds its CSV frames from the same stream, so both read
a file the same way. XLSX sheets are streamed too, after their size is checked
(`dataset.workbook`). JSON and JSONL are read whole (a JSON document has to be), up to
`EVALCORE_MAX_IMPORT_BYTES`, then streamed; values JSON allows but a user does not mean
(a key given twice, NaN, Infinity, 1e5000) are refused naming the item and key.
"""
from __future__ import annotations

import hashlib
import io
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Union

from evalcore.config import max_import_bytes
from evalcore.dataset.cells import check_names, check_row, column_name, field_limit, name_problem
from evalcore.dataset.csvrows import csv_records, csv_rows
from evalcore.dataset.encoding import chunks, decode_text, detect_encoding
from evalcore.dataset.jsonfiles import read_json, read_jsonl
from evalcore.dataset.workbook import sheet_rows
from evalcore.error_text import shown, shown_list
from evalcore.errors import DatasetError

if TYPE_CHECKING:
    import pandas as pd

Source = Union[str, Path, bytes]

SUPPORTED_SUFFIXES = (".csv", ".tsv", ".txt", ".jsonl", ".json", ".xlsx", ".xlsm")
CSV_SUFFIXES = (".csv", ".tsv", ".txt")
XLSX_SUFFIXES = (".xlsx", ".xlsm")
__all__ = ["column_name", "decode_text", "detect_encoding"]  # re-exported from their homes

_ROW_NOTES = {
    "row": "rows numbered as in a spreadsheet: the header is row 1",
    "line": "lines numbered from 1, as in a text editor",
    "item": "items of the JSON list numbered from 1",
}


def load_source(source: Source, filename: str | None = None) -> tuple[bytes, str]:
    """The raw bytes and the file name of `source` (a path, or bytes plus `filename`)."""
    if isinstance(source, (bytes, bytearray, memoryview)):
        if not filename:
            raise DatasetError("uploaded bytes need a file name (e.g. 'questions.csv') "
                               "so the format can be recognised")
        return bytes(source), _file_name(Path(filename).name)
    path = Path(source)
    if not path.is_file():
        raise DatasetError(f"{path}: file not found; check the path")
    return path.read_bytes(), _file_name(filename or path.name)


def _file_name(name: str) -> str:
    """`name`, or a DatasetError when it holds a control or bidirectional-override
    character: the name becomes the dataset's, shown reordered or with hidden text."""
    problem = name_problem(name)
    if problem is not None:
        raise DatasetError(f"the file name {shown(name)} {problem}; rename the file")
    return name


def sha256_of(data: bytes) -> str:
    """Content hash used to notice that the same file is imported twice."""
    return hashlib.sha256(data).hexdigest()


Opener = Callable[[], IO[bytes]]


def opener_of(source: Source, filename: str | None = None) -> tuple[Opener, str]:
    """A function opening `source` as a binary stream (the file itself, never read
    whole), and the file name."""
    if isinstance(source, (bytes, bytearray, memoryview)):
        if not filename:
            raise DatasetError("uploaded bytes need a file name (e.g. 'questions.csv') "
                               "so the format can be recognised")
        data = bytes(source)
        return (lambda: io.BytesIO(data)), _file_name(Path(filename).name)
    path = Path(source)
    if not path.is_file():
        raise DatasetError(f"{path}: file not found; check the path")
    return (lambda: path.open("rb")), _file_name(filename or path.name)


def hash_stream(opener: Opener) -> str:
    """`sha256_of` the content, read in chunks."""
    digest = hashlib.sha256()
    for chunk in chunks(opener):
        digest.update(chunk)
    return digest.hexdigest()


@dataclass
class RowStream:
    """A table read row by row: its columns, how to name rows, and the rows themselves
    (user-visible row number, {column: cell text}), consumed once."""

    name: str
    columns: list[str]
    encoding: str
    unit: str
    rows: Iterator[tuple[int, dict[str, str]]]
    repairs: list[str] = field(default_factory=list)
    """Notes about rows fixed while reading; complete once `rows` is consumed."""
    warnings: list[str] = field(default_factory=list)
    """What the user should check (a quote that seems not closed where it should be),
    naming the first affected row; complete once `rows` is consumed."""

    def label(self, number: int) -> str:
        """'row 17', 'line 5' or 'item 3'."""
        return f"{self.unit} {number}"

    def note(self) -> str:
        """The numbering convention, for the end of an error message."""
        return _ROW_NOTES[self.unit]


def stream_table(source: Source, filename: str | None = None,
                 sheet: str | None = None) -> RowStream:
    """`read_table`'s rows one at a time (fully blank rows skipped); CSV files and
    XLSX sheets are never held in memory whole. `sheet`: which sheet of a workbook."""
    opener, name = opener_of(source, filename)
    suffix = Path(name).suffix.lower()
    if sheet is not None and suffix not in XLSX_SUFFIXES:
        raise DatasetError(f"{name}: a sheet ({shown(sheet)}) was named, but only an XLSX "
                           "workbook has sheets; leave out --sheet")
    if suffix in CSV_SUFFIXES:
        return _stream_csv(opener, name, suffix)
    if suffix in XLSX_SUFFIXES:
        return _stream_xlsx(opener, name, sheet)
    df = read_table(held_bytes(opener, name), name)
    columns = [str(c) for c in df.columns]
    numbers = df.attrs["row_numbers"]

    unit, limit = df.attrs["row_unit"], field_limit()

    def rows() -> Iterator[tuple[int, dict[str, str]]]:
        for position, values in enumerate(df.itertuples(index=False, name=None)):
            row = dict(zip(columns, values))
            check_row(name, f"{unit} {numbers[position]}", _ROW_NOTES[unit], row, limit)
            yield numbers[position], row

    return RowStream(name, columns, df.attrs["encoding"], unit, rows(),
                     df.attrs.get("repairs") or [], df.attrs.get("warnings") or [])


def _stream_csv(opener: Opener, name: str, suffix: str) -> RowStream:
    encoding = detect_encoding(opener, name)
    limit = field_limit()
    with opener() as raw:
        first = io.TextIOWrapper(raw, encoding=encoding, newline="").readline(limit)
    if not first.strip():
        raise DatasetError(f"{name}: the file is empty")
    sep = _sniff_delimiter(first, suffix)
    repairs: list[str] = []
    warnings: list[str] = []
    records = csv_records(opener, encoding, sep, name, limit, repairs)
    first_record = next(records, None)
    if first_record is None:  # only a Ctrl-Z
        raise DatasetError(f"{name}: the file is empty")
    header = [str(c).strip() for c in first_record[2]]
    _check_header(header, name)
    return RowStream(name, header, encoding, "row",
                     csv_rows(records, header, sep, name, limit, repairs, warnings),
                     repairs, warnings)


def held_bytes(opener: Opener, name: str) -> bytes:
    """The whole file, for formats read whole; refused above `EVALCORE_MAX_IMPORT_BYTES`
    before it is read."""
    cap = max_import_bytes()
    with opener() as fh:
        size = fh.seek(0, io.SEEK_END)
        if size > cap:
            raise DatasetError(f"{name}: the file is {size:,} bytes, more than the {cap:,} a "
                               "JSON or JSONL file may hold (it is read whole; "
                               "EVALCORE_MAX_IMPORT_BYTES); split it into smaller files or "
                               "save it as CSV, or raise that setting")
        fh.seek(0)
        return fh.read()


def read_table(source: Source, filename: str | None = None,
               sheet: str | None = None) -> "pd.DataFrame":
    """Read a CSV/TSV, JSONL, JSON or XLSX file into a DataFrame of `str` cells.

    `sheet` names the sheet of a workbook (needed when several hold data).

    `df.attrs` holds `filename`, `encoding`, `row_unit` ("row", "line" or "item"),
    `row_numbers` (the user-visible number of each row), `repairs` (notes about
    rows that were fixed while reading) and `warnings` (what to check, such as a quote
    that seems not closed). Fully blank rows are dropped.
    """
    opener, name = opener_of(source, filename)
    suffix = Path(name).suffix.lower()
    if suffix in XLSX_SUFFIXES:
        df, unit, numbers, encoding, repairs = _frame_of(_stream_xlsx(opener, name, sheet))
    elif suffix == ".jsonl":
        df, unit, numbers, encoding, repairs = read_jsonl(held_bytes(opener, name), name)
    elif suffix == ".json":
        df, unit, numbers, encoding, repairs = read_json(held_bytes(opener, name), name)
    elif suffix in CSV_SUFFIXES:
        df, unit, numbers, encoding, repairs = _frame_of(
            _stream_csv(opener, name, suffix))
    elif suffix == ".xls":
        raise DatasetError(f"{name}: old .xls workbooks are not supported; "
                           "save it as .xlsx or CSV UTF-8")
    else:
        raise DatasetError(f"{name}: unsupported file type {suffix or '(none)'}; "
                           f"use one of {', '.join(SUPPORTED_SUFFIXES)}")
    warnings = list(df.attrs.get("warnings") or [])
    df.columns = [column_name(c) for c in df.columns]
    _check_columns(df, name)
    keep = [i for i, row in enumerate(df.itertuples(index=False))
            if any(str(v).strip() for v in row)]
    df = df.iloc[keep].reset_index(drop=True)
    df.attrs.update(filename=name, encoding=encoding, row_unit=unit,
                    row_numbers=[numbers[i] for i in keep], repairs=repairs,
                    warnings=warnings)
    if df.empty:
        raise DatasetError(f"{name}: no data rows found; the first row must be the column "
                           "names and at least one row of data must follow")
    return df


def row_label(df: "pd.DataFrame", position: int) -> str:
    """How a user finds row `position` (0-based data row): 'row 17', 'line 5' or 'item 3'."""
    unit = df.attrs.get("row_unit", "row")
    numbers = df.attrs.get("row_numbers") or []
    number = numbers[position] if position < len(numbers) else position + 2
    return f"{unit} {number}"


def _check_columns(df: "pd.DataFrame", name: str) -> None:
    _check_header([str(c) for c in df.columns], name)


def _check_header(columns: list[str], name: str) -> None:
    check_names(name, columns, field_limit())
    blank = [i + 1 for i, c in enumerate(columns) if not c or c.startswith("Unnamed: ")]
    if blank and len(blank) == len(columns):
        raise DatasetError(f"{name}: the first row has no column names; add a header row")
    seen: set[str] = set()  # not columns.count(c) per column: 10,000 columns took seconds
    dupes = sorted({c for c in columns if c in seen or seen.add(c)})  # type: ignore[func-returns-value]
    if dupes:
        raise DatasetError(f"{name}: column names repeat: {shown_list(dupes)}; give every "
                           "column a unique name")


def _sniff_delimiter(text: str, suffix: str) -> str:
    if suffix == ".tsv":
        return "\t"
    header = text.split("\n", 1)[0]
    counts = {sep: header.count(sep) for sep in (",", "\t", ";")}
    best = max(counts, key=lambda s: counts[s])
    return best if counts[best] else ","


def _frame_of(stream: RowStream) -> tuple[Any, str, list[int], str, list[str]]:
    """A streamed table (CSV, a workbook's sheet) as a DataFrame, for `read_table`."""
    import pandas as pd

    numbers, rows = [], []
    for number, row in stream.rows:
        numbers.append(number)
        rows.append(list(row.values()))
    df = pd.DataFrame(rows, columns=stream.columns, dtype=str)
    df.attrs["warnings"] = stream.warnings
    return df, stream.unit, numbers, stream.encoding, stream.repairs


def _stream_xlsx(opener: Opener, name: str, sheet: str | None) -> RowStream:
    """One sheet's rows: the first row holding a value is the header; data cells keep
    their sheet row numbers; a value under no column name is refused."""
    limit = field_limit()
    title, rows = sheet_rows(opener, name, sheet, limit)
    first = next(rows, None)
    if first is None:
        raise DatasetError(f"{name}: sheet {shown(title)} is empty; the first row must be the "
                           "column names and at least one row of data must follow")
    header_row, cells = first
    header = [column_name(c) or f"Unnamed: {i}" for i, c in enumerate(cells)]
    _check_header(header, name)
    note = _ROW_NOTES["row"]

    def data() -> Iterator[tuple[int, dict[str, str]]]:
        from openpyxl.utils import get_column_letter

        for number, texts in rows:
            if not any(text.strip() for text in texts):
                continue
            if len(texts) > len(header):
                raise DatasetError(
                    f"{name} row {number}, cell {get_column_letter(len(texts))}{number}: a value "
                    f"in a column with no name in the header row (row {header_row}); name "
                    f"that column or clear the cell ({note})")
            row = dict(zip(header, texts + [""] * (len(header) - len(texts))))
            check_row(name, f"row {number}", note, row, limit)
            yield number, row

    return RowStream(name, header, "xlsx", "row", data())
