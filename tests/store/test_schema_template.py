"""The test suite's schema template (tests/fakes/schema_template.py) gives a new SQLite
database exactly what the Alembic chain gives it, and leaves any other database to Alembic."""
from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from evalcore.store import db
from tests.fakes.schema_template import migrate_from_template


def _schema(path: Path) -> dict:
    """sqlite_master with each statement's lines sorted: two real migrations list a
    rebuilt table's foreign keys in different orders."""
    with sqlite3.connect(path) as conn:
        master = conn.execute("SELECT type, name, tbl_name, sql FROM sqlite_master").fetchall()
        return {"master": sorted((kind, name, table, sorted(
                    line.strip().rstrip(",") for line in (sql or "").splitlines()))
                    for kind, name, table, sql in master),
                "version": conn.execute("SELECT version_num FROM alembic_version").fetchall(),
                "sequence": sorted(conn.execute("SELECT * FROM sqlite_sequence").fetchall())}


@pytest.mark.real_migrations  # db.migrate is the real one here
def test_template_database_equals_a_migrated_one(tmp_path: Path) -> None:
    real = db.make_engine(f"sqlite:///{tmp_path / 'real.db'}")
    real.dispose()
    copied = db.make_engine(f"sqlite:///{tmp_path / 'copy.db'}", migrate=False)
    migrate_from_template(db.migrate)(copied)
    assert db.current_revision(copied) == db.current_revision(real)
    with copied.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
    copied.dispose()
    assert _schema(tmp_path / "copy.db") == _schema(tmp_path / "real.db")


@pytest.mark.real_migrations
def test_a_database_with_a_schema_is_left_to_alembic(tmp_path: Path) -> None:
    from evalcore.store.migrations import HEAD_REVISION
    from tests.store.conftest import add_items

    engine = db.make_engine(f"sqlite:///{tmp_path / 'old.db'}", migrate=False)
    db.migrate(engine, "0007")
    items = add_items(engine, 3)
    migrate_from_template(db.migrate)(engine)
    assert db.current_revision(engine) == HEAD_REVISION
    with engine.connect() as conn:
        assert conn.exec_driver_sql("SELECT id FROM item ORDER BY id").scalars().all() == items
    engine.dispose()


def test_a_test_database_from_the_template_matches_the_tables(store) -> None:
    """`store` is a replayed SQLite file or a copy of a migrated PostgreSQL database: at
    head, and Alembic finds nothing to change against tables.py."""
    from alembic.autogenerate import compare_metadata
    from alembic.runtime.migration import MigrationContext
    from sqlmodel import SQLModel

    from evalcore.store.migrations import HEAD_REVISION

    assert db.current_revision(store) == HEAD_REVISION
    with store.connect() as conn:
        assert compare_metadata(MigrationContext.configure(
            conn, opts={"compare_type": True}), SQLModel.metadata) == []


@pytest.mark.postgres
def test_every_pg_url_fixture_shares_one_cluster(pg_url: str) -> None:
    from tests.fakes.postgres import shared_cluster

    assert pg_url == f"{shared_cluster()}/evalcore_test"


@pytest.mark.postgres
def test_an_emptied_postgres_database_is_a_fresh_copy_again(pg_url: str) -> None:
    """The store fixture hands a PostgreSQL database a test used on to the next test only
    emptied: no row, every id starting at 1 again, the template's schema; a database whose
    schema a test changed is dropped instead."""
    from sqlalchemy import text

    from tests.store import conftest as store_conftest
    from tests.store.conftest import add_items

    base = pg_url.rsplit("/", 1)[0]
    name = store_conftest._migrated_database(base)
    engine = db.make_engine(f"{base}/{name}")
    first = add_items(engine, 3)
    engine.dispose()
    assert store_conftest._emptied(base, name)
    assert store_conftest._EMPTIED[-1] == name
    again = store_conftest._migrated_database(base)  # the same database, renamed
    assert again != name and name not in store_conftest._EMPTIED
    engine = db.make_engine(f"{base}/{again}")
    with engine.connect() as conn:
        assert conn.execute(text("SELECT count(*) FROM item")).scalar() == 0
        assert conn.execute(text("SELECT count(*) FROM dataset")).scalar() == 0
    assert add_items(engine, 3) == first  # ids from 1 again, as in a new copy
    with engine.begin() as conn:
        conn.execute(text("ALTER TABLE item ADD COLUMN extra integer"))
    engine.dispose()
    assert not store_conftest._emptied(base, again)  # changed schema: not handed on
    assert again not in store_conftest._EMPTIED
    store_conftest._admin(base, f"DROP DATABASE IF EXISTS {again} WITH (FORCE)")
