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

from sqlalchemy import case, func, select, update
from sqlalchemy.engine import Connection
from sqlalchemy.orm import aliased
from sqlalchemy.orm.attributes import set_committed_value
from sqlalchemy.sql import Select

from evalcore.store import jobs
from evalcore.store.tables import Job, Run

RunJob = aliased(Job, name="run_job")
"""The newest job of kind 'run' of each run (outer-joined by `with_state`)."""

STATE_FIELDS = ("status", "error", "cancel_requested", "finished_at")
"""The run's attributes that are derived here, never read from its row alone."""

_NEWEST_RUN_JOB_ID = func.max(case((Job.kind == "run", Job.id)))
"""The kind is tested inside the max, not in WHERE: with `kind = 'run'` in WHERE, SQLite
may search the job index on kind (every run's job) once per run instead of run_id's."""
_NEWEST_JOB = (select(_NEWEST_RUN_JOB_ID).where(Job.run_id == Run.id)
               .correlate(Run).scalar_subquery())
_HAS_JOB = RunJob.id.is_not(None)

STATUS = case((_HAS_JOB, RunJob.status), else_=Run.status).label("status")
"""A run's status as users see it: its job's while it has one, else its stored one."""
ERROR = case((_HAS_JOB, RunJob.error), else_=Run.error).label("error")
CANCEL_REQUESTED = case((_HAS_JOB, RunJob.cancel_requested),
                        else_=Run.cancel_requested).label("cancel_requested")
FINISHED_AT = case((_HAS_JOB, RunJob.finished_at), else_=Run.finished_at).label("finished_at")
STATE = (STATUS, ERROR, CANCEL_REQUESTED, FINISHED_AT)


def with_state(query: Select) -> Select:
    """`query` (selecting from `run`) joined with each run's newest run job, so that
    `STATUS`, `ERROR`, `CANCEL_REQUESTED` and `FINISHED_AT` can be selected and filtered on."""
    return query.outerjoin(RunJob, RunJob.id == _NEWEST_JOB)


def state_row(row: Any) -> dict[str, Any]:
    """{field: value} of the `STATE` columns a result row holds, times as the run's own
    columns hold them (naive UTC), whichever table they came from."""
    mapping = row._mapping
    out = {name: mapping[name] for name in STATE_FIELDS if name in mapping}
    if "cancel_requested" in out:
        out["cancel_requested"] = bool(out["cancel_requested"])
    if "finished_at" in out:
        out["finished_at"] = naive_utc(out["finished_at"])
    return out


def runs_with_state(session: Any, query: Select) -> list[Run]:
    """The Run objects of `query` (a `select(Run)` with filters on `STATUS` allowed) with
    their state attributes set from `STATE`, as if stored (nothing is marked changed)."""
    rows = session.execute(with_state(query.add_columns(*STATE))).all()
    runs = []
    for row in rows:
        run = row[0]
        for name, value in state_row(row).items():
            set_committed_value(run, name, value)
        runs.append(run)
    return runs


def naive_utc(moment: Optional[datetime]) -> Optional[datetime]:
    """`moment` as naive UTC: job times are zone-aware on PostgreSQL, run times naive."""
    if moment is None or moment.tzinfo is None:
        return moment
    return moment.astimezone(timezone.utc).replace(tzinfo=None)


def cancel(conn: Connection, run_id: int) -> bool:
    """Ask run `run_id` to stop, on the owner of its state: its job (a queued one is
    cancelled at once), or for a run without one its own row. False if it had ended."""
    job_id = conn.execute(select(_newest_job_of(run_id))).scalar()
    if job_id is not None:
        return jobs.cancel_job(conn, int(job_id))
    result = conn.execute(update(Run).where(Run.id == run_id,
                                            Run.status.not_in(jobs.JOB_FINISHED))  # type: ignore[attr-defined]
                          .values(cancel_requested=True))
    return result.rowcount > 0


def _newest_job_of(run_id: int) -> Any:
    return select(_NEWEST_RUN_JOB_ID).where(Job.run_id == run_id).scalar_subquery()
