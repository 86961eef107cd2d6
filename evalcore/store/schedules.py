"""Schedules in the database: their periods, and turning due times into jobs exactly once.

Every worker calls `enqueue_due` about once a second. For a schedule whose `next_due_at`
has come it inserts, in ONE transaction, the `schedule_run` row of that due time (unique
per schedule and due time), the job that makes its run, and the schedule's next due
time. Two workers racing for one due time: one insert wins, the other's transaction
fails on the unique key and rolls back whole. A worker dying afterwards leaves a queued
job the job engine hands to another worker (claim, lease, fence). A due time whose
previous run is still going gets a `skipped` row and no job: runs are never doubled.
`enqueue_checks` does the same for finished runs (one gate-and-alert job each).

Missed due times (no worker ran, or the database could not be reached): the first one
missed is run as soon as a worker can (late, saying why); the later ones of the same gap
are recorded `skipped` with the reason, so a gap never starts a burst of runs at once.
"""
from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone
from typing import Any, Callable, Optional

from sqlalchemy import delete, select, update
from sqlalchemy.engine import Connection, Engine, Row
from sqlalchemy.exc import IntegrityError

from evalcore.errors import EvalcoreError
from evalcore.store import run_state
from evalcore.store.db import Bind, reading, transaction
from evalcore.store.jobs import create_job
from evalcore.store.monitor_tables import Schedule, ScheduleRun
from evalcore.store.tables import Job, Run
from evalcore.store.types import utcnow

RUN = Run.__table__
SCHEDULE = Schedule.__table__
SCHEDULE_RUN = ScheduleRun.__table__

UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
MAX_SKIPPED = 50
"""Due times missed while no worker ran are recorded as skipped, up to this many."""
NO_WORKER = "no worker was running at this due time"
LATE_WORKER = ("a worker was running but reached this due time late (a busy machine); "
               "skipped so that late due times do not pile up runs")
Unreachable = Callable[[datetime], Optional[tuple[datetime, datetime]]]
"""When the caller could not reach the database around a moment: (from, to), else None."""


def _missed(when: datetime, unreachable: Optional[Unreachable], *, ran: bool,
            running_since: Optional[datetime] = None) -> Optional[str]:
    """Why due time `when` was missed: the database could not be reached (the caller
    was running then), else the caller was running but late (it has run since before
    `when`), else no worker ran. `ran`: this due time is run now, late; None when it is
    not late for a known outage."""
    window = unreachable(when) if unreachable is not None else None
    if window is None:
        if ran:
            return None
        return (LATE_WORKER if running_since is not None and as_utc(running_since) <= when
                else NO_WORKER)
    start, end = window
    gap = f"from {start:%H:%M:%S} to {end:%H:%M:%S} UTC"
    if ran:
        return (f"late: the database could not be reached at this due time ({gap}); "
                "run when it came back")
    return (f"the database could not be reached at this due time ({gap}); the first due "
            "time it missed was run when it came back, this one skipped")
RUN_ENDED = ("done", "failed", "cancelled")


class ScheduleError(EvalcoreError):
    """A schedule cannot be made or found (the message says what to change)."""


def parse_every(text: str) -> int:
    """Seconds of a period written `10s`, `5m`, `1h` or `1d` (a bare number is seconds)."""
    match = re.fullmatch(r"\s*(\d+)\s*([smhd]?)\s*", str(text or ""))
    if not match or int(match.group(1)) <= 0:
        raise ScheduleError(f"period {text!r} is not N followed by s, m, h or d (e.g. 10s, "
                            "5m, 1h, 1d)")
    return int(match.group(1)) * UNITS[match.group(2) or "s"]


def every_label(every_s: Optional[int], cron: Optional[str]) -> str:
    """The period as people write it: '5m', '1d', or 'cron 0 6 * * *'."""
    if cron:
        return f"cron {cron}"
    seconds = int(every_s or 0)
    for unit in ("d", "h", "m"):
        if seconds and seconds % UNITS[unit] == 0:
            return f"{seconds // UNITS[unit]}{unit}"
    return f"{seconds}s"


def check_cron(expr: str) -> str:
    """`expr` if cronsim accepts it (5 fields, UTC), else ScheduleError saying why."""
    from cronsim import CronSim, CronSimError

    try:
        CronSim(expr, datetime.now(timezone.utc))
    except CronSimError as exc:
        raise ScheduleError(f"cron expression {expr!r}: {exc} (five fields: minute hour "
                            "day-of-month month day-of-week, in UTC)") from None
    return expr


def as_utc(when: datetime) -> datetime:
    """`when` with UTC as its zone when it has none (SQLite returns naive datetimes)."""
    return when if when.tzinfo is not None else when.replace(tzinfo=timezone.utc)


def following(every_s: Optional[int], cron: Optional[str], after: datetime,
              anchor: Optional[datetime] = None) -> datetime:
    """The first due time strictly after `after`: on the grid anchor + k * every_s, or
    the cron expression's next time (UTC)."""
    after = as_utc(after)
    if cron:
        from cronsim import CronSim

        return as_utc(next(CronSim(cron, after)))
    step = int(every_s or 0)
    if step <= 0:
        raise ScheduleError("a schedule needs a period (every N s/m/h/d) or a cron expression")
    base = as_utc(anchor or after)
    if base > after:
        return base
    k = int((after - base).total_seconds() // step) + 1
    return base + timedelta(seconds=k * step)


# ------------------------------------------------------------------ rows


def add_schedule(conn: Bind, *, kind: str, params: dict[str, Any], every_s: Optional[int],
                 cron: Optional[str], gate: dict[str, Any], channels: list[dict[str, Any]],
                 created_by: str = "", start: Optional[datetime] = None) -> Row:
    """Store a schedule; its first run is due one period from now (or at `start`)."""
    if bool(every_s) == bool(cron):
        raise ScheduleError("give exactly one of --every (10s, 5m, 1h, 1d) and --cron EXPR")
    if cron:
        check_cron(cron)
    now = utcnow()
    first = as_utc(start) if start else following(every_s, cron, now, now if every_s else None)
    with transaction(conn) as tx:
        schedule_id = tx.execute(SCHEDULE.insert().values(
            kind=kind, params=params, every_s=every_s, cron=cron, gate=gate,
            channels=channels, paused=False, next_due_at=first, created_by=created_by,
            created_at=now).returning(SCHEDULE.c.id)).scalar_one()
        return get_schedule(tx, schedule_id)


def get_schedule(conn: Bind, schedule_id: int) -> Row:
    """Schedule `schedule_id` (a read-only row), or ScheduleError pointing at
    `schedules list`."""
    with reading(conn) as tx:
        row = tx.execute(select(SCHEDULE).where(SCHEDULE.c.id == schedule_id)).first()
    if row is None:
        raise ScheduleError(f"schedule {schedule_id} not found; see `python -m evalcore "
                            "schedules list`")
    return row


def list_schedules(conn: Bind) -> list[Row]:
    with reading(conn) as tx:
        return list(tx.execute(select(SCHEDULE).order_by(SCHEDULE.c.id)).all())


def schedule_runs(conn: Bind, schedule_id: int, limit: int = 200) -> list[Row]:
    """The schedule's due times, oldest first (at most the newest `limit`)."""
    query = (select(SCHEDULE_RUN).where(SCHEDULE_RUN.c.schedule_id == schedule_id)
             .order_by(SCHEDULE_RUN.c.due_at.desc()).limit(limit))
    with reading(conn) as tx:
        return list(reversed(tx.execute(query).all()))


def run_statuses(conn: Bind, run_ids: list[int]) -> dict[int, str]:
    """{run id: its status} as users see it (`run_state.STATUS`: its job's while it has
    one), for the runs a schedule's due times made; a deleted run is absent."""
    if not run_ids:
        return {}
    query = (run_state.with_state(select(RUN.c.id, run_state.STATUS).select_from(RUN))
             .where(RUN.c.id.in_(sorted(set(run_ids)))))
    with reading(conn) as tx:
        return {int(i): str(status) for i, status in tx.execute(query)}


def set_paused(conn: Bind, schedule_id: int, paused: bool) -> Row:
    """Pause or resume; a resumed schedule's next due time is the next one from now."""
    row = get_schedule(conn, schedule_id)
    values: dict[str, Any] = {"paused": paused}
    if not paused:
        now = utcnow()
        if as_utc(row.next_due_at) <= now:
            values["next_due_at"] = following(row.every_s, row.cron, now, row.next_due_at)
    with transaction(conn) as tx:
        tx.execute(update(SCHEDULE).where(SCHEDULE.c.id == schedule_id).values(**values))
    return get_schedule(conn, schedule_id)


def edit_schedule(conn: Bind, schedule_id: int, **changes: Any) -> Row:
    """Change a schedule's period (`every_s` or `cron`, the next due time then counts
    from now), gate, channels or run options; other keys are refused."""
    row = get_schedule(conn, schedule_id)
    unknown = set(changes) - {"every_s", "cron", "gate", "channels", "params"}
    if unknown:
        raise ScheduleError(f"cannot change {sorted(unknown)} of a schedule")
    values = dict(changes)
    if "every_s" in changes or "cron" in changes:
        every_s, cron = changes.get("every_s"), changes.get("cron")
        if bool(every_s) == bool(cron):
            raise ScheduleError("give exactly one of --every (10s, 5m, 1h, 1d) and --cron EXPR")
        if cron:
            check_cron(cron)
        now = utcnow()
        values.update(every_s=every_s, cron=cron,
                      next_due_at=following(every_s, cron, now, now if every_s else None))
    if values:
        with transaction(conn) as tx:
            tx.execute(update(SCHEDULE).where(SCHEDULE.c.id == row.id).values(**values))
    return get_schedule(conn, schedule_id)


def delete_schedule(conn: Bind, schedule_id: int) -> Row:
    """Delete a schedule and its due-time rows; its runs stay (they are ordinary runs)."""
    row = get_schedule(conn, schedule_id)
    with transaction(conn) as tx:
        tx.execute(delete(SCHEDULE_RUN).where(SCHEDULE_RUN.c.schedule_id == schedule_id))
        tx.execute(delete(SCHEDULE).where(SCHEDULE.c.id == schedule_id))
    return row


# ------------------------------------------------------------------ due times -> jobs


def _previous_busy(conn: Connection, schedule_id: int) -> Optional[str]:
    """Why the next due time must wait: the newest due time's run is still going."""
    last = conn.execute(
        select(SCHEDULE_RUN.c.id, SCHEDULE_RUN.c.status, SCHEDULE_RUN.c.run_id)
        .where(SCHEDULE_RUN.c.schedule_id == schedule_id, SCHEDULE_RUN.c.status != "skipped")
        .order_by(SCHEDULE_RUN.c.due_at.desc()).limit(1)).one_or_none()
    if last is None:
        return None
    if last.status == "queued":
        ended = _creation_ended(conn, int(last.id))
        if ended is None:
            return f"the previous due time's run is still being created (row {last.id})"
        conn.execute(update(SCHEDULE_RUN).where(SCHEDULE_RUN.c.id == last.id).values(
            status="skipped", verdict="run failed",
            reason=f"its run was never created: the job making it {ended}"))
        return None
    if last.run_id is not None:
        status = conn.execute(run_state.with_state(select(run_state.STATUS).select_from(RUN))
                              .where(RUN.c.id == last.run_id)).scalar()
        if status is not None and status not in RUN_ENDED:
            return f"run {last.run_id} of the previous due time is still {status}"
    return None


def _creation_ended(conn: Connection, row_id: int) -> Optional[str]:
    """How the job creating due-time row `row_id`'s run ended ("failed: ..."), or None
    while it may still make the run. A creation job that failed (a database lost in the
    middle of it) would otherwise block every later due time of the schedule."""
    job = Job.__table__
    found = conn.execute(select(job.c.status, job.c.error).where(
        job.c.kind == "schedule", job.c.params["schedule_run"].as_integer() == row_id,
        job.c.params["step"].as_string() == "create")).all()
    if not found or any(j.status not in ("done", "failed", "cancelled") for j in found):
        return None
    last = found[-1]
    return f"{last.status}: {last.error}" if last.error else last.status


def _enqueue_one(engine: Engine, schedule_id: int, now: datetime,
                 unreachable: Optional[Unreachable] = None,
                 running_since: Optional[datetime] = None) -> Optional[int]:
    """Handle one schedule's due time in one transaction; returns the job id (None when
    skipped, not due, or another worker got there first)."""
    try:
        with engine.begin() as conn:
            row = conn.execute(
                select(SCHEDULE).where(SCHEDULE.c.id == schedule_id, SCHEDULE.c.paused.is_(False),
                                       SCHEDULE.c.next_due_at <= now)
                .with_for_update(skip_locked=True)).one_or_none()
            if row is None:
                return None
            due = as_utc(row.next_due_at)
            nxt = following(row.every_s, row.cron, due, due)
            missed = []
            while nxt <= now and len(missed) < MAX_SKIPPED:  # no worker ran for a while
                missed.append(nxt)
                nxt = following(row.every_s, row.cron, nxt, due)
            while nxt <= now:
                nxt = following(row.every_s, row.cron, now, due)
            busy = _previous_busy(conn, schedule_id)
            table = SCHEDULE_RUN
            base = dict(schedule_id=schedule_id, checks=[], created_at=now)
            job_id = None
            if busy:
                conn.execute(table.insert().values(due_at=due, status="skipped",
                                                   reason=busy, **base))
            else:
                sr = conn.execute(table.insert().values(
                    due_at=due, status="queued", reason=_missed(due, unreachable, ran=True),
                    **base).returning(table.c.id)).scalar_one()
                job_id = create_job(conn, "schedule", params={"schedule_run": int(sr),
                                                               "step": "create"},
                                    label=f"schedule {schedule_id} due {due:%H:%M:%S}",
                                    created_by=row.created_by)
            for when in missed:
                conn.execute(table.insert().values(
                    due_at=when, status="skipped", **base,
                    reason=_missed(when, unreachable, ran=False,
                                   running_since=running_since)))
            conn.execute(update(SCHEDULE).where(SCHEDULE.c.id == schedule_id)
                         .values(next_due_at=nxt))
            return job_id
    except IntegrityError:
        return None  # another worker handled this due time in the meantime


def enqueue_due(conn: Bind, now: Optional[datetime] = None, *,
                unreachable: Optional[Unreachable] = None,
                running_since: Optional[datetime] = None) -> list[int]:
    """Queue one job per schedule that has fallen due (called by every worker); returns
    the job ids this call created. `unreachable` says when the calling worker could not
    reach the database, `running_since` since when it runs: the reasons recorded on the
    due times it missed (an outage, a late tick, or no worker at all)."""
    now = now or utcnow()
    with reading(conn) as tx:
        due = list(tx.execute(select(SCHEDULE.c.id).where(
            SCHEDULE.c.paused.is_(False), SCHEDULE.c.next_due_at <= now)).scalars())
    made = [_enqueue_one(conn, int(sid), now, unreachable, running_since) for sid in due]
    return [j for j in made if j is not None]


def enqueue_checks(engine: Engine) -> list[int]:
    """Queue one gate-and-alert job per scheduled run that ended and was not checked."""
    with reading(engine) as conn:
        ended = list(conn.execute(
            run_state.with_state(select(SCHEDULE_RUN.c.id)
                                 .join(RUN, RUN.c.id == SCHEDULE_RUN.c.run_id))
            .where(SCHEDULE_RUN.c.verdict.is_(None),
                   run_state.STATUS.in_(RUN_ENDED))).scalars())
    made = []
    for sr in ended:
        with engine.begin() as conn:
            won = conn.execute(update(SCHEDULE_RUN).where(
                SCHEDULE_RUN.c.id == sr, SCHEDULE_RUN.c.verdict.is_(None))
                .values(verdict="checking")).rowcount
            if won == 1:
                made.append(create_job(conn, "schedule",
                                       params={"schedule_run": int(sr), "step": "check"},
                                       label=f"gate of scheduled row {sr}"))
    return made


def get_schedule_run(conn: Bind, row_id: int) -> Row:
    with reading(conn) as tx:
        row = tx.execute(select(SCHEDULE_RUN).where(SCHEDULE_RUN.c.id == row_id)).first()
    if row is None:
        raise ScheduleError(f"scheduled run row {row_id} not found (its schedule was deleted)")
    return row


def update_schedule_run(conn: Connection, row_id: int, **values: Any) -> None:
    """Write a due time's outcome in the caller's transaction (after `jobs.hold`)."""
    conn.execute(update(SCHEDULE_RUN).where(SCHEDULE_RUN.c.id == row_id).values(**values))


def scheduled_run_named(conn: Bind, name: str) -> Optional[int]:
    """The run called `name` (a scheduled run's name says its schedule and due time), so
    a job taken over after a crash finds the run its predecessor made."""
    with reading(conn) as tx:
        return tx.execute(select(RUN.c.id).where(RUN.c.name == name).order_by(RUN.c.id)
                            .limit(1)).scalar()
