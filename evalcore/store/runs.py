"""A run's row: create, read (with the state its job gives it, `store.run_state`), list,
change, delete, cancel, and its progress counters.

Each function opens its own short transaction, so it is safe from any thread or process;
given the Connection of a `store.db.transaction`, it joins that transaction (an action's
steps then commit together, once). Configs and errors are redacted before they are
written (`store.redaction`).
"""
from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timezone
from typing import Any

from sqlalchemy import delete, func, select, update
from sqlalchemy.engine import Row

from evalcore.errors import RunError
from evalcore.store import run_state
from evalcore.store.db import Bind, reading, transaction
from evalcore.store.jobs import lease_alive, list_jobs
from evalcore.store.redaction import redact_run_fields
from evalcore.store.tables import Call, Job, Run, RunItem, RunSummary
from evalcore.store.types import utcnow

RUN = Run.__table__
CALL = Call.__table__
RUN_ITEM, RUN_SUMMARY, JOB = RunItem.__table__, RunSummary.__table__, Job.__table__

FINISHED = ("done", "failed", "cancelled")
"""Run statuses that never change again."""

_RUN_FIELDS = frozenset(RUN.c.keys()) - {"id"}


def create_run(conn: Bind, **fields: Any) -> Row:
    """Insert a run (status 'queued' unless given) and return it with its id."""
    _check_run_fields(fields)
    with transaction(conn) as tx:
        run_id = tx.execute(RUN.insert().values(**redact_run_fields(fields))
                              .returning(RUN.c.id)).scalar_one()
        return get_run(tx, run_id)


def get_run(conn: Bind, run_id: int) -> Row:
    """The run `run_id` (a read-only row: its columns, state derived by
    `store.run_state`); raises RunError if there is none."""
    with reading(conn) as tx:
        found = run_state.runs_with_state(tx, run_state.select_runs().where(RUN.c.id == run_id))
    if not found:
        raise RunError(f"run {run_id} not found in the database; "
                       "list runs with `python -m evalcore runs list`")
    return found[0]


def list_runs(conn: Bind, kind: str | None = None, limit: int = 100,
              status: str | None = None) -> list[Row]:
    """The newest runs first, optionally of one kind and/or status (as
    `store.run_state` derives it)."""
    query = run_state.select_runs().order_by(RUN.c.id.desc()).limit(limit)
    if kind is not None:
        query = query.where(RUN.c.kind == kind)
    if status is not None:
        query = query.where(run_state.STATUS == status)
    with reading(conn) as tx:
        return run_state.runs_with_state(tx, query)


def update_run(conn: Bind, run_id: int, **fields: Any) -> Row:
    """Set `fields` on run `run_id` and return the updated run; RunError if missing."""
    _check_run_fields(fields)
    if fields:
        with transaction(conn) as tx:
            result = tx.execute(update(RUN).where(RUN.c.id == run_id)
                                  .values(**redact_run_fields(fields)))
        if result.rowcount == 0:
            get_run(conn, run_id)  # raises the RunError
    return get_run(conn, run_id)


def delete_run(conn: Bind, run_id: int) -> Row:
    """Delete a run with its calls and jobs; refused while a worker is executing it."""
    run = get_run(conn, run_id)
    live = [j for j in list_jobs(conn, run_id=run_id) if lease_alive(j)]
    if live:
        raise RunError(f"run {run_id} is being executed by {live[0].owner}; cancel it first "
                       f"(`python -m evalcore runs cancel {run_id}`) and delete it when it stopped")
    with transaction(conn) as tx:
        for child in (CALL, RUN_SUMMARY, RUN_ITEM, JOB):  # what points at the run first
            tx.execute(delete(child).where(child.c.run_id == run_id))
        tx.execute(delete(RUN).where(RUN.c.id == run_id))
    return run


def request_cancel(conn: Bind, run_id: int) -> bool:
    """Ask a queued or running run to stop; False if it had already finished.

    The cancel is asked of the run's job (`store.run_state.cancel`), which every flush of
    its worker reads; this works across processes.
    """
    with transaction(conn) as tx:
        asked = run_state.cancel(tx, run_id)
    if not asked:
        get_run(conn, run_id)  # raises the RunError if it does not exist
    return asked


def progress(conn: Bind, run_id: int) -> dict[str, Any]:
    """Counters of the run plus `rate` (done per second since start) and `eta` (seconds
    left, None while unknown); read from the run row only, so it is cheap to poll."""
    run = get_run(conn, run_id)
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


def recount_progress(conn: Bind, run_id: int, *, judged: bool) -> tuple[int, int]:
    """(done, errors) of a run recomputed from its stored calls, and written to the run.

    A unit (item, round) is done when its verdict is stored: its judge call when the run
    has a judge model, else its answer call; an answer that failed ends its unit too.
    Used when a run (re)starts and ends, so counters are exact even after a kill -9
    between storing calls and adding progress.
    """
    answer_errors = func.count(CALL.c.error).filter(CALL.c.stage == "answer")
    finished = func.count().filter(CALL.c.stage == ("judge" if judged else "answer"))
    query = select(finished, answer_errors).where(CALL.c.run_id == run_id)
    with reading(conn) as tx:
        verdicts, errors = tx.execute(query).one()
    done = int(verdicts) + (int(errors) if judged else 0)
    with transaction(conn) as tx:
        tx.execute(update(RUN).where(RUN.c.id == run_id).values(done=done, errors=int(errors)))
    return done, int(errors)


def _check_run_fields(fields: Mapping[str, Any]) -> None:
    unknown = sorted(set(fields) - _RUN_FIELDS)
    if unknown:
        raise ValueError(f"unknown Run field(s) {unknown}; known: {sorted(_RUN_FIELDS)}")


def _aware(moment: datetime) -> datetime:
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)
