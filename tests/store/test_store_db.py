"""Engine set-up: where the default database lives and how SQLite connections behave."""
from __future__ import annotations

import threading
from pathlib import Path

import pytest
from sqlalchemy import text

from evalcore.store import db
from evalcore.store.tables import Run


def test_default_database_is_a_file_in_evalcore_home(settings) -> None:
    engine = db.get_engine(settings.db_url)
    try:
        assert Path(settings.home / "evalcore.db").is_file()
        assert db.current_revision(engine) is not None
    finally:
        db.dispose_engines()


def test_db_url_env_overrides_home(tmp_path: Path) -> None:
    from evalcore.config import settings_from_env

    other = tmp_path / "elsewhere" / "x.db"
    s = settings_from_env({"EVALCORE_HOME": str(tmp_path / "home"),
                           "EVALCORE_DB_URL": f"sqlite:///{other}"})
    engine = db.make_engine(s.db_url)
    engine.dispose()
    assert other.is_file()
    assert not (tmp_path / "home" / "evalcore.db").exists()


def test_get_engine_is_cached_per_url(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'a.db'}"
    try:
        assert db.get_engine(url) is db.get_engine(url)
        assert db.get_engine(url) is not db.get_engine(f"sqlite:///{tmp_path / 'b.db'}")
    finally:
        db.dispose_engines()


def test_sqlite_connections_use_wal_busy_timeout_and_foreign_keys(engine) -> None:
    with engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        assert conn.exec_driver_sql("PRAGMA busy_timeout").scalar() == db.SQLITE_BUSY_TIMEOUT_MS
        assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1


def test_write_sessions_take_the_lock_at_begin(engine) -> None:
    """A write session holds the write lock from its first statement (BEGIN IMMEDIATE),
    so a second writer waits instead of failing later with 'database is locked'."""
    import sqlite3

    with db.session_scope(engine) as session:
        session.exec(text("SELECT 1"))  # a read only: a deferred BEGIN would not lock yet
        other = sqlite3.connect(engine.url.database, timeout=0, isolation_level=None)
        with pytest.raises(sqlite3.OperationalError, match="locked"):
            other.execute("BEGIN IMMEDIATE")
        other.close()
    with db.session_scope(engine, write=False) as session:
        session.exec(text("SELECT 1"))
        other = sqlite3.connect(engine.url.database, timeout=0, isolation_level=None)
        other.execute("BEGIN IMMEDIATE")  # a read session leaves the lock free
        other.execute("ROLLBACK")
        other.close()


def test_read_session_does_not_block_writers(engine) -> None:
    with db.session_scope(engine, write=False) as session:
        session.exec(text("SELECT count(*) FROM run")).one()
        with db.session_scope(engine) as writer_session:
            writer_session.add(Run(kind="eval"))
    with db.session_scope(engine, write=False) as session:
        assert session.exec(text("SELECT count(*) FROM run")).one()[0] == 1


def test_plain_sessions_can_read_then_write_from_many_threads(engine) -> None:
    """The pattern that fails with deferred transactions: read, another writer commits,
    then write. Any session on the engine (not only session_scope) must just wait."""
    from sqlmodel import Session, func, select

    errors: list[BaseException] = []
    gate = threading.Barrier(6)

    def work() -> None:
        try:
            gate.wait()
            for _ in range(15):
                with Session(engine) as session:
                    n = session.exec(select(func.count()).select_from(Run)).one()
                    session.add(Run(kind="eval", name=f"after {n}"))
                    session.commit()
        except BaseException as exc:  # noqa: BLE001  (reported below)
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    with engine.connect() as conn:
        names = conn.exec_driver_sql("SELECT name FROM run").scalars().all()
    assert len(names) == 90
    assert len(set(names)) == 90  # each read saw every earlier commit: no lost updates


def test_session_scope_rolls_back_on_error(engine) -> None:
    with pytest.raises(RuntimeError):
        with db.session_scope(engine) as session:
            session.add(Run(kind="eval"))
            session.flush()
            raise RuntimeError("boom")
    with engine.connect() as conn:
        assert conn.exec_driver_sql("SELECT count(*) FROM run").scalar() == 0


@pytest.mark.parametrize("url", ["sqlite://", "sqlite:///:memory:"])
def test_in_memory_sqlite_keeps_data_between_sessions(url: str) -> None:
    """One shared connection (StaticPool): without it each session saw an empty database.
    Fine for quick scripts and tests; threads need a file."""
    engine = db.make_engine(url)
    assert db.is_memory_sqlite(url)
    for _ in range(3):
        with db.session_scope(engine) as session:
            session.add(Run(kind="eval"))
    with engine.connect() as conn:
        assert conn.exec_driver_sql("SELECT count(*) FROM run").scalar() == 3
    engine.dispose()


def test_file_urls_are_not_memory() -> None:
    assert not db.is_memory_sqlite("sqlite:////tmp/x.db")
    assert not db.is_memory_sqlite("postgresql+psycopg://u@h/db")
