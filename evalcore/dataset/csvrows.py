"""CSV records with the lines they came from, in bounded memory, and what a stray quote does.

The `csv` module reads a quote that is never closed as one cell holding the rest of the
file, silently. Here every record knows its first and last line, so:

- a cell larger than `EVALCORE_MAX_FIELD_BYTES` stops the reading at that size (the
  csv module's field limit), refused with the line it starts on: a 50 MB one-line file
  is never read whole;
- a physical line longer than `LINE_FACTOR` x that limit is refused before it is held;
- a quote still open at the end of the file is refused (the line it opens on, and how
  many lines it would swallow);
- a quoted cell that spans lines which look like rows of the file (as many separators
  as the header) is imported with a warning naming its row and the first such line,
  as is a file with far fewer rows than lines;
- a lone carriage return (CR) outside quotes in a file whose lines end in LF would end
  a row in the middle of its line (the csv module splits it in two): refused with the
  row;
- a Ctrl-Z (0x1A) ending the file, an old DOS end-of-file mark, is left out (noted as a
  repair) instead of becoming a row.
"""
from __future__ import annotations

import csv
import io
from collections.abc import Callable, Iterator
from typing import IO

from evalcore.dataset.cells import check_row
from evalcore.error_text import shown
from evalcore.errors import DatasetError

LINE_FACTOR = 4
"""A physical line may hold this many times the cell limit (many cells on one line)."""
FEW_ROWS = 2
"""Warn when the file has more than this many lines per row (and 10 lines more than rows)."""
QUOTE_HINT = "check the quoting of cells that contain commas, quotes or line breaks"


class _Lines:
    """The text's lines for csv.reader: counted, capped in length, and watched for the
    end of the file and for quote characters (a record's quotes come in pairs)."""

    def __init__(self, text: IO[str], name: str, limit: int) -> None:
        self.text, self.name, self.limit = text, name, limit
        self.count, self.quotes, self.ended, self.last = 0, 0, False, ""
        self.ending = ""
        """How the first line ends ('\n', '\r\n' or '\r'): the file's line ending."""

    def __iter__(self) -> _Lines:
        return self

    def __next__(self) -> str:
        line = self.text.readline(self.limit * LINE_FACTOR + 1)
        if not line:
            self.ended = True
            raise StopIteration
        self.count += 1
        if len(line) > self.limit * LINE_FACTOR:
            raise DatasetError(f"{self.name} line {self.count:,}: longer than "
                               f"{self.limit * LINE_FACTOR:,} characters ({LINE_FACTOR} x "
                               "EVALCORE_MAX_FIELD_BYTES); split it into rows, or raise that "
                               "setting")
        self.quotes += line.count('"')
        self.last = line
        if self.count == 1:
            self.ending = line[len(line.rstrip("\r\n")):]
        return line

    def lone_cr(self) -> bool:
        """Whether the last line read ended in a CR alone in a file of LF line endings."""
        return self.last.endswith("\r") and self.ending not in ("\r", "")


Record = tuple[int, int, list[str]]
"""(first line, last line, cells) of one CSV record."""


def csv_records(opener: Callable[[], IO[bytes]], encoding: str, sep: str, name: str,
                limit: int, repairs: list[str] | None = None) -> Iterator[Record]:
    """The file's records with their line spans; DatasetError for a cell over `limit`,
    an over-long line, a quote never closed, a lone CR splitting a row, or malformed
    CSV. A Ctrl-Z ending the file is left out, noted in `repairs`."""
    held: Record | None = None
    split_at: int | None = None
    for row, record in enumerate(_records(opener, encoding, sep, name, limit), start=1):
        if split_at is not None:
            raise DatasetError(
                f"{name} row {split_at}: a lone carriage return (CR, \\r) outside quotes "
                "ends this row in the middle of its line while the file's lines end in line "
                "feeds, so the row would be split in two; remove the CR, or quote the cell "
                "that holds it (rows numbered as in a spreadsheet: the header is row 1)")
        if held is not None:
            yield held
        held, split_at = record[:3], (row if record[3] else None)
    if held is not None:
        fields = held[2]
        if fields and fields[-1].endswith("\x1a"):
            fields = fields[:-1] + [fields[-1][:-1]]
            if repairs is not None:
                repairs.append(f"line {held[1]:,}: the Ctrl-Z (0x1A) ending the file, an old "
                               "DOS end-of-file mark, was left out")
            if not any(fields):
                return
        yield held[0], held[1], fields


def _records(opener: Callable[[], IO[bytes]], encoding: str, sep: str, name: str,
             limit: int) -> Iterator[tuple[int, int, list[str], bool]]:
    """`csv_records`' records, each with whether a lone CR ended it."""
    csv.field_size_limit(limit)  # one process-wide value: the setting, the same for all
    with opener() as raw:
        lines = _Lines(io.TextIOWrapper(raw, encoding=encoding, newline=""), name, limit)
        start = 1
        try:
            for fields in csv.reader(lines, delimiter=sep):
                end = lines.count
                if lines.ended and end > start and lines.quotes % 2:
                    raise DatasetError(
                        f"{name} line {start:,}: a quote opened on this line is never closed, "
                        f"so the rest of the file ({end - start + 1:,} lines) would be one "
                        "cell; close the quote (\") or remove it (lines numbered from 1, as in "
                        "a text editor)")
                yield start, end, fields, lines.lone_cr()
                start, lines.quotes = end + 1, 0
        except csv.Error as exc:
            if "field larger than field limit" in str(exc):
                raise DatasetError(
                    f"{name} line {start:,}: a cell starting on this line is larger than "
                    f"{limit:,} characters (EVALCORE_MAX_FIELD_BYTES, read up to line "
                    f"{lines.count:,}); shorten it or raise that setting; if it is a quote "
                    "never closed, close it") from None
            raise DatasetError(f"{name} line {lines.count:,}: the CSV is malformed ({exc}); "
                               f"{QUOTE_HINT}") from None


def csv_rows(records: Iterator[Record], header: list[str], sep: str, name: str, limit: int,
             repairs: list[str], warnings: list[str]) -> Iterator[tuple[int, dict[str, str]]]:
    """Data rows with their spreadsheet numbers (header = row 1), each checked
    (`cells.check_row`).

    Real exports leave commas unquoted in the LAST column (free text such as an attacked
    question): the overflow is joined back into that column, restoring the text exactly,
    and every repair is noted (with its row) so the user can review it. Short rows are
    padded with empty cells; blank rows are skipped (their numbers are kept).
    """
    width, last_line, rows, spanning = len(header), 1, 0, None
    note = "rows numbered as in a spreadsheet: the header is row 1"
    for number, (first, last_line, fields) in enumerate(records, start=2):
        if not any(cell.strip() for cell in fields):
            continue
        rows += 1
        if last_line > first:
            spanning = spanning or (number, first)
            _swallowed(fields, header, sep, number, first, last_line, warnings)
        if len(fields) > width:
            cells = len(fields)
            fields = fields[: width - 1] + [sep.join(fields[width - 1:])]
            repairs.append(f"row {number}: {cells} cells for {width} columns; the extra "
                           f"cells were joined into the last column {shown(header[-1])} "
                           f"(an unquoted comma): {shown(fields[-1], 200)}")
        elif len(fields) < width:
            fields = fields + [""] * (width - len(fields))
        row = dict(zip(header, fields))
        check_row(name, f"row {number}", note, row, limit, decoded=True)
        yield number, row
    if spanning and not warnings and last_line > FEW_ROWS * (rows + 1) + 10:
        warnings.append(f"the file has {last_line:,} lines but {rows + 1:,} rows: cells span "
                        f"lines, the first at row {spanning[0]} (line {spanning[1]:,}); "
                        f"if that is not meant, {QUOTE_HINT}")


def _swallowed(fields: list[str], header: list[str], sep: str, number: int, first: int,
               last: int, warnings: list[str]) -> None:
    """Warn (once per file) about a cell whose lines look like rows of the file."""
    if warnings or len(header) < 2:
        return
    for column, text in zip(header, fields):
        inner = text.split("\n")[1:]
        looks = [line for line in inner if line.count(sep) >= len(header) - 1]
        if looks:
            warnings.append(f"row {number} (lines {first:,}-{last:,}): the cell in column "
                            f"{shown(column)} runs over {len(inner) + 1:,} lines, "
                            f"{len(looks):,} of them looking like rows of this file (first: "
                            f"{shown(looks[0])}); a quote is probably not closed where it "
                            "should be: check it, they were imported as one cell")
            return
