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
a file the same way. XLSX, JSON and JSONL are read whole (a workbook or a JSON document
has to be), then streamed.
"""
from __future__ import annotations

import codecs
import csv
import hashlib
import io
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Union

from evalcore.errors import DatasetError

if TYPE_CHECKING:
    import pandas as pd

Source = Union[str, Path, bytes]

SUPPORTED_SUFFIXES = (".csv", ".tsv", ".txt", ".jsonl", ".json", ".xlsx", ".xlsm")
CSV_SUFFIXES = (".csv", ".tsv", ".txt")
CHUNK_BYTES = 1 << 20
"""Bytes read at a time while hashing and checking the encoding of a file."""
MAX_CELL_CHARS = 64 * 1024 * 1024
"""Largest CSV cell read (the csv module's default, 128 KiB, is too small for long texts)."""

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
        return bytes(source), Path(filename).name
    path = Path(source)
    if not path.is_file():
        raise DatasetError(f"{path}: file not found; check the path")
    return path.read_bytes(), filename or path.name


def sha256_of(data: bytes) -> str:
    """Content hash used to notice that the same file is imported twice."""
    return hashlib.sha256(data).hexdigest()


def decode_text(data: bytes, filename: str) -> tuple[str, str]:
    """Decode text as UTF-8 (with or without BOM), UTF-16 (BOM), GB18030/GBK, or a guess.

    Returns (text, encoding). GB18030 is tried before guessing because short Chinese
    files saved by Excel on Chinese Windows are GBK, and guessers often miss them.
    """
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return data.decode("utf-16"), "utf-16"
    if data.startswith(b"\xef\xbb\xbf"):
        return data[3:].decode("utf-8", errors="strict"), "utf-8-sig"
    for encoding in ("utf-8", "gb18030"):
        try:
            return data.decode(encoding), encoding
        except UnicodeDecodeError:
            pass
    from charset_normalizer import from_bytes

    best = from_bytes(data).best()
    if best is None or best.encoding is None:
        raise DatasetError(f"{filename}: cannot tell the text encoding; save it as UTF-8 "
                           "(in Excel: 'CSV UTF-8 (comma delimited)')")
    return str(best), best.encoding


Opener = Callable[[], IO[bytes]]


def opener_of(source: Source, filename: str | None = None) -> tuple[Opener, str]:
    """A function opening `source` as a binary stream (the file itself, never read
    whole), and the file name."""
    if isinstance(source, (bytes, bytearray, memoryview)):
        if not filename:
            raise DatasetError("uploaded bytes need a file name (e.g. 'questions.csv') "
                               "so the format can be recognised")
        data = bytes(source)
        return (lambda: io.BytesIO(data)), Path(filename).name
    path = Path(source)
    if not path.is_file():
        raise DatasetError(f"{path}: file not found; check the path")
    return (lambda: path.open("rb")), filename or path.name


def _chunks(opener: Opener) -> Iterator[bytes]:
    with opener() as fh:
        while chunk := fh.read(CHUNK_BYTES):
            yield chunk


def hash_stream(opener: Opener) -> str:
    """`sha256_of` the content, read in chunks."""
    digest = hashlib.sha256()
    for chunk in _chunks(opener):
        digest.update(chunk)
    return digest.hexdigest()


def _decodes(opener: Opener, encoding: str) -> bool:
    decoder = codecs.getincrementaldecoder(encoding)()
    try:
        for chunk in _chunks(opener):
            decoder.decode(chunk)
        decoder.decode(b"", final=True)
    except UnicodeDecodeError:
        return False
    return True


def detect_encoding(opener: Opener, filename: str) -> str:
    """The encoding `decode_text` would pick, found without holding the text: a BOM,
    else UTF-8, else GB18030 (each checked over the whole file), else a guess from the
    first MiB."""
    with opener() as fh:
        head = fh.read(CHUNK_BYTES)
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):
        return "utf-16"
    if head.startswith(b"\xef\xbb\xbf"):
        return "utf-8-sig"
    for encoding in ("utf-8", "gb18030"):
        if _decodes(opener, encoding):
            return encoding
    from charset_normalizer import from_bytes

    best = from_bytes(head).best()
    if best is None or best.encoding is None:
        raise DatasetError(f"{filename}: cannot tell the text encoding; save it as UTF-8 "
                           "(in Excel: 'CSV UTF-8 (comma delimited)')")
    return best.encoding


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

    def label(self, number: int) -> str:
        """'row 17', 'line 5' or 'item 3'."""
        return f"{self.unit} {number}"

    def note(self) -> str:
        """The numbering convention, for the end of an error message."""
        return _ROW_NOTES[self.unit]


def stream_table(source: Source, filename: str | None = None) -> RowStream:
    """`read_table`'s rows one at a time (fully blank rows skipped); CSV files are
    never held in memory whole."""
    opener, name = opener_of(source, filename)
    suffix = Path(name).suffix.lower()
    if suffix in CSV_SUFFIXES:
        return _stream_csv(opener, name, suffix)
    df = read_table(opener().read(), name)
    columns = [str(c) for c in df.columns]
    numbers = df.attrs["row_numbers"]

    def rows() -> Iterator[tuple[int, dict[str, str]]]:
        for position, values in enumerate(df.itertuples(index=False, name=None)):
            yield numbers[position], dict(zip(columns, values))

    return RowStream(name, columns, df.attrs["encoding"], df.attrs["row_unit"], rows(),
                     df.attrs.get("repairs") or [])


def _stream_csv(opener: Opener, name: str, suffix: str) -> RowStream:
    encoding = detect_encoding(opener, name)
    csv.field_size_limit(max(csv.field_size_limit(), MAX_CELL_CHARS))
    with opener() as raw:
        first = io.TextIOWrapper(raw, encoding=encoding, newline="").readline()
    if not first.strip():
        raise DatasetError(f"{name}: the file is empty")
    sep = _sniff_delimiter(first, suffix)
    records = _csv_records(opener, encoding, sep, name)
    header = [str(c).strip() for c in next(records)]
    _check_header(header, name)
    repairs: list[str] = []
    return RowStream(name, header, encoding, "row",
                     _csv_rows(records, header, sep, repairs), repairs)


def _csv_records(opener: Opener, encoding: str, sep: str, name: str) -> Iterator[list[str]]:
    with opener() as raw:
        text = io.TextIOWrapper(raw, encoding=encoding, newline="")
        try:
            yield from csv.reader(text, delimiter=sep)
        except csv.Error as exc:
            raise DatasetError(f"{name}: the CSV is malformed ({exc}); check the quoting of "
                               "cells that contain commas, quotes or line breaks") from None


def _csv_rows(records: Iterator[list[str]], header: list[str], sep: str,
              repairs: list[str]) -> Iterator[tuple[int, dict[str, str]]]:
    """Data rows with their spreadsheet numbers (header = row 1).

    Real exports leave commas unquoted in the LAST column (free text such as an attacked
    question): the overflow is joined back into that column, restoring the text exactly,
    and every repair is noted (with its row) so the user can review it. Short rows are
    padded with empty cells; blank rows are skipped (their numbers are kept).
    """
    width = len(header)
    for number, fields in enumerate(records, start=2):
        if not any(cell.strip() for cell in fields):
            continue
        if len(fields) > width:
            cells = len(fields)
            fields = fields[: width - 1] + [sep.join(fields[width - 1:])]
            repairs.append(f"row {number}: {cells} cells for {width} columns; the extra "
                           f"cells were joined into the last column '{header[-1]}' "
                           f"(an unquoted comma): {fields[-1]!r}")
        elif len(fields) < width:
            fields = fields + [""] * (width - len(fields))
        yield number, dict(zip(header, fields))


def read_table(source: Source, filename: str | None = None) -> "pd.DataFrame":
    """Read a CSV/TSV, JSONL, JSON or XLSX (first sheet) file into a DataFrame of `str` cells.

    `df.attrs` holds `filename`, `encoding`, `row_unit` ("row", "line" or "item"),
    `row_numbers` (the user-visible number of each row) and `repairs` (notes about
    rows that were fixed while reading). Fully blank rows are dropped.
    """
    data, name = load_source(source, filename)
    suffix = Path(name).suffix.lower()
    if suffix in (".xlsx", ".xlsm"):
        df, unit, numbers, encoding, repairs = _read_xlsx(data, name)
    elif suffix == ".jsonl":
        df, unit, numbers, encoding, repairs = _read_jsonl(data, name)
    elif suffix == ".json":
        df, unit, numbers, encoding, repairs = _read_json(data, name)
    elif suffix in (".csv", ".tsv", ".txt"):
        df, unit, numbers, encoding, repairs = _read_csv(data, name)
    elif suffix == ".xls":
        raise DatasetError(f"{name}: old .xls workbooks are not supported; "
                           "save it as .xlsx or CSV UTF-8")
    else:
        raise DatasetError(f"{name}: unsupported file type {suffix or '(none)'}; "
                           f"use one of {', '.join(SUPPORTED_SUFFIXES)}")
    df.columns = [column_name(c) for c in df.columns]
    _check_columns(df, name)
    keep = [i for i, row in enumerate(df.itertuples(index=False))
            if any(str(v).strip() for v in row)]
    df = df.iloc[keep].reset_index(drop=True)
    df.attrs.update(filename=name, encoding=encoding, row_unit=unit,
                    row_numbers=[numbers[i] for i in keep], repairs=repairs)
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


def column_name(raw: Any) -> str:
    """A header or JSON key as the formats see it: stripped, byte-order marks removed.

    CBBQ's own JSON files start their first key with a BOM inside the quotes
    ('\\ufeffexample_id'); str.strip() keeps it, and the format would miss the column.
    """
    return str(raw).replace("\ufeff", "").strip()


def _check_columns(df: "pd.DataFrame", name: str) -> None:
    _check_header([str(c) for c in df.columns], name)


def _check_header(columns: list[str], name: str) -> None:
    blank = [i + 1 for i, c in enumerate(columns) if not c or c.startswith("Unnamed: ")]
    dupes = sorted({c for c in columns if columns.count(c) > 1})
    if dupes:
        raise DatasetError(f"{name}: column names repeat: {dupes}; give every column a unique name")
    if blank and len(blank) == len(columns):
        raise DatasetError(f"{name}: the first row has no column names; add a header row")


def _sniff_delimiter(text: str, suffix: str) -> str:
    if suffix == ".tsv":
        return "\t"
    header = text.split("\n", 1)[0]
    counts = {sep: header.count(sep) for sep in (",", "\t", ";")}
    best = max(counts, key=lambda s: counts[s])
    return best if counts[best] else ","


def _read_csv(data: bytes, name: str) -> tuple[Any, str, list[int], str, list[str]]:
    import pandas as pd

    stream = _stream_csv(lambda: io.BytesIO(data), name, Path(name).suffix.lower())
    numbers, rows = [], []
    for number, row in stream.rows:
        numbers.append(number)
        rows.append(list(row.values()))
    df = pd.DataFrame(rows, columns=stream.columns, dtype=str)
    return df, "row", numbers, stream.encoding, stream.repairs


def _read_xlsx(data: bytes, name: str) -> tuple[Any, str, list[int], str, list[str]]:
    import pandas as pd

    try:
        df = pd.read_excel(io.BytesIO(data), dtype=str, keep_default_na=False, engine="openpyxl")
    except Exception as exc:  # openpyxl raises several unrelated types for broken files
        raise DatasetError(f"{name}: cannot read the workbook ({exc}); save it again as .xlsx "
                           "from Excel or LibreOffice") from None
    return df, "row", [i + 2 for i in range(len(df))], "xlsx", []


def _cell(value: Any) -> str:
    """A JSON value as the text a CSV cell would hold; nested values stay JSON text."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def _frame(records: list[dict[str, Any]]) -> Any:
    import pandas as pd

    records = [{column_name(k): v for k, v in r.items()} for r in records]
    columns: dict[str, None] = {}
    for record in records:
        columns.update(dict.fromkeys(record))
    rows = [[_cell(r.get(c)) for c in columns] for r in records]
    return pd.DataFrame(rows, columns=list(columns), dtype=str)


def _read_jsonl(data: bytes, name: str) -> tuple[Any, str, list[int], str, list[str]]:
    text, encoding = decode_text(data, name)
    records, numbers = [], []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise DatasetError(f"{name} line {number}: not valid JSON ({exc.msg} at column "
                               f"{exc.colno}); every line must be one JSON object") from None
        if not isinstance(record, dict):
            raise DatasetError(f"{name} line {number}: expected a JSON object "
                               f"{{\"question\": ...}}, found {type(record).__name__}")
        records.append(record)
        numbers.append(number)
    if not records:
        raise DatasetError(f"{name}: no JSON objects found")
    return _frame(records), "line", numbers, encoding, []


def _read_json(data: bytes, name: str) -> tuple[Any, str, list[int], str, list[str]]:
    text, encoding = decode_text(data, name)
    try:
        payload = json.loads(text)
    except json.JSONDecodeError as exc:
        raise DatasetError(f"{name}: not valid JSON ({exc.msg} at line {exc.lineno}, column "
                           f"{exc.colno}); for one object per line name the file .jsonl") from None
    if isinstance(payload, dict) and isinstance(payload.get("data"), list):
        payload = payload["data"]
    if not isinstance(payload, list):
        raise DatasetError(f"{name}: expected a JSON list of objects or {{\"data\": [...]}}")
    for number, record in enumerate(payload, start=1):
        if not isinstance(record, dict):
            raise DatasetError(f"{name} item {number}: expected a JSON object, "
                               f"found {type(record).__name__}")
    return _frame(payload), "item", list(range(1, len(payload) + 1)), encoding, []
