"""The reads and writes the runner, the pages and the CLI share.

Each function opens its own short transaction, so it is safe from any thread or process;
given the Connection of a `store.db.transaction` instead of the engine, it joins that
transaction (an action's steps then commit together, once).
The hot path of a run (`flush_run`, `record_calls_fenced`) is plain SQL statements: no ORM loading, atomic increments, and a unique unit (run, item, round,
stage) that is written once even when a resumed run or a second process repeats it.

Secrets never reach the database: run configs and errors, and calls' answers, reasons
and errors pass through `redact_secrets` (`evalcore.masking`) first.
"""
from __future__ import annotations

import re
from datetime import datetime, timezone
from typing import Any, Iterable, Iterator, Mapping

from sqlalchemy import and_, delete, func, insert, select, update
from sqlalchemy.engine import Connection, Row
from sqlalchemy.exc import IntegrityError

from evalcore.errors import RunError
from evalcore.masking import REDACTED, mask_text
from evalcore.store import run_state
from evalcore.store.db import Bind, reading, transaction
from evalcore.store.jobs import hold, lease_alive, list_jobs
from evalcore.store.tables import Call, Item, Job, Run, RunItem, RunSummary
from evalcore.store.types import utcnow

CALL = Call.__table__
ITEM = Item.__table__
JOB = Job.__table__
RUN = Run.__table__
RUN_ITEM = RunItem.__table__
RUN_SUMMARY = RunSummary.__table__

FINISHED = ("done", "failed", "cancelled")
"""Run statuses that never change again."""

_UNIT = ("run_id", "item_id", "round", "stage")
_RUN_FIELDS = frozenset(RUN.c.keys()) - {"id"}
_CALL_FIELDS = tuple(name for name in CALL.c.keys() if name != "id")

# ------------------------------------------------------------------ secrets

_SECRET_KEY = re.compile(r"(^|_)(api_?key|(api|auth|access|refresh)_?token|secret(_?key)?|"
                         r"password|passwd|authorization)$|^(key|token|bearer)$", re.IGNORECASE)
_MASKED_CALL_COLUMNS = ("error", "answer", "reason")


_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _variable_name(key: Any, value: Any) -> bool:
    """A `*_env` field naming an environment variable (api_key_env, webhook_env): the
    name is no secret, and masking a look-alike of a key inside it (the key's letters
    without separators) would lose which variable the run read."""
    return (isinstance(key, str) and key.endswith("_env") and isinstance(value, str)
            and _ENV_NAME.fullmatch(value) is not None)


def redact_secrets(value: Any, secrets: list[str] | None = None) -> Any:
    """`value` with API keys removed: values under keys named like secrets, and in every
    string what `evalcore.masking.mask_text` masks (configured keys and pieces of them,
    credential patterns of any scheme)."""
    if isinstance(value, Mapping):
        return {k: REDACTED if isinstance(k, str) and _SECRET_KEY.search(k) and v
                else v if _variable_name(k, v)
                else redact_secrets(v, secrets) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [redact_secrets(v, secrets) for v in value]
    if isinstance(value, str):
        return mask_text(value, secrets)
    return value


# ------------------------------------------------------------------ runs


def create_run(engine: Bind, **fields: Any) -> Row:
    """Insert a run (status 'queued' unless given) and return it with its id."""
    _check_run_fields(fields)
    with transaction(engine) as conn:
        run_id = conn.execute(RUN.insert().values(**_clean_run_fields(fields))
                              .returning(RUN.c.id)).scalar_one()
        return get_run(conn, run_id)


def get_run(engine: Bind, run_id: int) -> Row:
    """The run `run_id` (a read-only row: its columns, state derived by
    `store.run_state`); raises RunError if there is none."""
    with reading(engine) as conn:
        found = run_state.runs_with_state(conn, run_state.select_runs().where(RUN.c.id == run_id))
    if not found:
        raise RunError(f"run {run_id} not found in the database; "
                       "list runs with `python -m evalcore runs list`")
    return found[0]


def list_runs(engine: Bind, kind: str | None = None, limit: int = 100,
              status: str | None = None) -> list[Row]:
    """The newest runs first, optionally of one kind and/or status (as
    `store.run_state` derives it)."""
    query = run_state.select_runs().order_by(RUN.c.id.desc()).limit(limit)
    if kind is not None:
        query = query.where(RUN.c.kind == kind)
    if status is not None:
        query = query.where(run_state.STATUS == status)
    with reading(engine) as conn:
        return run_state.runs_with_state(conn, query)


def update_run(engine: Bind, run_id: int, **fields: Any) -> Row:
    """Set `fields` on run `run_id` and return the updated run; RunError if missing."""
    _check_run_fields(fields)
    if fields:
        with transaction(engine) as conn:
            result = conn.execute(update(RUN).where(RUN.c.id == run_id)
                                  .values(**_clean_run_fields(fields)))
        if result.rowcount == 0:
            get_run(engine, run_id)  # raises the RunError
    return get_run(engine, run_id)


def delete_run(engine: Bind, run_id: int) -> Row:
    """Delete a run with its calls and jobs; refused while a worker is executing it."""
    run = get_run(engine, run_id)
    live = [j for j in list_jobs(engine, run_id=run_id) if lease_alive(j)]
    if live:
        raise RunError(f"run {run_id} is being executed by {live[0].owner}; cancel it first "
                       f"(`python -m evalcore runs cancel {run_id}`) and delete it when it stopped")
    with transaction(engine) as conn:
        conn.execute(delete(CALL).where(CALL.c.run_id == run_id))
        conn.execute(delete(RUN_SUMMARY).where(RUN_SUMMARY.c.run_id == run_id))
        conn.execute(delete(RUN_ITEM).where(RUN_ITEM.c.run_id == run_id))
        conn.execute(delete(JOB).where(JOB.c.run_id == run_id))
        conn.execute(delete(RUN).where(RUN.c.id == run_id))
    return run


def request_cancel(engine: Bind, run_id: int) -> bool:
    """Ask a queued or running run to stop; False if it had already finished.

    The cancel is asked of the run's job (`store.run_state.cancel`), which every flush of
    its worker reads; this works across processes.
    """
    with transaction(engine) as conn:
        asked = run_state.cancel(conn, run_id)
    if not asked:
        get_run(engine, run_id)  # raises the RunError if it does not exist
    return asked


def progress(engine: Bind, run_id: int) -> dict[str, Any]:
    """Counters of the run plus `rate` (done per second since start) and `eta` (seconds
    left, None while unknown); read from the run row only, so it is cheap to poll."""
    run = get_run(engine, run_id)
    rate: float | None = None
    eta: float | None = None
    if run.started_at is not None:
        end = run.finished_at or (run.heartbeat_at if run.status in FINISHED else None)
        elapsed = ((_aware(end) if end else utcnow()) - _aware(run.started_at)).total_seconds()
        if elapsed > 0 and run.done > 0:
            rate = run.done / elapsed
            if run.status not in FINISHED and run.total:
                eta = max(run.total - run.done, 0) / rate
    return {"done": run.done, "total": run.total, "errors": run.errors,
            "retries": run.retries, "status": run.status, "rate": rate, "eta": eta,
            "cancel_requested": run.cancel_requested,
            "fraction": min(run.done / run.total, 1.0) if run.total else 0.0}


# ------------------------------------------------------------------ calls


def record_calls(engine: Bind, calls: Iterable[Any], *,
                 count_progress: bool = False) -> int:
    """Store calls in one transaction; returns how many were new.

    Units (run, item, round, stage) already stored are skipped by the database
    (INSERT ... ON CONFLICT DO NOTHING), so a repeat never writes twice, even from
    another process at the same moment. Record in small batches (tens of calls).
    With `count_progress` the new calls are also added to their run's `done` (and
    `errors`, for calls with an error) in the same transaction, so the counters always
    match the stored calls, even after a crash.
    """
    rows = [_call_row(call) for call in calls]
    if not rows:
        return 0
    with transaction(engine) as conn:
        return _insert_calls(conn, rows, count_progress=count_progress)


def flush_run(engine: Bind, run_id: int, calls: Iterable[Mapping[str, Any]], *,
              fence: Any, done: int = 0, errors: int = 0, retries: int = 0) -> bool:
    """A runner's periodic write, fenced: renew the job's lease, store finished calls and
    add progress in one transaction; LeaseLost (nothing written) if the job was taken
    over. Returns whether a cancel was asked for."""
    rows = [_call_row(call) for call in calls]
    with transaction(engine) as conn:
        cancel = hold(conn, fence)
        if rows:
            _insert_calls(conn, rows)
        found = conn.execute(update(RUN).where(RUN.c.id == run_id).values(
            done=RUN.c.done + done, errors=RUN.c.errors + errors, retries=RUN.c.retries + retries,
            heartbeat_at=utcnow()).returning(RUN.c.id)).scalar_one_or_none()
    if found is None:
        get_run(engine, run_id)  # raises the RunError
    return cancel


def record_calls_fenced(engine: Bind, calls: Iterable[Mapping[str, Any]], *,
                        fence: Any, done: int | None = None, total: int | None = None) -> int:
    """`record_calls` for a job's worker: the job's lease is renewed (and its progress
    set) in the same transaction, or LeaseLost and nothing is written."""
    rows = [_call_row(call) for call in calls]
    with transaction(engine) as conn:
        hold(conn, fence, done=done, total=total)
        return _insert_calls(conn, rows) if rows else 0


def _insert_calls(conn: Connection, rows: list[dict[str, Any]], *,
                  count_progress: bool = False) -> int:
    dialect = conn.dialect.name
    if dialect in ("sqlite", "postgresql"):
        stmt = (_insert_for(dialect)(CALL)
                .on_conflict_do_nothing(index_elements=list(_UNIT))
                .returning(CALL.c.run_id, CALL.c.error))
        # `error IS NOT NULL` in RETURNING came back true for every row of a
        # multi-row insert into `call` on SQLite 3.40.1; the column itself is reliable.
        new = [(run_id, error is not None) for run_id, error in conn.execute(stmt, rows)]
    else:  # other databases: one savepoint per row
        new = _insert_one_by_one(conn, rows)
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


def archive_failed_calls(engine: Bind, run_id: int) -> int:
    """Move a run's failed calls out of the way (stage `answer` -> `answer#<call id>`), so
    a resume sends them again while their record stays; returns how many."""
    with transaction(engine) as conn:
        ids = list(conn.execute(select(CALL.c.id).where(
            CALL.c.run_id == run_id, CALL.c.error.is_not(None),
            CALL.c.stage.in_(("answer", "judge")))).scalars())
        for call_id in ids:
            conn.execute(update(CALL).where(CALL.c.id == call_id)
                         .values(stage=CALL.c.stage + f"#{call_id}"))
    return len(ids)


def answer_outcome(engine: Bind, run_id: int) -> tuple[int, int, str | None]:
    """(answer calls, failed answer calls, the first failure's error) of a run."""
    query = select(func.count(), func.count(CALL.c.error)).where(
        CALL.c.run_id == run_id, CALL.c.stage == "answer")
    first = (select(CALL.c.error).where(CALL.c.run_id == run_id, CALL.c.stage == "answer",
                                      CALL.c.error.is_not(None))
             .order_by(CALL.c.id).limit(1))
    with reading(engine) as conn:
        calls, failed = conn.execute(query).one()
        error = conn.execute(first).scalar_one_or_none()
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


def done_units(engine: Bind, run_id: int, *,
               include_failed: bool = True) -> set[tuple[int, int, str]]:
    """The (item_id, round, stage) units of the run already stored, to skip on resume.

    With `include_failed=False` calls that ended in an error are not counted as done;
    """
    query = select(CALL.c.item_id, CALL.c.round, CALL.c.stage).where(CALL.c.run_id == run_id)
    if not include_failed:
        query = query.where(CALL.c.error.is_(None))
    with reading(engine) as conn:
        return {(item, rnd, stage) for item, rnd, stage in conn.execute(query)}


def count_calls(engine: Bind, run_id: int, stage: str | None = None) -> int:
    """How many calls of the run are stored (optionally of one stage)."""
    query = select(func.count()).select_from(CALL).where(CALL.c.run_id == run_id)
    if stage is not None:
        query = query.where(CALL.c.stage == stage)
    with reading(engine) as conn:
        return int(conn.execute(query).scalar_one())


def run_calls(engine: Bind, run_id: int, stage: str | None = None) -> list[Row]:
    """All calls of a run in (item, round, stage) order; use `iter_calls` for big runs."""
    return list(iter_calls(engine, run_id, stage=stage))


def iter_calls(engine: Bind, run_id: int, batch: int = 1000,
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
    with reading(engine) as conn:
        for partition in conn.execute(query).partitions():
            yield from partition


def unjudged_answers(engine: Bind, run_id: int) -> list[tuple[int, int, str]]:
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
    with reading(engine) as conn:
        return [(item, rnd, answer) for item, rnd, answer in conn.execute(query)]


def iter_call_rows(engine: Bind, run_id: int, batch: int = 1000) -> Iterator[dict[str, Any]]:
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
    with reading(engine) as conn:
        items = {item_id: {"item_idx": idx, "question": question, "reference": reference,
                           "choices": choices, "task_type": task_type, "language": language}
                 for item_id, idx, question, reference, choices, task_type, language
                 in conn.execute(item_query)}
        for values in conn.execute(query):
            row = dict(zip(names, values))
            row.update(items[row["item_id"]])
            yield row


# ------------------------------------------------------------------ items


def add_run_items(engine: Bind, run_id: int, items: list[tuple[int, str | None]]) -> None:
    """Store a run's questions in order with their rendered prompts ([(item_id, prompt)])."""
    rows = [{"run_id": run_id, "position": n, "item_id": item_id, "prompt": prompt}
            for n, (item_id, prompt) in enumerate(items)]
    with transaction(engine) as conn:
        for start in range(0, len(rows), 1000):
            conn.execute(insert(RUN_ITEM), rows[start:start + 1000])


# ------------------------------------------------------------------ helpers


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


def _call_row(call: Any) -> dict[str, Any]:
    """A plain dict of columns for the INSERT, with defaults filled and secrets removed.

    Dicts (the runner's hot path) are completed from the column defaults without building
    a model object per row; required columns missing from a dict raise KeyError.
    """
    if not isinstance(call, Mapping):  # a Call object (tests, pages): its attributes
        row = {name: getattr(call, name) for name in _CALL_FIELDS}
    else:
        row = {name: call[name] if name in call else _CALL_DEFAULTS[name]
               for name in _CALL_FIELDS if name in call or name in _CALL_DEFAULTS}
        if "created_at" not in row or row["created_at"] is None:
            row["created_at"] = utcnow()
        missing = [name for name in _CALL_FIELDS if name not in row]
        if missing:
            raise KeyError(f"call row lacks required column(s) {missing}")
    for column in _MASKED_CALL_COLUMNS:
        if row.get(column):
            row[column] = mask_text(row[column])
    return row


def _check_run_fields(fields: Mapping[str, Any]) -> None:
    unknown = sorted(set(fields) - _RUN_FIELDS)
    if unknown:
        raise ValueError(f"unknown Run field(s) {unknown}; known: {sorted(_RUN_FIELDS)}")


def _clean_run_fields(fields: dict[str, Any]) -> dict[str, Any]:
    clean = dict(fields)
    for key in ("config", "error"):
        if clean.get(key):
            clean[key] = redact_secrets(clean[key])
    return clean


def _aware(moment: datetime) -> datetime:
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)


def recount_progress(engine: Bind, run_id: int, *, judged: bool) -> tuple[int, int]:
    """(done, errors) of a run recomputed from its stored calls, and written to the run.

    A unit (item, round) is done when its verdict is stored: its judge call when the run
    has a judge model, else its answer call; an answer that failed ends its unit too.
    Used when a run (re)starts and ends, so counters are exact even after a kill -9
    between storing calls and adding progress.
    """
    answer_errors = func.count(CALL.c.error).filter(CALL.c.stage == "answer")
    finished = func.count().filter(CALL.c.stage == ("judge" if judged else "answer"))
    query = select(finished, answer_errors).where(CALL.c.run_id == run_id)
    with reading(engine) as conn:
        verdicts, errors = conn.execute(query).one()
    done = int(verdicts) + (int(errors) if judged else 0)
    with transaction(engine) as conn:
        conn.execute(update(RUN).where(RUN.c.id == run_id).values(done=done, errors=int(errors)))
    return done, int(errors)
