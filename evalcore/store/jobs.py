"""The job queue: create, claim, renew, finish, release, requeue and cancel long work.

One mechanism on both databases, a few statements on the `job` table: a claim picks the
oldest claimable job (queued, or running with an expired lease) and takes it in one
transaction, `SELECT ... FOR UPDATE SKIP LOCKED` on PostgreSQL (two workers never wait for
or take the same row), the write lock of `BEGIN IMMEDIATE` on SQLite. Every claim
increments the job's fencing token; every later write of the worker (`hold`, called in
the same transaction as the write it guards) checks that token, so a worker whose lease
was taken over can never write again. Lease times come from the database's clock on
PostgreSQL (workers on several hosts agree) and from this host's on SQLite (one host).
A run-kind job is the only owner of its run's state (queued, running, cancel asked, how
it ended): `store.run_state` derives the run's status from it; nothing here writes `run`.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import timedelta, timezone
from typing import Any, Iterable, Optional

from sqlalchemy import and_, func, or_, select, update
from sqlalchemy.engine import Connection, Row

from evalcore.config import lease_seconds as from_env
from evalcore.errors import RunError
from evalcore.store.db import Bind, reading, transaction
from evalcore.store.tables import Job
from evalcore.store.types import utcnow

JOB = Job.__table__

log = logging.getLogger(__name__)

LEASE_S = 15.0
"""Seconds a claim lasts without renewal (EVALCORE_LEASE_S overrides); workers renew
every lease/3, so a job whose worker died is taken over after at most this long."""


def lease_seconds() -> float:
    """The lease length in force: EVALCORE_LEASE_S (refused below `config.LEASE_FLOOR_S`),
    else LEASE_S."""
    return from_env(default=LEASE_S)


JOB_FINISHED = ("done", "failed", "cancelled")
KINDS = ("run", "rejudge", "judge_analysis", "attack", "attack_import", "meaning_judge",
         "variants", "schedule")
"""The kinds of long work; `runner.jobs.HANDLERS` maps each to the code that does it."""


class LeaseLost(RunError):
    """The job was taken over (or finished) by someone else: stop without writing."""


@dataclass(frozen=True)
class Fence:
    """What a worker holds of a job: its id, the token of its claim and the lease length."""

    job_id: int
    token: int
    lease_s: float = field(default_factory=lease_seconds)


def now_expr(conn: Connection) -> Any:
    """'Now' for lease arithmetic: the database's clock on PostgreSQL, this host's otherwise."""
    return func.now() if conn.dialect.name == "postgresql" else utcnow()


def _until(conn: Connection, seconds: float) -> Any:
    return now_expr(conn) + timedelta(seconds=seconds)


# ------------------------------------------------------------------ create / read


def create_job(conn: Bind, kind: str, *, run_id: Optional[int] = None,
               attack_set_id: Optional[int] = None, params: Optional[dict[str, Any]] = None,
               label: str = "", created_by: str = "", total: int = 0) -> int:
    """Queue a job and return its id (in the caller's transaction when `conn` is the
    Connection of a `store.db.transaction`)."""
    if kind not in KINDS:
        raise RunError(f"unknown job kind {kind!r}; one of {', '.join(KINDS)}")
    values = dict(kind=kind, run_id=run_id, attack_set_id=attack_set_id, params=params or {},
                  label=label, created_by=created_by, total=total, status="queued", owner="",
                  token=0, attempts=0, max_attempts=3, done=0, cancel_requested=False,
                  result={}, created_at=utcnow())
    stmt = JOB.insert().values(**values).returning(JOB.c.id)
    with transaction(conn) as tx:
        return int(tx.execute(stmt).scalar_one())


def get_job(conn: Bind, job_id: int) -> Row:
    """The job `job_id` (a read-only row); RunError if there is none."""
    with reading(conn) as tx:
        job = tx.execute(select(JOB).where(JOB.c.id == job_id)).first()
    if job is None:
        raise RunError(f"job {job_id} not found; list jobs with `python -m evalcore jobs list`")
    return job


def list_jobs(conn: Bind, *, kind: Optional[str] = None, status: Iterable[str] = (),
              run_id: Optional[int] = None, limit: int = 100) -> list[Row]:
    """The newest jobs first, optionally of one kind, statuses or run."""
    query = select(JOB).order_by(JOB.c.id.desc()).limit(limit)
    if kind:
        query = query.where(JOB.c.kind == kind)
    statuses = list(status)
    if statuses:
        query = query.where(JOB.c.status.in_(statuses))
    if run_id is not None:
        query = query.where(JOB.c.run_id == run_id)
    with reading(conn) as tx:
        return list(tx.execute(query).all())


def attack_set_jobs(conn: Bind) -> dict[int, Row]:
    """{attack set id: its newest job}: whether a set without items is still queued,
    being generated, or failed (an empty set is not "0 items - generated")."""
    query = (select(JOB).where(JOB.c.attack_set_id.is_not(None))
             .order_by(JOB.c.id.desc()))
    newest: dict[int, Row] = {}
    with reading(conn) as tx:
        for job in tx.execute(query):
            newest.setdefault(int(job.attack_set_id), job)
    return newest


def run_job(conn: Bind, run_id: int) -> Optional[Row]:
    """The newest job of kind 'run' executing `run_id` (None for runs made before jobs)."""
    jobs = list_jobs(conn, kind="run", run_id=run_id, limit=1)
    return jobs[0] if jobs else None


def lease_alive(job: Any) -> bool:
    """Whether a running job's lease still lies ahead (its worker is alive)."""
    if job.status != "running" or job.lease_expires_at is None:
        return False
    expires = job.lease_expires_at
    if expires.tzinfo is None:
        expires = expires.replace(tzinfo=timezone.utc)
    return expires > utcnow()


def busy_workers(conn: Bind) -> dict[str, int]:
    """Workers alive by the database's evidence, each with the jobs it holds: a worker
    renews (heartbeats) the lease of every job it executes, so a lease that lies ahead
    means a live worker, busy. An idle worker leaves no trace; this cannot see it."""
    with reading(conn) as tx:
        rows = tx.execute(
            select(JOB.c.owner, func.count(JOB.c.id))
            .where(JOB.c.status == "running", JOB.c.lease_expires_at > now_expr(tx))
            .group_by(JOB.c.owner)).all()
    return {str(owner): int(count) for owner, count in rows}


# ------------------------------------------------------------------ claim and lease


def _claimable(conn: Connection, kinds: Optional[Iterable[str]]) -> Any:
    now = now_expr(conn)
    cond = and_(JOB.c.attempts < JOB.c.max_attempts,
                or_(JOB.c.status == "queued",
                    and_(JOB.c.status == "running", JOB.c.lease_expires_at < now)))
    if kinds:
        cond = and_(cond, JOB.c.kind.in_(list(kinds)))
    return cond


def claim_job(conn: Bind, owner: str, *, kinds: Optional[Iterable[str]] = None,
              job_id: Optional[int] = None, lease_s: Optional[float] = None) -> Optional[Row]:
    """Take the oldest claimable job (or `job_id` if claimable) for `owner`; None if none.

    A job whose lease expired is taken over as it is: its stored calls or items stay and
    are never done again. A job that was claimed `max_attempts` times without finishing
    (its worker died each time) is marked failed instead of being claimed again.
    """
    lease_s = lease_seconds() if lease_s is None else lease_s
    with transaction(conn) as tx:
        _fail_exhausted(tx)
        query = (select(JOB.c.id).where(_claimable(tx, kinds)).order_by(JOB.c.id).limit(1)
                 .with_for_update(skip_locked=True))
        if job_id is not None:
            query = query.where(JOB.c.id == job_id)
        picked = tx.execute(query).scalar_one_or_none()
        if picked is None:
            return None
        now = now_expr(tx)
        tx.execute(update(JOB).where(JOB.c.id == picked).values(
            status="running", owner=owner, token=JOB.c.token + 1, attempts=JOB.c.attempts + 1,
            lease_expires_at=_until(tx, lease_s), heartbeat_at=now,
            started_at=func.coalesce(JOB.c.started_at, now)))
    return get_job(conn, picked)


def _fail_exhausted(conn: Connection) -> None:
    """Jobs whose workers died `max_attempts` times stop being claimed (no crash loop)."""
    now = now_expr(conn)
    dead = (select(JOB.c.id).where(JOB.c.status == "running", JOB.c.lease_expires_at < now,
                                 JOB.c.attempts >= JOB.c.max_attempts)
            .with_for_update(skip_locked=True))
    ids = list(conn.execute(dead).scalars())
    if not ids:
        return
    error = ("abandoned: its worker stopped without finishing it on every attempt; "
             "requeue it (`python -m evalcore jobs requeue ID`) once the cause is fixed")
    conn.execute(update(JOB).where(JOB.c.id.in_(ids)).values(
        status="failed", error=error, finished_at=now, lease_expires_at=None))


def hold(conn: Connection, fence: Fence, *, done: Optional[int] = None,
         total: Optional[int] = None) -> bool:
    """Renew `fence`'s lease inside the caller's transaction, or raise LeaseLost.

    Call it first in every transaction that writes on a job's behalf: on PostgreSQL the
    update locks the job row, so a takeover either happened before (the token differs:
    LeaseLost, the caller's transaction rolls back) or waits until this one commits.
    Returns whether a cancel was asked for.
    """
    values: dict[str, Any] = {"lease_expires_at": _until(conn, fence.lease_s),
                              "heartbeat_at": now_expr(conn)}
    if done is not None:
        values["done"] = done
    if total is not None:
        values["total"] = total
    cancel = conn.execute(
        update(JOB).where(JOB.c.id == fence.job_id, JOB.c.token == fence.token,
                          JOB.c.status == "running").values(**values)
        .returning(JOB.c.cancel_requested)).scalar_one_or_none()
    if cancel is None:
        raise LeaseLost(f"job {fence.job_id} was taken over by another worker (token "
                        f"{fence.token} is stale); this worker stops without writing")
    return bool(cancel)


def renew(conn: Bind, fence: Fence, **progress: Optional[int]) -> bool:
    """`hold` in its own transaction (the worker's lease keeper); returns cancel asked."""
    with transaction(conn) as tx:
        return hold(tx, fence, **progress)


def finish_job(conn: Bind, fence: Fence, status: str, *, error: Optional[str] = None,
               result: Optional[dict[str, Any]] = None) -> None:
    """End a job the worker still holds (LeaseLost otherwise)."""
    with transaction(conn) as tx:
        hold(tx, fence)
        values: dict[str, Any] = {"status": status, "error": error, "finished_at": now_expr(tx),
                                  "lease_expires_at": None}
        if result is not None:
            values["result"] = result
        tx.execute(update(JOB).where(JOB.c.id == fence.job_id).values(**values))


def release_job(conn: Bind, fence: Fence) -> None:
    """Give a job back at once (a worker stopping): queued again, claimable now, and the
    claim does not count as an attempt."""
    with transaction(conn) as tx:
        hold(tx, fence)
        tx.execute(update(JOB).where(JOB.c.id == fence.job_id).values(
            status="queued", owner="", lease_expires_at=None,
            attempts=func.max(JOB.c.attempts - 1, 0) if tx.dialect.name == "sqlite"
            else func.greatest(JOB.c.attempts - 1, 0)))


def requeue_job(conn: Bind, job_id: int) -> None:
    """Queue a finished or stuck job again with fresh attempts (a user's 'resume')."""
    with transaction(conn) as tx:
        job = tx.execute(select(JOB.c.status, JOB.c.lease_expires_at).where(JOB.c.id == job_id)
                           ).one_or_none()
        if job is None:
            raise RunError(f"job {job_id} not found")
        tx.execute(update(JOB).where(JOB.c.id == job_id).values(
            status="queued", owner="", attempts=0, error=None, cancel_requested=False,
            finished_at=None, lease_expires_at=None))


def cancel_job(conn: Bind, job_id: int) -> bool:
    """Ask a job to stop; a job still queued is cancelled at once. False if finished."""
    with transaction(conn) as tx:
        status = tx.execute(select(JOB.c.status).where(JOB.c.id == job_id)).scalar_one_or_none()
        if status is None:
            raise RunError(f"job {job_id} not found")
        if status in JOB_FINISHED:
            return False
        if status == "queued":
            tx.execute(update(JOB).where(JOB.c.id == job_id, JOB.c.status == "queued").values(
                status="cancelled", cancel_requested=True, finished_at=now_expr(tx)))
        else:
            tx.execute(update(JOB).where(JOB.c.id == job_id).values(cancel_requested=True))
    return True


def expire_lease(conn: Bind, job_id: int) -> None:
    """End a running job's lease now, so the next claim takes it over (`--force`); the
    worker that held it finds its token stale at its next write and stops."""
    with transaction(conn) as tx:
        tx.execute(update(JOB).where(JOB.c.id == job_id, JOB.c.status == "running").values(
            lease_expires_at=now_expr(tx) - timedelta(seconds=1)))
