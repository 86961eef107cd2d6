"""A migrated SQLite schema, replayed into each new test database instead of running the
Alembic chain again (tests/conftest.py installs it).

Migrating an empty SQLite file to head costs 0.15-1.4 s of CPU (Alembic imports, ten
revisions, batch table rebuilds); the suite does it for nearly every test. The template is
made once per process by the real `evalcore.store.db.migrate` on a fresh file, and its
`iterdump()` (tables, indexes, alembic_version, sqlite_sequence) is replayed in one
`BEGIN IMMEDIATE` transaction that first checks the file is still empty, so a database
another process or thread migrated meanwhile is left alone, as `migrate` itself does.
Only "empty database to head with the package's scripts" is replaced: a named revision,
other scripts, a legacy or half-migrated database, PostgreSQL and `:memory:` all go
through Alembic, and the tests marked `real_migrations` always do.
"""
from __future__ import annotations

import sqlite3
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

_lock = threading.Lock()
_statements: list[str] | None = None


def schema_statements(real_migrate: Callable[..., None]) -> list[str]:
    """The SQL that rebuilds a database migrated to head (made once per process)."""
    global _statements
    with _lock:
        if _statements is None:
            from evalcore.store.db import make_engine

            path = Path(tempfile.mkdtemp(prefix="evalcore-schema-")) / "template.db"
            engine = make_engine(f"sqlite:///{path}", migrate=False)
            try:
                real_migrate(engine, "head")
            finally:
                engine.dispose()
            with sqlite3.connect(path) as conn:
                dump = list(conn.iterdump())
            _statements = [s for s in dump if s not in ("BEGIN TRANSACTION;", "COMMIT;")]
        return _statements


def migrate_from_template(real_migrate: Callable[..., None]) -> Callable[..., None]:
    """A drop-in for `evalcore.store.db.migrate` that replays the template into an empty
    SQLite file and leaves every other case to `real_migrate`."""

    def migrate(engine: Any, revision: str = "head", *,
                script_location: str | Path | None = None) -> None:
        from evalcore.store.db import is_memory_sqlite

        if (revision != "head" or script_location is not None
                or engine.dialect.name != "sqlite" or is_memory_sqlite(str(engine.url))
                or not _replayed(engine, schema_statements(real_migrate))):
            real_migrate(engine, revision, script_location=script_location)

    return migrate


def _replayed(engine: Any, statements: list[str]) -> bool:
    """Replay `statements` if the database has no schema at all; False (nothing done)
    if it has some, which then is Alembic's to judge."""
    with engine.connect() as conn:
        raw = conn.connection.dbapi_connection
        raw.execute("BEGIN IMMEDIATE")
        try:
            if raw.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]:
                raw.execute("ROLLBACK")
                return False
            for statement in statements:
                raw.execute(statement)
            raw.execute("COMMIT")
        except BaseException:
            if raw.in_transaction:
                raw.execute("ROLLBACK")
            raise
    return True
