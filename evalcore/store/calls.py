"""A run's model calls: the runner's fenced writes and the reads of results, resume and
exports.

The hot path of a run (`flush_run`, `record_calls_fenced`) is plain SQL statements: atomic
increments, and a unique unit (run, item, round, stage) that is written once even when a
resumed run or a second process repeats it. Answers, reasons and errors are masked before
they are written (`store.redaction`). Each function opens its own short transaction, or
joins the caller's (`store.db.transaction`).
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, NamedTuple

from sqlalchemy import and_, func, insert, select, update
from sqlalchemy.engine import Connection, Row
from sqlalchemy.exc import IntegrityError

from evalcore.masking import known_secrets
from evalcore.store.db import Bind, reading, transaction
from evalcore.store.jobs import hold
from evalcore.store.redaction import redact_call_row
from evalcore.store.runs import get_run
from evalcore.store.tables import Call, Item, Run
from evalcore.store.types import utcnow

CALL = Call.__table__
ITEM = Item.__table__
RUN = Run.__table__

_UNIT = ("run_id", "item_id", "round", "stage")
_CALL_FIELDS = tuple(name for name in CALL.c.keys() if name != "id")


def record_calls(conn: Bind, calls: Iterable[Any], *,
                 count_progress: bool = False) -> int:
    """Store calls in one transaction; returns how many were new.

    Units (run, item, round, stage) already stored are skipped by the database
    (INSERT ... ON CONFLICT DO NOTHING), so a repeat never writes twice, even from
    another process at the same moment. Record in small batches (tens of calls).
    With `count_progress` the new calls are also added to their run's `done` (and
    `errors`, for calls with an error) in the same transaction, so the counters always
    match the stored calls, even after a crash.
    """
    rows = _call_rows(calls)
    if not rows:
        return 0
    with transaction(conn) as tx:
        return _insert_calls(tx, rows, count_progress=count_progress)


def flush_run(conn: Bind, run_id: int, calls: Iterable[Mapping[str, Any]], *,
              fence: Any, done: int = 0, errors: int = 0, retries: int = 0) -> bool:
    """A runner's periodic write, fenced: renew the job's lease, store finished calls and
    add progress in one transaction; LeaseLost (nothing written) if the job was taken
    over. Returns whether a cancel was asked for."""
    rows = _call_rows(calls)
    with transaction(conn) as tx:
        cancel = hold(tx, fence)
        if rows:
            _insert_calls(tx, rows)
        found = tx.execute(update(RUN).where(RUN.c.id == run_id).values(
            done=RUN.c.done + done, errors=RUN.c.errors + errors, retries=RUN.c.retries + retries,
            heartbeat_at=utcnow()).returning(RUN.c.id)).scalar_one_or_none()
    if found is None:
        get_run(conn, run_id)  # raises the RunError
    return cancel


def record_calls_fenced(conn: Bind, calls: Iterable[Mapping[str, Any]], *,
                        fence: Any, done: int | None = None, total: int | None = None) -> int:
    """`record_calls` for a job's worker: the job's lease is renewed (and its progress
    set) in the same transaction, or LeaseLost and nothing is written."""
    rows = _call_rows(calls)
    with transaction(conn) as tx:
        hold(tx, fence, done=done, total=total)
        return _insert_calls(tx, rows) if rows else 0


def _insert_calls(conn: Connection, rows: list[dict[str, Any]], *,
                  count_progress: bool = False) -> int:
    dialect = conn.dialect.name
    if dialect not in ("sqlite", "postgresql"):  # other databases: one savepoint per row
        new = _insert_one_by_one(conn, rows)
    elif not count_progress:
        return _insert_many(conn, rows)
    else:  # which rows were new, and of which run: RETURNING
        stmt = (_insert_for(dialect)(CALL)
                .on_conflict_do_nothing(index_elements=list(_UNIT))
                .returning(CALL.c.run_id, CALL.c.error))
        # `error IS NOT NULL` in RETURNING came back true for every row of a
        # multi-row insert into `call` on SQLite 3.40.1; the column itself is reliable.
        new = [(run_id, error is not None) for run_id, error in conn.execute(stmt, rows)]
    if count_progress:
        counts: dict[int, list[int]] = {}
        for run_id, failed in new:
            counts.setdefault(run_id, [0, 0])
            counts[run_id][0] += 1
            counts[run_id][1] += int(bool(failed))
        now = utcnow()
        for run_id, (done, errors) in counts.items():
            conn.execute(update(RUN).where(RUN.c.id == run_id).values(
                done=RUN.c.done + done, errors=RUN.c.errors + errors, heartbeat_at=now))
    return len(new)


def _insert_many(conn: Connection, rows: list[dict[str, Any]]) -> int:
    """INSERT ... ON CONFLICT DO NOTHING of `rows` as one driver executemany; returns how
    many were new (the driver's summed rowcount).

    The statement is compiled once per dialect and each value goes through its column
    type's own bind processor (the same conversion SQLAlchemy applies), so the rows are
    stored exactly as `conn.execute(insert(...), rows)` would store them, while the
    driver, not SQLAlchemy's per-row Python (most of a flush's CPU), loops over them
    (docs/speed.md)."""
    many = _many_statement(conn.dialect)
    params: list[Any] = []
    for row in rows:
        values = [row[name] for name in many.names]
        for i, process in many.processors:
            values[i] = process(values[i])
        params.append(tuple(values) if many.positional else dict(zip(many.names, values)))
    return max(conn.exec_driver_sql(many.text, params).rowcount, 0)


class _Many(NamedTuple):
    """A compiled INSERT for executemany: its text, whether its parameters are positional,
    their column names in order, and (index, bind processor) of the columns that have one."""

    text: str
    positional: bool
    names: tuple[str, ...]
    processors: tuple[tuple[int, Callable[[Any], Any]], ...]


_MANY: dict[tuple[str, str, str], _Many] = {}


def _many_statement(dialect: Any) -> _Many:
    """`_insert_many`'s statement for `dialect`, built once."""
    key = (dialect.name, dialect.driver, dialect.paramstyle)
    if key not in _MANY:
        stmt = _insert_for(dialect.name)(CALL).on_conflict_do_nothing(index_elements=list(_UNIT))
        compiled = stmt.compile(dialect=dialect, column_keys=list(_CALL_FIELDS))
        names = tuple(compiled.positiontup) if compiled.positional else _CALL_FIELDS
        processors = tuple((i, process) for i, name in enumerate(names)
                           if (process := CALL.c[name].type.dialect_impl(dialect)
                               .bind_processor(dialect)) is not None)
        _MANY[key] = _Many(compiled.string, compiled.positional, names, processors)
    return _MANY[key]


def archive_failed_calls(conn: Bind, run_id: int) -> int:
    """Move a run's failed calls out of the way (stage `answer` -> `answer#<call id>`), so
    a resume sends them again while their record stays; returns how many."""
    with transaction(conn) as tx:
        ids = list(tx.execute(select(CALL.c.id).where(
            CALL.c.run_id == run_id, CALL.c.error.is_not(None),
            CALL.c.stage.in_(("answer", "judge")))).scalars())
        for call_id in ids:
            tx.execute(update(CALL).where(CALL.c.id == call_id)
                         .values(stage=CALL.c.stage + f"#{call_id}"))
    return len(ids)


def answer_outcome(conn: Bind, run_id: int) -> tuple[int, int, str | None]:
    """(answer calls, failed answer calls, the first failure's error) of a run."""
    query = select(func.count(), func.count(CALL.c.error)).where(
        CALL.c.run_id == run_id, CALL.c.stage == "answer")
    first = (select(CALL.c.error).where(CALL.c.run_id == run_id, CALL.c.stage == "answer",
                                      CALL.c.error.is_not(None))
             .order_by(CALL.c.id).limit(1))
    with reading(conn) as tx:
        calls, failed = tx.execute(query).one()
        error = tx.execute(first).scalar_one_or_none()
    return int(calls), int(failed), error


def _insert_one_by_one(conn: Connection, rows: list[dict[str, Any]]) -> list[tuple[int, bool]]:
    new = []
    for row in rows:
        try:
            with conn.begin_nested():
                conn.execute(insert(CALL), row)
            new.append((row["run_id"], row["error"] is not None))
        except IntegrityError:
            pass
    return new


def done_units(conn: Bind, run_id: int, *,
               include_failed: bool = True) -> set[tuple[int, int, str]]:
    """The (item_id, round, stage) units of the run already stored, to skip on resume.

    With `include_failed=False` calls that ended in an error are not counted as done;
    """
    query = select(CALL.c.item_id, CALL.c.round, CALL.c.stage).where(CALL.c.run_id == run_id)
    if not include_failed:
        query = query.where(CALL.c.error.is_(None))
    with reading(conn) as tx:
        return {(item, rnd, stage) for item, rnd, stage in tx.execute(query)}


def count_calls(conn: Bind, run_id: int, stage: str | None = None) -> int:
    """How many calls of the run are stored (optionally of one stage)."""
    query = select(func.count()).select_from(CALL).where(CALL.c.run_id == run_id)
    if stage is not None:
        query = query.where(CALL.c.stage == stage)
    with reading(conn) as tx:
        return int(tx.execute(query).scalar_one())


def run_calls(conn: Bind, run_id: int, stage: str | None = None) -> list[Row]:
    """All calls of a run in (item, round, stage) order; use `iter_calls` for big runs."""
    return list(iter_calls(conn, run_id, stage=stage))


def iter_calls(conn: Bind, run_id: int, batch: int = 1000,
               stage: str | None = None, stage_prefix: str | None = None) -> Iterator[Row]:
    """Stream a run's calls in (item, round, stage) order, `batch` rows in memory at a time,
    optionally of one stage or of the stages starting with `stage_prefix`.

    Reads in its own transaction, which never blocks the runner's writes.
    """
    query = (select(CALL).where(CALL.c.run_id == run_id)
             .order_by(CALL.c.item_id, CALL.c.round, CALL.c.stage)
             .execution_options(yield_per=batch))
    if stage is not None:
        query = query.where(CALL.c.stage == stage)
    if stage_prefix is not None:
        query = query.where(CALL.c.stage.startswith(stage_prefix, autoescape=True))
    with reading(conn) as tx:
        for partition in tx.execute(query).partitions():
            yield from partition


def unjudged_answers(conn: Bind, run_id: int) -> list[tuple[int, int, str]]:
    """(item_id, round, answer) of successful answer calls with no judge call yet, in
    unit order: what a resumed run with a judge model still has to judge."""
    judge = CALL.alias("judge")
    query = (select(CALL.c.item_id, CALL.c.round, CALL.c.answer)
             .outerjoin(judge, and_(judge.c.run_id == CALL.c.run_id,
                                    judge.c.item_id == CALL.c.item_id,
                                    judge.c.round == CALL.c.round, judge.c.stage == "judge"))
             .where(CALL.c.run_id == run_id, CALL.c.stage == "answer",
                    CALL.c.error.is_(None), CALL.c.answer.is_not(None),
                    judge.c.id.is_(None))
             .order_by(CALL.c.item_id, CALL.c.round))
    with reading(conn) as tx:
        return [(item, rnd, answer) for item, rnd, answer in tx.execute(query)]


def iter_call_rows(conn: Bind, run_id: int, batch: int = 1000) -> Iterator[dict[str, Any]]:
    """Stream a run's calls joined with their items as plain dicts, ordered by item
    position (`item_idx`), round, then stage ('answer' before 'judge'): the export rows.

    Keys: the call columns except prompt and created_at, plus item_idx, question,
    reference, choices, task_type and language of the item. ITEM fields are read once
    per item, not once per call (a 100-round run repeats each item 100 times).
    """
    columns = [c for c in CALL.columns
               if c.name not in ("id", "prompt", "created_at")]
    names = [c.name for c in columns]
    used = select(CALL.c.item_id).where(CALL.c.run_id == run_id).distinct()
    item_query = select(ITEM.c.id, ITEM.c.idx, ITEM.c.question, ITEM.c.reference, ITEM.c.choices,
                        ITEM.c.task_type, ITEM.c.language).where(ITEM.c.id.in_(used))
    query = (select(*columns)
             .join(ITEM, ITEM.c.id == CALL.c.item_id)
             .where(CALL.c.run_id == run_id)
             .order_by(ITEM.c.idx, CALL.c.item_id, CALL.c.round, CALL.c.stage)
             .execution_options(yield_per=batch))
    with reading(conn) as tx:
        items = {item_id: {"item_idx": idx, "question": question, "reference": reference,
                           "choices": choices, "task_type": task_type, "language": language}
                 for item_id, idx, question, reference, choices, task_type, language
                 in tx.execute(item_query)}
        for values in tx.execute(query):
            row = dict(zip(names, values))
            row.update(items[row["item_id"]])
            yield row


def _insert_for(dialect: str):
    if dialect == "sqlite":
        from sqlalchemy.dialects.sqlite import insert as dialect_insert
    else:
        from sqlalchemy.dialects.postgresql import insert as dialect_insert
    return dialect_insert


def _call_defaults() -> dict[str, Any]:
    """{column: its default} of the columns a call row may leave out (not created_at,
    whose default is a clock: set per row)."""
    return {c.name: c.default.arg if c.default is not None else None for c in CALL.c
            if c.name != "id" and ((c.default is not None and c.default.is_scalar)
                                   or (c.default is None and c.nullable))}


_CALL_DEFAULTS = _call_defaults()


def _call_rows(calls: Iterable[Any]) -> list[dict[str, Any]]:
    """`_call_row` of each call, the secrets to mask read once for all of them."""
    secrets = known_secrets()
    return [_call_row(call, secrets) for call in calls]


def _call_row(call: Any, secrets: frozenset[str] | None = None) -> dict[str, Any]:
    """A plain dict of columns for the INSERT, with defaults filled and secrets removed.

    Dicts (the runner's hot path) are completed from the column defaults without building
    a model object per row; required columns missing from a dict raise KeyError.
    """
    # a dict is tested first: the Mapping check goes through the ABC machinery, once a
    # row on the runner's path
    if not (isinstance(call, dict) or isinstance(call, Mapping)):  # a Call object
        row = {name: getattr(call, name) for name in _CALL_FIELDS}
    else:
        row = _CALL_DEFAULTS | {name: call[name] for name in _CALL_FIELDS if name in call}
        if row.get("created_at") is None:
            row["created_at"] = utcnow()
        if len(row) < len(_CALL_FIELDS):
            missing = [name for name in _CALL_FIELDS if name not in row]
            raise KeyError(f"call row lacks required column(s) {missing}")
    return redact_call_row(row, secrets)
