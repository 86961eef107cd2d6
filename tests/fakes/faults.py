"""A fault-injection hook on an engine: count the write statements (INSERT, UPDATE,
DELETE) and the commits of transactions that wrote, and crash at the Nth write - by
raising, or by SIGKILL of the whole process (a real power cut, as the database sees it).

Used by the crash tests of `evalcore.actions`: crashing an action at each of its writes
in turn must leave either all of it or none of it stored."""
from __future__ import annotations

import os
import signal
from typing import Any, Optional

from sqlalchemy import event
from sqlalchemy.engine import Engine

WRITES = ("INSERT", "UPDATE", "DELETE")


class Crash(RuntimeError):
    """The injected fault."""


class Faults:
    """Counts writes and write-commits on `engine`; `crash_at = n` fails the nth write
    (counted from `arm()`), `kill = True` makes that a SIGKILL of this process."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.writes = 0
        self.commits = 0
        self.crash_at: Optional[int] = None
        self.kill = False
        self.fired = False
        event.listen(engine, "before_cursor_execute", self._before)
        event.listen(engine, "commit", self._commit)
        event.listen(engine, "rollback", self._rollback)

    def arm(self, crash_at: Optional[int] = None, *, kill: bool = False) -> None:
        """Start counting afresh; crash at write number `crash_at` (None: never)."""
        self.writes = self.commits = 0
        self.crash_at, self.kill, self.fired = crash_at, kill, False

    def remove(self) -> None:
        event.remove(self.engine, "before_cursor_execute", self._before)
        event.remove(self.engine, "commit", self._commit)
        event.remove(self.engine, "rollback", self._rollback)

    def _before(self, conn: Any, cursor: Any, statement: str, params: Any, context: Any,
                executemany: bool) -> None:
        words = statement.lstrip().split(None, 1)
        if not words or words[0].upper() not in WRITES:
            return
        conn.info["evalcore_wrote"] = True
        self.writes += 1
        if self.crash_at is not None and self.writes == self.crash_at:
            self.fired = True
            if self.kill:
                os.kill(os.getpid(), signal.SIGKILL)
            raise Crash(f"injected fault at write {self.writes}: {statement[:60]}")

    def _commit(self, conn: Any) -> None:
        if conn.info.pop("evalcore_wrote", False):
            self.commits += 1

    def _rollback(self, conn: Any) -> None:
        conn.info.pop("evalcore_wrote", None)


def snapshot(engine: Engine) -> dict[str, list[str]]:
    """Every row of every table (sorted reprs): two equal snapshots, the same database."""
    from sqlmodel import SQLModel

    from evalcore.store import monitor_tables, tables  # noqa: F401 - every table
    from evalcore.store.db import reader

    out: dict[str, list[str]] = {}
    with reader(engine).connect() as conn:
        cursor = conn.connection.cursor()  # the driver's own: no statement building per table
        try:
            for table in SQLModel.metadata.sorted_tables:
                names = ", ".join(f'"{c.name}"' for c in table.columns)
                cursor.execute(f'SELECT {names} FROM "{table.name}"')
                out[table.name] = sorted(repr(tuple(row)) for row in cursor.fetchall())
        finally:
            cursor.close()
    return out


def changed_tables(before: dict[str, list[str]], after: dict[str, list[str]]) -> list[str]:
    return sorted(name for name in before if before[name] != after.get(name))
