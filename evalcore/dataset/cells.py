"""What every cell and column name must be before it is stored, whatever the file type.

A database cannot store a NUL character (PostgreSQL refuses it; SQLite kept it, so the
two behaved differently) nor a lone UTF-16 surrogate (a JSON escape `\\ud800` without
its pair: the insert fails to encode it), and one cell must stay below
`EVALCORE_MAX_FIELD_BYTES` (1 MiB by default). Such a cell is refused with its file, row
and column, before anything is stored, the same way on SQLite and PostgreSQL.
"""
from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Mapping
from typing import Any

from evalcore.config import max_field_bytes
from evalcore.error_text import shown
from evalcore.errors import DatasetError

NUL_HINT = ("remove it; a file full of them is usually UTF-16 saved without a byte-order "
            "mark, or not a text file: save it as UTF-8")


def field_limit() -> int:
    """The largest cell in bytes (`EVALCORE_MAX_FIELD_BYTES`, read now)."""
    return max_field_bytes()


def cell_problem(text: str, limit: int, decoded: bool = False) -> str | None:
    """Why `text` cannot be stored, or None. `decoded`: it was decoded strictly from
    bytes, so it cannot hold a lone surrogate (saves encoding each cell of a CSV)."""
    if "\x00" in text:
        return (f"holds a NUL character (code 0) at character {text.index(chr(0)) + 1:,}, "
                f"which a database cannot store; {NUL_HINT}")
    if len(text) * 4 <= limit and (decoded or text.isascii()):
        return None
    try:
        size = len(text.encode("utf-8"))
    except UnicodeEncodeError as exc:
        return (f"holds the invalid character U+{ord(text[exc.start]):04X} at character "
                f"{exc.start + 1:,} (half of a UTF-16 surrogate pair, such as a JSON escape "
                "\\ud800 without its pair); remove it or write the character itself")
    if size > limit:
        return (f"is {size:,} bytes, more than the {limit:,} a cell may hold "
                "(EVALCORE_MAX_FIELD_BYTES); shorten it, or raise that setting")
    return None


def check_row(name: str, where: str, note: str, row: Mapping[str, str], limit: int,
              decoded: bool = False) -> None:
    """Refuse the row `where` ('row 5', 'line 3') when one of its cells cannot be stored."""
    for column, text in row.items():
        problem = cell_problem(text, limit, decoded)
        if problem is not None:
            raise DatasetError(f"{name} {where}, column {shown(column)}: the cell {problem} "
                               f"({note})")


def check_names(name: str, columns: Iterable[str], limit: int) -> None:
    """Refuse a column name (a header cell, a JSON key) that cannot be stored."""
    for position, column in enumerate(columns, start=1):
        problem = cell_problem(column, limit)
        if problem is not None:
            raise DatasetError(f"{name}: column name {position} ({shown(column)}) {problem}")


HIDDEN_CATEGORIES = ("Cc", "Cf", "Zl", "Zp")
"""Control, format (bidirectional overrides, zero-width) and line/paragraph separators."""


def name_problem(text: str) -> str | None:
    """Why `text` cannot name a dataset (a control or bidirectional-override character
    that hides or reorders what is shown), or None. The zero-width joiner of emoji
    sequences is allowed."""
    for position, char in enumerate(text, start=1):
        if unicodedata.category(char) in HIDDEN_CATEGORIES and char != "\u200d":
            what = unicodedata.name(char, "a control character")
            return (f"holds the invisible character U+{ord(char):04X} ({what}) at character "
                    f"{position}, which hides or reorders the name where it is shown")
    return None


def column_name(raw: Any) -> str:
    """A header or JSON key as the formats see it: stripped, byte-order marks removed.

    CBBQ's own JSON files start their first key with a BOM inside the quotes
    ('\\ufeffexample_id'); str.strip() keeps it, and the format would miss the column.
    """
    return str(raw).replace("\ufeff", "").strip()
