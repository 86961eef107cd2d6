"""JSON and JSONL files as tables: one object per item or line, keys as columns.

Python's json module accepts what a user does not mean, silently: a key given twice in
one object (the last wins), `NaN` and `Infinity` (not JSON at all), and numbers too
large for a float (`1e5000` becomes infinity). Each is refused here, naming the line or
item and the key, before a value becomes the question "NaN" or the reference "Infinity".
Nesting deeper than MAX_JSON_DEPTH is refused too (never a RecursionError).
"""
from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any

from evalcore.dataset.cells import column_name
from evalcore.dataset.encoding import decode_text
from evalcore.error_text import shown
from evalcore.errors import DatasetError

MAX_JSON_DEPTH = 100
"""Deepest nesting of a JSON value read (deeper is refused, never a RecursionError)."""
Table = tuple[Any, str, list[int], str, list[str]]
"""(DataFrame, row unit, row numbers, encoding, repairs), as `readers.read_table` takes."""


class _Unmeant:
    """A value JSON's parser took that a user does not mean (NaN, Infinity, 1e5000)."""

    def __init__(self, text: str, problem: str) -> None:
        self.text, self.problem = text, problem


class _Repeated(dict):  # type: ignore[type-arg]
    """An object that named `repeated` more than once (json keeps the last silently)."""

    repeated = ""


def _constant(text: str) -> _Unmeant:
    return _Unmeant(text, f"{text} is not a JSON value; write null for no value, or "
                          f"\"{text}\" in quotes for the text")


def _float(text: str) -> float | _Unmeant:
    value = float(text)
    if math.isinf(value):
        return _Unmeant(text, f"the number {shown(text, 40, bare=True)} is too large to be a "
                              "number (it would be infinity); write it in quotes to keep it "
                              "as text")
    return value


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    value = dict(pairs)
    if len(value) == len(pairs):
        return value
    seen: set[str] = set()
    marked = _Repeated(value)
    marked.repeated = next(k for k, _ in pairs if k in seen or seen.add(k))  # type: ignore[func-returns-value]
    return marked


def _first_problem(value: Any) -> str | None:
    """What in `value` (walked without recursion) a user does not mean, naming the key."""
    stack: list[tuple[Any, str]] = [(value, "")]
    while stack:
        item, key = stack.pop()
        where = f"key {shown(key)}: " if key else ""
        if isinstance(item, _Unmeant):
            return where + item.problem
        if isinstance(item, _Repeated):
            return where + (f"the key {shown(item.repeated)} appears twice in one object (only the "
                    "last would be kept); remove or rename one")
        if isinstance(item, dict):
            names = [column_name(k) for k in item] if not key else []
            if len(set(names)) < len(names):
                twice = next(n for i, n in enumerate(names) if n in names[:i])
                return (f"two keys are the column {shown(twice)} once spaces and byte-order "
                        "marks are removed; rename one")
            stack.extend((v, key or k) for k, v in item.items())
        elif isinstance(item, list):
            stack.extend((v, key) for v in item)
    return None


def _too_deep(value: Any) -> bool:
    """Whether `value` nests lists/objects more than MAX_JSON_DEPTH deep (no recursion)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        children = item.values() if isinstance(item, dict) else item
        if depth > MAX_JSON_DEPTH:
            return True
        stack.extend((c, depth + 1) for c in children if isinstance(c, (dict, list)))
    return False


def _loads(text: str, where: str, position: Callable[[json.JSONDecodeError], str],
           hint: str) -> Any:
    """`json.loads` with the unmeant values marked, or a DatasetError for invalid JSON,
    nesting deeper than MAX_JSON_DEPTH or a number Python will not read."""
    deep = False
    try:
        value = json.loads(text, object_pairs_hook=_object, parse_constant=_constant,
                           parse_float=_float)
    except json.JSONDecodeError as exc:
        raise DatasetError(f"{where}: not valid JSON ({exc.msg} at {position(exc)}); "
                           f"{hint}") from None
    except RecursionError:
        value, deep = None, True
    except ValueError as exc:  # an integer of more than 4,300 digits
        raise DatasetError(f"{where}: cannot read a value ({str(exc)[:120]}); write long "
                           "numbers as text (in quotes)") from None
    if deep or isinstance(value, (dict, list)) and _too_deep(value):
        raise DatasetError(f"{where}: JSON nested more than {MAX_JSON_DEPTH} levels deep; "
                           "flatten it (questions, answers and options are plain values)")
    return value


def _checked(record: Any, where: str) -> dict[str, Any]:
    if not isinstance(record, dict):
        raise DatasetError(f"{where}: expected a JSON object {{\"question\": ...}}, found "
                           f"{type(record).__name__}")
    problem = _first_problem(record)
    if problem is not None:
        raise DatasetError(f"{where}: {problem}")
    return record


def read_jsonl(data: bytes, name: str) -> Table:
    """One JSON object per line (blank lines skipped), rows named by line number."""
    text, encoding = decode_text(data, name)
    records, numbers = [], []
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        where = f"{name} line {number}"
        record = _loads(line, where, lambda e: f"column {e.colno}",
                        "every line must be one JSON object")
        records.append(_checked(record, where))
        numbers.append(number)
    if not records:
        raise DatasetError(f"{name}: no JSON objects found")
    return _frame(records), "line", numbers, encoding, []


def read_json(data: bytes, name: str) -> Table:
    """A JSON list of objects (or {"data": [...]}), rows named by item number."""
    text, encoding = decode_text(data, name)
    payload = _loads(text, name, lambda e: f"line {e.lineno}, column {e.colno}",
                     "for one object per line name the file .jsonl")
    if isinstance(payload, _Repeated):
        raise DatasetError(f"{name}: {_first_problem(payload)}")
    if isinstance(payload, dict) and isinstance(payload.get("data"), list):
        payload = payload["data"]
    if not isinstance(payload, list):
        raise DatasetError(f"{name}: expected a JSON list of objects or {{\"data\": [...]}}")
    for number, record in enumerate(payload, start=1):
        _checked(record, f"{name} item {number}")
    return _frame(payload), "item", list(range(1, len(payload) + 1)), encoding, []


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
