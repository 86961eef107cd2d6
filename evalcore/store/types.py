"""Column types and defaults the tables share: the clock, the id option and the UTC
datetime type, so a time stored through the ORM or a Core statement is stored and read
back the same way."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any, Optional

from sqlalchemy import types

NEVER_REUSE_IDS = {"sqlite_autoincrement": True}
"""Table option of every table whose ids users see (runs, datasets, jobs ...): on SQLite a
deleted newest row's id is never handed out again (migration 0008); PostgreSQL identity
columns behave so already."""


def utcnow() -> datetime:
    return datetime.now(timezone.utc)


class UTCDateTime(types.TypeDecorator):
    """Aware datetimes stored as UTC and read back as aware UTC: what SQLModel's
    `UTCDateTime` (the type of its `datetime` fields) does, without importing SQLModel.
    A naive value is refused, as SQLModel refuses it."""

    impl = types.DateTime
    cache_ok = True

    def __init__(self) -> None:
        super().__init__(timezone=True)

    def __repr__(self) -> str:
        return "UTCDateTime()"

    def coerce_compared_value(self, op: Any, value: Any) -> Any:
        if isinstance(value, timedelta):
            return types.Interval()
        return self

    def process_bind_param(self, value: Optional[datetime], dialect: Any) -> Optional[datetime]:
        if value is None:
            return None
        if value.utcoffset() is None:
            raise ValueError("Datetime values must have timezone information. "
                             "Use datetime.now(timezone.utc)")
        return value.astimezone(timezone.utc)

    def process_result_value(self, value: Optional[datetime],
                             dialect: Any) -> Optional[datetime]:
        if value is None:
            return None
        if value.utcoffset() is None:  # SQLite keeps UTC without an offset
            return value.replace(tzinfo=timezone.utc)
        return value.astimezone(timezone.utc)
