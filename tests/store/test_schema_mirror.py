"""The Core mirror of the schema (`store/schema.py`, issue 22) is generated from the one
definition (the SQLModel tables) and stays equal to it: the file is what the generator
writes now, both compile to the same DDL on SQLite and PostgreSQL, and a row inserted
through either stores the same defaults."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
from sqlalchemy import select, types
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.schema import CreateIndex, CreateTable
from sqlmodel import SQLModel

from evalcore.store import schema, schema_gen
from evalcore.store.db import session_scope, transaction

DIALECTS = {"sqlite": sqlite.dialect(), "postgresql": postgresql.dialect()}


def test_the_committed_schema_is_what_the_generator_writes():
    assert schema_gen.TARGET.read_text(encoding="utf-8") == schema_gen.render(), (
        "evalcore/store/schema.py is stale: run `python -m evalcore.store.schema_gen`")
    assert schema_gen.main(["--check"]) == 0


def test_the_check_fails_on_a_stale_file(tmp_path, monkeypatch):
    stale = tmp_path / "schema.py"
    stale.write_text(schema_gen.render().replace("'run', metadata,", "'run', metadata,\n"),
                     encoding="utf-8")
    monkeypatch.setattr(schema_gen, "TARGET", stale)
    assert schema_gen.main(["--check"]) == 1


def _ddl(table: Any, dialect: Any) -> list[str]:
    statements = [str(CreateTable(table).compile(dialect=dialect))]
    statements += sorted(str(CreateIndex(index).compile(dialect=dialect))
                         for index in table.indexes)
    return statements


@pytest.mark.parametrize("dialect", sorted(DIALECTS))
def test_both_definitions_compile_to_the_same_ddl(dialect):
    orm = SQLModel.metadata.tables
    core = schema.metadata.tables
    assert sorted(core) == sorted(orm)
    for name in orm:
        assert _ddl(core[name], DIALECTS[dialect]) == _ddl(orm[name], DIALECTS[dialect]), name
        assert core[name].dialect_kwargs == orm[name].dialect_kwargs, name


def _value(column: Any, tag: int, parents: dict[str, Any]) -> Any:
    """A value for a required column; `tag` (1 or 2) keeps unique columns apart."""
    for fk in column.foreign_keys:
        return parents[fk.column.table.name][tag - 1]  # its own parent: unique pairs stay apart
    kind = column.type
    if isinstance(kind, types.DateTime):
        return datetime.now(timezone.utc) + timedelta(seconds=tag)
    if isinstance(kind, types.Boolean):
        return True
    if isinstance(kind, types.Integer):
        return tag
    if isinstance(kind, types.Float):
        return 0.5
    if isinstance(kind, types.JSON):
        return {"tag": tag}
    if isinstance(kind, types.LargeBinary):
        return b"x"
    return f"{column.name}-{tag}"


def _required(table: Any, tag: int, parents: dict[str, Any]) -> dict[str, Any]:
    return {c.name: _value(c, tag, parents) for c in table.columns
            if not c.nullable and c.default is None and not (c.primary_key and c.autoincrement
                                                            is not False and c.name == "id")}


def test_an_insert_through_either_path_stores_the_same_row(store):
    models = schema_gen.models()
    parents: dict[str, Any] = {}
    for orm_table in SQLModel.metadata.sorted_tables:  # parents first
        name = orm_table.name
        core_table = schema.metadata.tables[name]
        # what has no default anywhere (the mirror's Column defaults are the fields')
        orm_values = _required(core_table, 1, parents)
        core_values = _required(core_table, 2, parents)
        with session_scope(store) as session:
            row = models[name](**orm_values)
            session.add(row)
            session.flush()
            orm_key = [getattr(row, c.name) for c in orm_table.primary_key.columns]
        with transaction(store) as conn:
            core_key = list(conn.execute(core_table.insert().values(**core_values))
                            .inserted_primary_key)
        if "id" in orm_table.c:
            parents[name] = [orm_key[0], core_key[0]]

        def stored(key: list[Any]) -> dict[str, Any]:
            where = [c == v for c, v in zip(orm_table.primary_key.columns, key)]
            with store.connect() as conn:
                return dict(conn.execute(select(orm_table).where(*where)).one()._mapping)

        by_orm, by_core = stored(orm_key), stored(core_key)
        defaulted = [c.name for c in orm_table.columns
                     if c.name not in orm_values and not c.primary_key]
        for column in defaulted:
            if isinstance(by_orm[column], datetime):  # utcnow() at each insert
                assert isinstance(by_core[column], datetime), (name, column)
                assert abs(by_core[column] - by_orm[column]) < timedelta(minutes=1)
            else:
                assert by_core[column] == by_orm[column], (name, column)


def test_a_run_read_over_core_has_what_the_orm_read(store):
    """`queries.get_run` returns a Core row now: every column reads as the ORM object of
    the same row read it (aware UTC times, JSON, booleans), the state derived from its
    job (`store.run_state`)."""
    from sqlmodel import Session

    from evalcore.store import jobs, queries
    from evalcore.store.tables import Run

    run = queries.create_run(store, kind="stability", model="m", rounds=3,
                             config={"spec": {"rounds": 3}, "api_key": "sk-secret-1234567890"})
    with transaction(store) as conn:
        job_id = jobs.create_job(conn, "run", run_id=run.id, params={})
    jobs.cancel_job(store, job_id)
    row = queries.get_run(store, run.id)
    with Session(store) as session:
        orm = session.get(Run, run.id)
        own = {name: getattr(orm, name) for name in Run.model_fields}
    for name, value in own.items():
        if name in ("status", "cancel_requested", "finished_at", "error"):
            continue
        assert getattr(row, name) == value, name
        assert type(getattr(row, name)) is type(value), name
    assert row.config["api_key"] == "***"
    job = jobs.get_job(store, job_id)
    assert (row.status, row.cancel_requested) == ("cancelled", True) == (
        job.status, job.cancel_requested)  # the job's state, not the run row's
    assert row.finished_at is not None and row.finished_at.utcoffset() is not None  # aware UTC, as created_at
    assert [r.id for r in queries.list_runs(store, status="cancelled")] == [run.id]
