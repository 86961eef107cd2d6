"""evalcore's value types, and the one way outside data becomes one.

Model settings, run specs, questions, scores, gate results ... are msgspec `Struct`s
(`kw_only=True`): typed records whose classes cost microseconds to create and that import
in ~2 ms, where pydantic costs ~70 ms before a run's first request (`bench/startup_profile.py`).
pydantic stays only under SQLModel, for the ORM tables the pages read.

A Struct's constructor does not check types or ranges (`Annotated[int, Meta(ge=1)]`); it
runs the type's own `__post_init__` checks. Data from outside (a TOML table, a form, CLI
flags, a stored JSON column, a database row) goes through `validated`, which checks
everything and raises `ValidationError`; `problem` words that error for a user.
"""
from __future__ import annotations

import re
import types
import typing
from typing import Any, Callable, Optional, TypeVar

import msgspec

ValidationError = msgspec.ValidationError
T = TypeVar("T")

_AT = re.compile(r"^(?P<what>.*?) - at `\$(?P<path>[^`]*)`$", re.DOTALL)
_ENUM = re.compile(r"^Invalid enum value ")
_MISSING = re.compile(r"^Object missing required field `(?P<field>[^`]+)`$")


def validated(kind: type[T], data: Any,
              fail: Optional[Callable[[str], Exception]] = None) -> T:
    """`data` (a mapping, or an object carrying the fields as attributes, such as a database
    row) as a checked `kind`: types (leniently: "5" is 5), ranges, allowed values and the
    type's own `__post_init__` checks. Raises `ValidationError`, or with `fail` the error
    `fail(problem)` makes of the `problem` text (naming the file, row or model)."""
    try:
        return msgspec.convert(data, kind, strict=False, from_attributes=True)
    except ValidationError as exc:
        if fail is None:
            raise
        raise fail(problem(exc, kind)) from None


def problem(exc: ValidationError, kind: type | None = None) -> str:
    """`field: what is wrong` for a `ValidationError` from `validated(kind, ...)`.

    Never the input value (it may hold a key): where msgspec quotes a wrong value among
    allowed ones, the text lists the allowed values of `kind`'s field instead."""
    text = str(exc)
    missing = _MISSING.match(text)
    if missing:
        return f"{missing['field']}: required"
    found = _AT.match(text)
    if not found:
        return text
    path = found["path"].lstrip(".") or "value"
    what = found["what"]
    if _ENUM.match(what):
        allowed = _allowed(kind, found["path"])
        what = f"must be one of {', '.join(map(repr, allowed))}" if allowed else "not an allowed value"
    return f"{path}: {what}"


def _allowed(kind: type | None, path: str) -> tuple[Any, ...]:
    """The Literal values of the field at msgspec's `path` (`.a.b[0].c`) in `kind`, if any."""
    hint: Any = kind
    for name in re.findall(r"\.(\w+)", path):
        hint = _field_type(hint, name)
        if hint is None:
            return ()
    return _literal_values(hint)


def _field_type(hint: Any, name: str) -> Any:
    for inner in _unwrapped(hint):
        if isinstance(inner, type) and issubclass(inner, msgspec.Struct):
            return typing.get_type_hints(inner, include_extras=True).get(name)
    return None


def _unwrapped(hint: Any) -> list[Any]:
    """`hint` without Optional / Annotated / list wrappers (every alternative)."""
    origin = typing.get_origin(hint)
    if origin is typing.Annotated:
        return _unwrapped(typing.get_args(hint)[0])
    if origin in (typing.Union, types.UnionType, list, tuple, set, frozenset):
        return [t for arg in typing.get_args(hint) for t in _unwrapped(arg)]
    return [hint]


def _literal_values(hint: Any) -> tuple[Any, ...]:
    return tuple(v for t in _unwrapped(hint) if typing.get_origin(t) is typing.Literal
                 for v in typing.get_args(t))
