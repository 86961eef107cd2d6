"""Read one sheet of an .xlsx workbook row by row, as the text a user sees in each cell.

The workbook's size is checked first (`workbook_bounds`: nothing is parsed before its
zip directory and XML are found within bounds); then openpyxl (read-only, saved results
of formulas) parses the chosen sheet one row at a time, never padding it to the size a
file declares. Cells become the text a user means:

- numbers as Excel shows them (15 significant digits: 0.1+0.2 is '0.3', 800 is '800');
- dates and times in ISO form ('2024-03-05', '2024-03-05 14:30:00', '14:30:00');
- booleans as Excel writes them: 'TRUE', 'FALSE';
- an error (#DIV/0!, #N/A ...) or a formula never calculated is refused, naming the cell.

A workbook with several sheets holding data is imported only with a sheet named
(`--sheet`, or the page's sheet box): `SeveralSheetsError` lists them.
"""
from __future__ import annotations

import datetime as dt
import zipfile
from collections.abc import Callable, Iterator
from typing import IO, Any

from evalcore.config import max_import_bytes
from evalcore.dataset.workbook_bounds import BROKEN_ZIP, RESAVE, check_zip, scan_workbook
from evalcore.error_text import shown, shown_list
from evalcore.errors import DatasetError

Opener = Callable[[], IO[bytes]]
Row = tuple[int, list[str]]
"""(sheet row number, cell texts from column A)."""


class SeveralSheetsError(DatasetError):
    """The workbook has several sheets with data and none was chosen (`sheets` names them)."""

    def __init__(self, message: str, sheets: list[str]) -> None:
        super().__init__(message)
        self.sheets = sheets


def sheet_rows(opener: Opener, name: str, sheet: str | None, limit: int
               ) -> tuple[str, Iterator[Row]]:
    """The chosen sheet's name and its non-empty rows (checked for size first)."""
    fh = opener()
    try:
        archive = _zip(fh, name)
        check_zip(archive, name, max_import_bytes())
        scan = scan_workbook(archive, name, limit)
        book = _load(fh, name)
    except BaseException:
        fh.close()
        raise
    try:
        sheets = {ws.title: ws for ws in book.worksheets}
        filled = [title for title, ws in sheets.items()
                  if scan.sheets.get(ws._worksheet_path) is None
                  or scan.sheets[ws._worksheet_path].filled]
        title = _choose(name, sheet, list(sheets), filled)
        ws = sheets[title]
        found = scan.sheets.get(ws._worksheet_path)
        if found is not None and found.problem:
            raise DatasetError(f"{name}, sheet {shown(title)}: {found.problem}")
    except BaseException:
        book.close()
        fh.close()
        raise
    return title, _rows(book, ws, fh, name, title)


def _zip(fh: IO[bytes], name: str) -> zipfile.ZipFile:
    try:
        return zipfile.ZipFile(fh)
    except BROKEN_ZIP as exc:
        raise DatasetError(f"{name}: cannot read the workbook ({str(exc)[:120]}); "
                           f"{RESAVE}") from None


def _load(fh: IO[bytes], name: str) -> Any:
    import openpyxl

    try:
        return openpyxl.load_workbook(fh, read_only=True, data_only=True, keep_links=False)
    except Exception as exc:  # noqa: BLE001 - openpyxl raises many unrelated types
        raise DatasetError(f"{name}: cannot read the workbook ({str(exc)[:120]}); "
                           f"{RESAVE}") from None


def _choose(name: str, sheet: str | None, titles: list[str], filled: list[str]) -> str:
    if sheet is not None:
        if sheet not in titles:
            raise DatasetError(f"{name}: no sheet named {shown(sheet)}; its sheets are "
                               f"{shown_list(titles)}")
        return sheet
    if len(filled) > 1:
        raise SeveralSheetsError(
            f"{name}: the workbook has {len(filled)} sheets with data, "
            f"{shown_list(filled)}; choose one (--sheet NAME, or the Sheet box on the "
            "Datasets page)", filled)
    if not filled and not titles:
        raise DatasetError(f"{name}: the workbook has no worksheet; {RESAVE}")
    return (filled or titles)[0]


def _rows(book: Any, ws: Any, fh: IO[bytes], name: str, title: str) -> Iterator[Row]:
    """Rows as read by openpyxl's own sheet parser: sparse, never padded to a declared
    size (`ReadOnlyWorksheet.iter_rows` fills every missing cell up to the dimension)."""
    from openpyxl.worksheet._reader import WorkSheetParser

    try:
        with ws._get_source() as source:
            parser = WorkSheetParser(source, ws._shared_strings, data_only=True,
                                     epoch=book.epoch, date_formats=book._date_formats,
                                     timedelta_formats=book._timedelta_formats)
            for number, cells in parser.parse():
                texts: list[str] = []
                for found in cells:
                    column = found["column"]
                    text = cell_text(found["value"], found["data_type"], name, title,
                                     number, column)
                    if text:
                        texts.extend([""] * (column - len(texts)))
                        texts[column - 1] = text
                if texts:
                    yield number, texts
    except DatasetError:
        raise
    except Exception as exc:  # noqa: BLE001 - a sheet broken in ways the scan misses
        raise DatasetError(f"{name}, sheet {shown(title)}: cannot read the sheet "
                           f"({str(exc)[:120]}); {RESAVE}") from None
    finally:
        book.close()
        fh.close()


def cell_text(value: Any, data_type: str, name: str, sheet: str, row: int, column: int) -> str:
    """What a user sees in the cell, as text; DatasetError for an error value."""
    if value is None:
        return ""
    if data_type == "e":
        from openpyxl.utils import get_column_letter

        raise DatasetError(
            f"{name}, sheet {shown(sheet)}, cell {get_column_letter(column)}{row}: holds the "
            f"error {shown(str(value)[:20])} (a formula that failed, or a date out of range); "
            "fix it in the workbook or clear the cell (rows numbered as in a spreadsheet)")
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, dt.datetime):
        if value.time() == dt.time(0):
            return value.date().isoformat()
        return value.isoformat(sep=" ")
    if isinstance(value, (dt.date, dt.time)):
        return value.isoformat()
    if isinstance(value, dt.timedelta):
        return str(value)
    if isinstance(value, float):
        return number_text(value)
    return str(value)


def number_text(value: float) -> str:
    """A float as Excel shows it: 15 significant digits, no '.0' on whole numbers."""
    shown_value = float(f"{value:.15g}")
    if shown_value.is_integer() and abs(shown_value) < 1e15:
        return str(int(shown_value))
    return repr(shown_value)
