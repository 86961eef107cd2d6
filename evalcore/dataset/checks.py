"""Cell checks shared by the built-in formats and column mappings.

Builders turn one row (a dict of strings) into a question; when a cell is unusable they
raise `CellError(column, value, problem)`. The parser adds the file and row, so the
user reads e.g. "Math23Ktest.csv row 17, column 'answer': '' is empty; every math item
needs a numeric answer".
"""
from __future__ import annotations

import json
import re
from typing import Mapping

from evalcore.error_text import shown

Row = Mapping[str, str]

_NUMBER = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?%?$")
_FRACTION = re.compile(r"^[+-]?\(?\d+(\.\d+)?\)?/\(?\d+(\.\d+)?\)?$")

SENTIMENT_WORDS = {
    "positive": "positive", "pos": "positive", "1": "positive", "1.0": "positive",
    "正面": "positive", "积极": "positive", "好评": "positive",
    "negative": "negative", "neg": "negative", "0": "negative", "0.0": "negative",
    "负面": "negative", "消极": "negative", "差评": "negative",
}


class CellError(Exception):
    """A cell of one row cannot be used; the parser adds file and row to the message."""

    def __init__(self, column: str, value: str, problem: str) -> None:
        super().__init__(f"column {shown(column)}: {shown(value)} {problem}")
        self.column, self.value, self.problem = column, value, problem


def cell(row: Row, column: str) -> str:
    """The stripped text of `column` ('' when the column is absent)."""
    return str(row.get(column, "") or "").strip()


def required(row: Row, column: str, task: str, what: str) -> str:
    """The non-empty text of `column`, or a CellError saying the task needs `what`."""
    value = cell(row, column)
    if not value:
        raise CellError(column, value, f"is empty; every {task} item needs {what}")
    return value


def number(row: Row, column: str, task: str = "math") -> str:
    """A numeric reference (12, 14.4, 1e3, 50%, 3/4) kept as written."""
    value = required(row, column, task, "a numeric answer")
    if not (_NUMBER.match(value.replace(",", "")) or _FRACTION.match(value)):
        raise CellError(column, value, f"is not a number; every {task} item needs a numeric "
                        "answer such as 14.4, 50% or 3/4")
    return value


def option_index(row: Row, column: str, n_choices: int, task: str = "choice",
                 base: int = 0, choices: list[str] | None = None) -> str:
    """A 0-based option index as text, from '2', '2.0', a letter 'C' or the option's text.

    `base=1` reads numbers as 1-based (as many spreadsheets number options).
    """
    value = required(row, column, task, "the index of the right option")
    index: int | None = None
    if re.fullmatch(r"\d+(\.0+)?", value):
        index = int(float(value)) - base
    elif re.fullmatch(r"[A-Za-z]", value):
        index = ord(value.upper()) - ord("A")
    elif choices and value in choices:
        index = choices.index(value)
    if index is None or not 0 <= index < n_choices:
        hint = (f"0 to {n_choices - 1}" if base == 0 else f"1 to {n_choices}")
        raise CellError(column, value, f"is not one of the {n_choices} options; write the "
                        f"option number ({hint}), its letter (A-{chr(64 + max(n_choices, 1))}) "
                        "or its exact text")
    return str(index)


def sentiment(row: Row, column: str) -> str:
    """'positive' or 'negative' from a label (1/0, pos/neg, 正面/负面 ...)."""
    value = required(row, column, "sentiment", "a label")
    label = SENTIMENT_WORDS.get(value.lower())
    if label is None:
        raise CellError(column, value, "is not a sentiment label; write positive/negative "
                        "or 1/0")
    return label


def zero_one(row: Row, column: str, task: str = "multi_tf") -> int:
    """A 0/1 flag from '0', '1', '0.0', '1.0', 'true', 'false'."""
    value = required(row, column, task, "a 0/1 answer for each present option")
    flags = {"0": 0, "0.0": 0, "false": 0, "1": 1, "1.0": 1, "true": 1}
    if value.lower() not in flags:
        raise CellError(column, value, "is not 0 or 1; mark each option 1 (true) or 0 (false)")
    return flags[value.lower()]


def zero_one_list(row: Row, column: str, n_choices: int) -> str:
    """A JSON list of 0/1 flags with one flag per option, e.g. '[1, 0, 1]'."""
    value = required(row, column, "multi_tf", "a JSON list of 0/1 flags")
    try:
        flags = json.loads(value)
    except json.JSONDecodeError:
        flags = None
    if (not isinstance(flags, list) or len(flags) != n_choices
            or any(f not in (0, 1) for f in flags)):
        raise CellError(column, value, f"is not a list of {n_choices} 0/1 flags; write e.g. "
                        f"{json.dumps([1] + [0] * (n_choices - 1))}")
    return json.dumps([int(f) for f in flags])


def split_choices(value: str, column: str, separator: str | None) -> list[str]:
    """Options from one cell: a JSON list, or text split on `separator`."""
    text = value.strip()
    if not text:
        return []
    if separator is None and text.startswith("["):
        try:
            items = json.loads(text)
        except json.JSONDecodeError:
            raise CellError(column, value, "looks like a JSON list but is not valid JSON; "
                            "write e.g. [\"yes\", \"no\"] or set a choices separator") from None
        if not isinstance(items, list):
            raise CellError(column, value, "is not a list of options")
        return [str(i).strip() for i in items if str(i).strip()]
    if separator is None:
        raise CellError(column, value, "is not a JSON list of options; write e.g. "
                        "[\"yes\", \"no\"] or set a choices separator such as '|'")
    return [part.strip() for part in text.split(separator) if part.strip()]


def json_cell(value: str) -> object:
    """Nested JSON kept as text by the reader (JSONL objects, lists) decoded back."""
    try:
        return json.loads(value)
    except (json.JSONDecodeError, TypeError):
        return value
