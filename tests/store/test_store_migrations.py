"""Alembic migrations, run by init_db: the initial revision equals tables.py, re-running
is harmless, pre-migration databases are stamped, and a later revision keeps the data."""
from __future__ import annotations

import shutil
import threading
from pathlib import Path

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import inspect, text
from sqlmodel import SQLModel

from evalcore.store import db, queries
from evalcore.store.tables import Call

pytestmark = pytest.mark.real_migrations  # what Alembic does to a new database

LATER_REVISION = '''"""test only: add call.note"""
import sqlalchemy as sa
from alembic import op

revision = "0999"
down_revision = "{head}"
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table("call") as batch:
        batch.add_column(sa.Column("note", sa.String(), nullable=False, server_default="-"))


def downgrade():
    with op.batch_alter_table("call", recreate="always") as batch:
        batch.drop_column("note")
'''


def _head() -> str:
    return ScriptDirectory.from_config(db.alembic_config()).get_current_head()


def _diff(engine) -> list:  # type: ignore[no-untyped-def]
    with engine.connect() as conn:
        ctx = MigrationContext.configure(conn, opts={"compare_type": True})
        return compare_metadata(ctx, SQLModel.metadata)


def _fill(engine, item_ids: list[int]) -> int:  # type: ignore[no-untyped-def]
    run = queries.create_run(engine, kind="stability", rounds=2, config={"n": 2})
    calls = [Call(run_id=run.id, item_id=i, round=r, answer=f"a{i}.{r}")
             for i in item_ids for r in (1, 2)]
    assert queries.record_calls(engine, calls) == len(calls)
    return run.id  # type: ignore[return-value]


def _snapshot(engine, run_id: int) -> list[tuple]:  # type: ignore[no-untyped-def]
    return [(c.item_id, c.round, c.stage, c.answer) for c in queries.run_calls(engine, run_id)]


def test_fresh_database_is_at_head_and_matches_tables(store) -> None:
    assert db.current_revision(store) == _head()
    assert _diff(store) == []


def test_migration_scripts_ship_in_the_package() -> None:
    assert (db.MIGRATIONS_DIR / "env.py").is_file()
    scripts = ScriptDirectory.from_config(db.alembic_config())
    assert db.INITIAL_REVISION in {s.revision for s in scripts.walk_revisions()}


def test_init_db_twice_is_harmless_and_rows_survive(store_url, store, item_ids) -> None:
    run_id = _fill(store, item_ids)
    before = _snapshot(store, run_id)
    db.init_db(store)
    again = db.make_engine(store_url)
    try:
        assert db.current_revision(again) == _head()
        assert _snapshot(again, run_id) == before
        assert queries.get_run(again, run_id).config == {"n": 2}
    finally:
        again.dispose()


def test_database_made_before_migrations_is_stamped_not_recreated(store_url) -> None:
    legacy = db.make_engine(store_url, migrate=False)
    # what `create_all` made before migrations existed: revision 0001's tables, unversioned;
    # filled with plain SQL because today's models have columns 0001 lacks
    db.migrate(legacy, "0001")
    with legacy.begin() as conn:
        conn.execute(text("DROP TABLE alembic_version"))
        conn.execute(text(
            "INSERT INTO dataset (name, format, task_type, language, source_file, sha256, "
            "item_count, created_at, meta) VALUES ('old', 'mapped', 'math', 'en', '', '', 1, "
            "CURRENT_TIMESTAMP, '{}')"))
        conn.execute(text(
            "INSERT INTO item (dataset_id, idx, question, choices, task_type, language, meta) "
            "VALUES (1, 0, 'q', '[]', 'math', 'en', '{}')"))
        conn.execute(text(
            "INSERT INTO run (kind, status, name, model, judge, rounds, config, created_by, "
            "created_at, total, done, errors, retries, cancel_requested) VALUES ('stability', "
            "'done', '', 'm', 'rules', 2, '{}', '', CURRENT_TIMESTAMP, 2, 2, 0, 0, false)"))
        for rnd in (1, 2):
            conn.execute(text(
                "INSERT INTO call (run_id, item_id, round, stage, model, prompt, answer, "
                "attempts, created_at) VALUES (1, 1, :r, 'answer', 'm', 'p', :a, 1, "
                "CURRENT_TIMESTAMP)"), {"r": rnd, "a": f"a{rnd}"})
    assert db.current_revision(legacy) is None

    db.init_db(legacy)

    assert db.current_revision(legacy) == _head()
    assert _snapshot(legacy, 1) == [(1, 1, "answer", "a1"), (1, 2, "answer", "a2")]
    assert queries.get_run(legacy, 1).status == "done"
    legacy.dispose()


def test_later_revision_keeps_runs_and_calls(store_url, store, item_ids, tmp_path: Path) -> None:
    scripts = tmp_path / "migrations"
    shutil.copytree(db.MIGRATIONS_DIR, scripts, ignore=shutil.ignore_patterns("__pycache__"))
    (scripts / "versions" / "0999_note.py").write_text(LATER_REVISION.format(head=_head()))
    run_id = _fill(store, item_ids)
    before = _snapshot(store, run_id)

    db.migrate(store, script_location=scripts)

    assert db.current_revision(store) == "0999"
    assert "note" in {c["name"] for c in inspect(store).get_columns("call")}
    with store.connect() as conn:
        notes = conn.exec_driver_sql("SELECT DISTINCT note FROM call").scalars().all()
    assert notes == ["-"]
    assert _snapshot(store, run_id) == before

    with store.begin() as conn:  # and back down: the table is rebuilt, rows copied
        command.downgrade(db.alembic_config(conn, scripts), _head())
    assert "note" not in {c["name"] for c in inspect(store).get_columns("call")}
    assert _snapshot(store, run_id) == before
    assert queries.record_calls(store, [Call(run_id=run_id, item_id=item_ids[0], round=1)]) == 0


def test_processes_starting_together_migrate_once(store_url) -> None:
    errors: list[BaseException] = []
    engines = []
    gate = threading.Barrier(4)

    def start() -> None:
        try:
            engine = db.make_engine(store_url, migrate=False)
            engines.append(engine)
            gate.wait()
            db.init_db(engine)
        except BaseException as exc:  # noqa: BLE001  (reported below)
            errors.append(exc)

    threads = [threading.Thread(target=start) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert db.current_revision(engines[0]) == _head()
    assert _diff(engines[0]) == []
    for engine in engines:
        engine.dispose()


def test_a_database_from_a_newer_evalcore_is_refused_with_a_clear_error(store) -> None:
    from evalcore.errors import EvalcoreError

    with store.begin() as conn:
        conn.exec_driver_sql("UPDATE alembic_version SET version_num = '9999'")
    with pytest.raises(EvalcoreError, match="9999.*upgrade evalcore"):
        db.init_db(store)


def test_head_revision_constant_matches_alembic_head():
    from alembic.script import ScriptDirectory

    from evalcore.store.db import alembic_config
    from evalcore.store.migrations import HEAD_REVISION

    assert ScriptDirectory.from_config(alembic_config()).get_current_head() == HEAD_REVISION


def test_an_upgraded_database_shows_the_run_state_users_saw_before(store_url) -> None:
    """0021: before a run's state moved to its job, pages read the run row; a budget
    cancel's reason (and a status the runner wrote) lived there alone."""
    old = db.make_engine(store_url, migrate=False)
    db.migrate(old, "0020")
    with old.begin() as conn:
        for run_id, status, error in ((1, "cancelled", "budget: $0.50 of $0.50 spent"),
                                      (2, "done", None)):
            conn.execute(text(
                "INSERT INTO run (id, kind, status, name, model, judge, rounds, config, "
                "created_by, created_at, total, done, errors, retries, cancel_requested, error) "
                "VALUES (:id, 'stability', :s, '', 'm', 'rules', 1, '{}', '', "
                "CURRENT_TIMESTAMP, 1, 1, 0, 0, false, :e)"), {"id": run_id, "s": status, "e": error})
        for job_id, run_id, status in ((1, 1, "failed"), (2, 1, "done"), (3, 2, "done")):
            conn.execute(text(
                "INSERT INTO job (id, kind, run_id, params, label, created_by, total, status, "
                "owner, token, attempts, max_attempts, done, cancel_requested, result, "
                "created_at) VALUES (:id, 'run', :run, '{}', '', '', 1, :s, '', 1, 1, 3, 1, "
                "false, '{}', CURRENT_TIMESTAMP)"), {"id": job_id, "run": run_id, "s": status})
    db.init_db(old)

    cancelled, done = queries.get_run(old, 1), queries.get_run(old, 2)
    assert (cancelled.status, cancelled.error) == ("cancelled", "budget: $0.50 of $0.50 spent")
    assert (done.status, done.error) == ("done", None)
    with old.connect() as conn:  # only the newest run job of a run is its state
        assert conn.execute(text("SELECT status FROM job WHERE id = 1")).scalar_one() == "failed"
    old.dispose()
