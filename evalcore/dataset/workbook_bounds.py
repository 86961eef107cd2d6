"""A workbook's size, checked before any of it is parsed: the zip bomb stops here.

An .xlsx file is a zip of XML. 2 MB of zip can unpack to a 2 GiB cell; openpyxl (and
pandas over it) would then hold the cell, its XML and copies of both. So, in order:

1. the zip's directory: member count and the unpacked sizes it declares, against
   `EVALCORE_MAX_IMPORT_BYTES` (zipfile stops reading a member at its declared size, so
   a member that lies is cut short and fails its CRC check, never grows);
2. every XML member streamed through expat in chunks, counting instead of keeping: no
   DOCTYPE (entity expansion), no text over `EVALCORE_MAX_FIELD_BYTES` characters in one
   cell or shared string, at most `MAX_ROWS` rows and `MAX_CELLS` cells a sheet.

Only then does openpyxl read the workbook (`dataset.workbook`). Problems of one sheet
are kept per sheet and raised only for the sheet chosen.
"""
from __future__ import annotations

import zipfile
import zlib
from dataclasses import dataclass, field
from xml.parsers import expat

from evalcore.errors import DatasetError

MAX_MEMBERS = 10_000
"""Most files a workbook's zip may hold (Excel writes a few dozen)."""
MAX_ROWS = 1_048_576
"""Most rows a sheet may hold: Excel's own limit."""
MAX_COLUMNS = 16_384
"""Most columns (A to XFD): Excel's own limit."""
MAX_CELLS = 5_000_000
"""Most cells a sheet, or shared strings a workbook, may hold (memory stays bounded)."""
CHUNK = 1 << 20
RESAVE = "save it again as .xlsx from Excel or LibreOffice"
BROKEN_ZIP = (zipfile.BadZipFile, zlib.error, OSError, EOFError, ValueError,
              NotImplementedError, RuntimeError)
"""What zipfile raises for a damaged, encrypted or unknown-method zip."""


@dataclass
class SheetScan:
    """What the scan of one worksheet found: its size and its first problem, if any."""

    rows: int = 0
    cells: int = 0
    filled: int = 0
    """Cells holding a value (a sheet with none is not offered as a choice)."""
    problem: str | None = None
    """Why this sheet cannot be imported (raised only if it is the one chosen)."""


@dataclass
class WorkbookScan:
    """The scans of a workbook's sheets, by member path ('xl/worksheets/sheet1.xml')."""

    sheets: dict[str, SheetScan] = field(default_factory=dict)


class _Stop(Exception):
    """A problem found while scanning; ends the scan of this member."""


def check_zip(archive: zipfile.ZipFile, name: str, cap: int) -> None:
    """Refuse a workbook whose zip declares more than `cap` unpacked bytes or too many
    members, naming the largest member; nothing is unpacked."""
    members = archive.infolist()
    if len(members) > MAX_MEMBERS:
        raise DatasetError(f"{name}: the workbook holds {len(members):,} files, more than "
                           f"the {MAX_MEMBERS:,} a workbook has; {RESAVE}")
    total = sum(m.file_size for m in members)
    if total > cap:
        largest = max(members, key=lambda m: m.file_size)
        raise DatasetError(
            f"{name}: the workbook unpacks to {total:,} bytes ({largest.filename}: "
            f"{largest.file_size:,}), more than the {cap:,} an import reads "
            "(EVALCORE_MAX_IMPORT_BYTES); save the sheet as CSV UTF-8, or raise that setting")


def scan_workbook(archive: zipfile.ZipFile, name: str, limit: int) -> WorkbookScan:
    """Stream every XML member once, bounded (see the module docstring). Shared strings
    longer than `limit` characters are named by the cells that use them."""
    result = WorkbookScan()
    members = [m.filename for m in archive.infolist()
               if m.filename.endswith((".xml", ".rels")) and not m.is_dir()]
    members.sort(key=lambda m: "sharedStrings" not in m)  # long strings known before sheets
    long_strings: set[int] = set()
    for member in members:
        scanner = _Scanner(member, limit, long_strings)
        try:
            with archive.open(member) as fh:
                while chunk := fh.read(CHUNK):
                    scanner.parser.Parse(chunk, False)
                scanner.parser.Parse(b"", True)
        except _Stop as exc:
            if scanner.kind != "worksheet":
                raise DatasetError(f"{name}: {exc}; {RESAVE}") from None
            scanner.sheet.problem = str(exc)
        except expat.ExpatError as exc:
            raise DatasetError(f"{name}: cannot read the workbook ({member} is not well-formed "
                               f"XML: {expat.ErrorString(exc.code)}, line {exc.lineno}); "
                               f"{RESAVE}") from None
        except BROKEN_ZIP as exc:
            raise DatasetError(f"{name}: cannot read the workbook ({member}: "
                               f"{str(exc)[:120]}); {RESAVE}") from None
        if scanner.kind == "worksheet":
            result.sheets[member] = scanner.sheet
    return result


def _local(tag: str) -> str:
    return tag.rsplit(" ", 1)[-1].rsplit(":", 1)[-1]


class _Scanner:
    """expat handlers counting one member's rows, cells and text lengths."""

    def __init__(self, member: str, limit: int, long_strings: set[int]) -> None:
        self.member, self.limit, self.long_strings = member, limit, long_strings
        self.kind = ""
        self.sheet = SheetScan()
        self.depth = self.run = 0
        self.strings = -1
        self.cell = ""
        self.cell_type: str | None = None
        self.has_formula = self.has_value = False
        self.value = self.in_value = ""
        self.in_cell = False
        parser = expat.ParserCreate(namespace_separator=" ")
        parser.buffer_text = True
        parser.StartDoctypeDeclHandler = self._doctype
        parser.StartElementHandler = self._start
        parser.EndElementHandler = self._end
        parser.CharacterDataHandler = self._text
        self.parser = parser

    def _doctype(self, *_: object) -> None:
        raise _Stop(f"{self.member} declares a DOCTYPE, which no workbook needs (it could "
                    "expand entities without bound)")

    def _start(self, tag: str, attrs: dict[str, str]) -> None:
        local = _local(tag)
        self.depth += 1
        if self.depth == 1:
            self.kind = local
        if self.kind == "worksheet":
            self._sheet_start(local, attrs)
        elif self.kind == "sst":
            if local == "si":
                self.strings += 1
                self.run = 0
                if self.strings >= MAX_CELLS:
                    raise _Stop(f"the workbook holds more than {MAX_CELLS:,} texts")
        else:
            self.run = 0

    def _sheet_start(self, local: str, attrs: dict[str, str]) -> None:
        if local == "row":
            self.sheet.rows += 1
            if self.sheet.rows > MAX_ROWS:
                raise _Stop(f"the sheet has more than {MAX_ROWS:,} rows (Excel's limit)")
        elif local == "c":
            self.in_cell = True
            self.sheet.cells += 1
            if self.sheet.cells > MAX_CELLS:
                raise _Stop(f"the sheet has more than {MAX_CELLS:,} cells; split it")
            self.cell, self.cell_type = attrs.get("r", ""), attrs.get("t")
            self.has_formula = self.has_value = False
            self.run, self.value = 0, ""
            _check_reference(self.cell)
        elif local == "f":
            self.has_formula = True
        elif local in ("v", "is"):
            self.in_value = local
        if not self.in_cell:
            self.run = 0

    def _end(self, tag: str) -> None:
        self.depth -= 1
        local = _local(tag)
        if self.kind == "sst" and local == "si" and self.run > self.limit:
            self.long_strings.add(self.strings)
        elif self.kind == "worksheet":
            if local in ("v", "is"):
                self.in_value = ""
            elif local == "c":
                self.in_cell = False
                self._cell_end()

    def _cell_end(self) -> None:
        where = f"cell {self.cell}" if self.cell else "a cell"
        if self.has_formula and not self.has_value:
            raise _Stop(f"{where} holds a formula with no saved result (the file was "
                        "written by a program that does not calculate); open it in Excel or "
                        "LibreOffice and save it, or type the values")
        if self.has_value:
            self.sheet.filled += 1
        shared = self.cell_type == "s" and self.value.strip().isdigit()
        if self.run > self.limit or shared and int(self.value) in self.long_strings:
            raise _Stop(f"{where} holds more than {self.limit:,} characters, more than a "
                        "cell may hold (EVALCORE_MAX_FIELD_BYTES); shorten it, or raise that "
                        "setting")

    def _text(self, data: str) -> None:
        self.run += len(data)
        if self.in_value:
            self.has_value = self.has_value or bool(data.strip())
        if self.in_value == "v" and self.cell_type == "s" and len(self.value) < 12:
            self.value += data
        if self.run > self.limit and self.kind == "worksheet" and self.in_cell:
            self._cell_end()  # refuse now: the rest of a huge cell need not be read
        elif self.run > self.limit and self.kind != "sst":
            raise _Stop(f"{self.member} holds a text of more than {self.limit:,} characters")


def _check_reference(reference: str) -> None:
    """Refuse a cell reference beyond column XFD (or row 1,048,576)."""
    letters = reference.rstrip("0123456789")
    digits = reference[len(letters):]
    column = 0
    for letter in letters.upper():
        column = column * 26 + ord(letter) - 64
    if column > MAX_COLUMNS or (digits and int(digits) > MAX_ROWS) or len(letters) > 3:
        raise _Stop(f"the cell reference {reference[:20]!r} is beyond Excel's last cell "
                    "XFD1048576")
