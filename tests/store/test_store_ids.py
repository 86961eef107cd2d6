"""Ids are never reused (migration 0008): after deleting the newest run, dataset, job or
attack set, the next one gets a new id, so "run 7" in an old export, the work queue or a
CLI line never points at another run. SQLite needs AUTOINCREMENT for this; PostgreSQL's
identity columns do it already. Both run here, fresh and migrated from 0007 with data."""
from __future__ import annotations

import importlib

import pytest
from sqlalchemy import delete, text

from evalcore.store import db, jobs, queries
from evalcore.store.tables import Call, Dataset, Job, Upload
from tests.store.conftest import add_items

pytestmark = pytest.mark.real_migrations  # what Alembic does to a new database

MIGRATION = importlib.import_module("evalcore.store.migrations.versions.0008_ids_never_reused")


def _new_run(engine) -> int:  # type: ignore[no-untyped-def]
    return int(queries.create_run(engine, kind="stability", rounds=1, config={}).id)


def _reused(engine) -> dict[str, tuple[int, int]]:  # type: ignore[no-untyped-def]
    """(deleted id, next id) of each kind of row after deleting the newest one."""
    seen: dict[str, tuple[int, int]] = {}
    _new_run(engine)
    gone = _new_run(engine)
    queries.delete_run(engine, gone)
    seen["run"] = (gone, _new_run(engine))
    add_items(engine, 1, "keep")
    add_items(engine, 2, "drop")
    from evalcore.dataset import delete_dataset, get_dataset

    gone = int(get_dataset(engine, "drop").id)
    delete_dataset(engine, "drop")
    add_items(engine, 1, "next")
    seen["dataset"] = (gone, int(get_dataset(engine, "next").id))
    jobs.create_job(engine, "attack", label="a")
    gone = jobs.create_job(engine, "attack", label="b")
    with engine.begin() as conn:
        conn.execute(delete(Job).where(Job.id == gone))
    seen["job"] = (gone, jobs.create_job(engine, "attack", label="c"))
    for name in ("u1", "u2", "u3"):
        with db.session_scope(engine) as session:
            session.add(Upload(filename=name, data=b"x"))
    with engine.begin() as conn:
        gone = conn.execute(text("SELECT max(id) FROM upload")).scalar_one()
        conn.execute(delete(Upload).where(Upload.id == gone))
    with db.session_scope(engine) as session:
        upload = Upload(filename="u4", data=b"x")
        session.add(upload)
        session.flush()
        seen["upload"] = (gone, int(upload.id))  # type: ignore[arg-type]
    return seen


def test_a_deleted_newest_rows_id_is_never_given_again(store) -> None:
    for table, (gone, new) in _reused(store).items():
        assert new > gone, f"{table}: id {gone} was deleted and then given again"


def test_every_listed_table_never_reuses_ids_on_sqlite(tmp_path) -> None:
    engine = db.make_engine(f"sqlite:///{tmp_path / 'x.db'}")
    with engine.connect() as conn:
        for table in MIGRATION.TABLES:
            sql = conn.execute(text("SELECT sql FROM sqlite_master WHERE name = :t"),
                               {"t": table}).scalar_one()
            assert "AUTOINCREMENT" in sql, table
        assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
    engine.dispose()


def test_an_existing_database_is_migrated_with_its_rows(store_url) -> None:
    engine = db.make_engine(store_url, migrate=False)
    db.migrate(engine, "0007")
    items = add_items(engine, 3)
    runs = [_new_run(engine) for _ in range(3)]
    queries.record_calls(engine, [Call(run_id=r, item_id=i, round=1, answer=f"{r}.{i}")
                                  for r in runs for i in items])
    job = jobs.create_job(engine, "run", run_id=runs[0], label="r")
    before = [[(c.item_id, c.answer) for c in queries.run_calls(engine, r)] for r in runs]

    db.migrate(engine)

    from evalcore.store.migrations import HEAD_REVISION

    assert db.current_revision(engine) == HEAD_REVISION
    assert [[(c.item_id, c.answer) for c in queries.run_calls(engine, r)]
            for r in runs] == before
    assert jobs.get_job(engine, job).run_id == runs[0]
    with db.session_scope(engine, write=False) as session:
        assert session.get(Dataset, 1) is not None
    queries.delete_run(engine, runs[-1])
    assert _new_run(engine) > runs[-1]
    if engine.dialect.name == "sqlite":
        with engine.connect() as conn:  # checks are back on after the rebuild
            assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
            assert conn.exec_driver_sql("PRAGMA foreign_key_check").all() == []
    engine.dispose()


def test_a_migration_leaving_a_dangling_reference_is_rolled_back(tmp_path) -> None:
    from evalcore.errors import EvalcoreError

    engine = db.make_engine(f"sqlite:///{tmp_path / 'x.db'}", migrate=False)
    db.migrate(engine, "0007")
    add_items(engine, 1)
    with engine.connect() as conn:  # a reference to a dataset that is gone
        conn.connection.dbapi_connection.execute("PRAGMA foreign_keys=OFF")
        conn.exec_driver_sql("DELETE FROM dataset")
        conn.commit()
        conn.connection.dbapi_connection.execute("PRAGMA foreign_keys=ON")
    with pytest.raises(EvalcoreError, match="rolled back"):
        db.migrate(engine)
    assert db.current_revision(engine) == "0007"
    engine.dispose()
