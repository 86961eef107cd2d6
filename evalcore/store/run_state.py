"""Where a run's state lives: the one place that says what status a run is in.

A run executed by the job queue has ONE owner of its state, its newest job of kind
'run' (`store.jobs`): queued or running, its lease, a cancel asked for, its attempts,
and how it ended (done, failed or cancelled, the error and the time), all written by
the job's own transitions (claim, release, requeue, cancel, abandon, `finish_job` with
the runner's outcome). The run row keeps what the run is (kind, model, config) and its
progress (counters, heartbeat, start). A run with no job (made before the job queue, or
written straight to the store) keeps the state stored on its own row.

Every read of a run's status, error, end time or cancel request goes through the
expressions below (`get_run`, `list_runs`, the run browser, schedules, baselines), and
filters such as "only finished runs" use them too. No code copies the job's state onto
the run, so the two can never disagree: a crash between two writes cannot happen when
there is one write.
"""
from __future__ import annotations

from datetime import datetime, timezone
from typing import Any, Optional

from sqlalchemy import Boolean, case, func, select, type_coerce, types, update
from sqlalchemy.engine import Connection, Row
from sqlalchemy.sql import Select

from evalcore.store import jobs
from evalcore.store.tables import Job, Run

JOB = Job.__table__
RUN = Run.__table__

RunJob = JOB.alias("run_job")
"""The newest job of kind 'run' of each run (outer-joined by `with_state`)."""

STATE_FIELDS = ("status", "error", "cancel_requested", "finished_at")
"""The run's attributes that are derived here, never read from its row alone."""

_NEWEST_RUN_JOB_ID = func.max(case((JOB.c.kind == "run", JOB.c.id)))
"""The kind is tested inside the max, not in WHERE: with `kind = 'run'` in WHERE, SQLite
may search the job index on kind (every run's job) once per run instead of run_id's."""
_NEWEST_JOB = (select(_NEWEST_RUN_JOB_ID).where(JOB.c.run_id == RUN.c.id)
               .correlate(RUN).scalar_subquery())
_HAS_JOB = RunJob.c.id.is_not(None)

STATUS = case((_HAS_JOB, RunJob.c.status), else_=RUN.c.status).label("status")
"""A run's status as users see it: its job's while it has one, else its stored one."""
ERROR = case((_HAS_JOB, RunJob.c.error), else_=RUN.c.error).label("error")
CANCEL_REQUESTED = type_coerce(
    case((_HAS_JOB, RunJob.c.cancel_requested), else_=RUN.c.cancel_requested),
    Boolean).label("cancel_requested")


class _AwareUTC(types.TypeDecorator):
    """Read as aware UTC (`aware_utc`), as the run's other times are: a job's end is
    zone-aware on PostgreSQL and naive on SQLite; a run's `finished_at` reads the same
    whichever table and database it came from."""

    impl = types.DateTime
    cache_ok = True

    def process_result_value(self, value: Any, dialect: Any) -> Any:
        return aware_utc(value)


FINISHED_AT = type_coerce(case((_HAS_JOB, RunJob.c.finished_at), else_=RUN.c.finished_at),
                          _AwareUTC(timezone=True)).label("finished_at")
STATE = (STATUS, ERROR, CANCEL_REQUESTED, FINISHED_AT)


def with_state(query: Select) -> Select:
    """`query` (selecting from `run`) joined with each run's newest run job, so that
    `STATUS`, `ERROR`, `CANCEL_REQUESTED` and `FINISHED_AT` can be selected and filtered on."""
    return query.outerjoin(RunJob, RunJob.c.id == _NEWEST_JOB)


def state_row(row: Any) -> dict[str, Any]:
    """{field: value} of the `STATE` columns a result row holds, times as the run's own
    columns hold them (aware UTC), whichever table they came from."""
    mapping = row._mapping
    out = {name: mapping[name] for name in STATE_FIELDS if name in mapping}
    if "cancel_requested" in out:
        out["cancel_requested"] = bool(out["cancel_requested"])
    if "finished_at" in out:
        out["finished_at"] = aware_utc(out["finished_at"])
    return out


def select_runs() -> Select:
    """`select` of whole runs: every column of the run row, the state ones (`STATE`)
    derived; add filters (on `STATUS` too) and run it with `runs_with_state`."""
    own = [c for c in RUN.c if c.name not in STATE_FIELDS]
    return select(*own, *STATE).select_from(RUN)


def runs_with_state(conn: Connection, query: Select) -> list[Row]:
    """The runs of `query` (a `select_runs()` with filters), each a read-only row with
    the run's attribute names, its state derived from its job."""
    return list(conn.execute(with_state(query)).all())


def aware_utc(moment: Optional[datetime]) -> Optional[datetime]:
    """`moment` as aware UTC: SQLite keeps UTC without an offset, PostgreSQL with one."""
    if moment is None:
        return None
    if moment.tzinfo is None:
        return moment.replace(tzinfo=timezone.utc)
    return moment.astimezone(timezone.utc)


def cancel(conn: Connection, run_id: int) -> bool:
    """Ask run `run_id` to stop, on the owner of its state: its job (a queued one is
    cancelled at once), or for a run without one its own row. False if it had ended."""
    job_id = conn.execute(select(_newest_job_of(run_id))).scalar()
    if job_id is not None:
        return jobs.cancel_job(conn, int(job_id))
    result = conn.execute(update(RUN).where(RUN.c.id == run_id,
                                            RUN.c.status.not_in(jobs.JOB_FINISHED))
                          .values(cancel_requested=True))
    return result.rowcount > 0


def _newest_job_of(run_id: int) -> Any:
    return select(_NEWEST_RUN_JOB_ID).where(JOB.c.run_id == run_id).scalar_subquery()
