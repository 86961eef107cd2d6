"""The SQLModel tables are the one definition of the schema: the store's Core statements
use their `__table__`, so a row inserted through Core stores the defaults an ORM insert
stores (a field declared with its own `sa_column` carries its default on that Column)."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

from sqlalchemy import select, types
from sqlmodel import SQLModel

from evalcore.store import monitor_tables, tables  # noqa: F401 - registers every table
from evalcore.store.db import session_scope, transaction


def _models() -> dict[str, Any]:
    """{table name: its SQLModel class}."""
    return {mapper.class_.__table__.name: mapper.class_
            for mapper in SQLModel._sa_registry.mappers}  # type: ignore[attr-defined]


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


def _required(table: Any, model: Any, tag: int, parents: dict[str, Any]) -> dict[str, Any]:
    """Values for the columns whose field has no default: what neither path can fill."""
    fields = model.model_fields
    return {c.name: _value(c, tag, parents) for c in table.columns
            if not c.nullable and not (c.primary_key and c.autoincrement is not False
                                       and c.name == "id")
            and (c.name not in fields or fields[c.name].is_required())}


def test_a_core_insert_stores_what_an_orm_insert_stores(store):
    models = _models()
    parents: dict[str, Any] = {}
    for orm_table in SQLModel.metadata.sorted_tables:  # parents first
        name = orm_table.name
        # what has no default anywhere
        orm_values = _required(orm_table, models[name], 1, parents)
        core_values = _required(orm_table, models[name], 2, parents)
        with session_scope(store) as session:
            row = models[name](**orm_values)
            session.add(row)
            session.flush()
            orm_key = [getattr(row, c.name) for c in orm_table.primary_key.columns]
        with transaction(store) as conn:
            core_key = list(conn.execute(orm_table.insert().values(**core_values))
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
    # aware UTC, as created_at
    assert row.finished_at is not None and row.finished_at.utcoffset() is not None
    assert [r.id for r in queries.list_runs(store, status="cancelled")] == [run.id]
