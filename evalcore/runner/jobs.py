"""Execute one claimed job: the kind registry, the lease keeper, the end of a job.

Every kind of long work is a coroutine `handler(ctx) -> result dict` registered in
`HANDLERS`. `execute_job` runs it next to a lease keeper that renews the claim every
`lease_s / 3` and stops the handler at once if the job was taken over (its writes are
fenced anyway) or cancelled. A handler that raises marks its job failed with the error
text; it never takes the worker down. A handler stopped by a lost database gives its job
back (retried once the database is back), and the job's last write waits the outage out
rather than fail. A worker stopping (SIGTERM) releases the job so another worker
continues it at once.
"""
from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, Optional

from sqlalchemy.engine import Engine

from evalcore.providers.retry import ATTEMPT_GATE
from evalcore.runner.model_share import ModelShare
from evalcore.runner.disk_full import DiskFull, disk_full_error, is_disk_full
from evalcore.runner.outage import database, is_outage, patiently, short
from evalcore.store import jobs as store
from evalcore.store.jobs import Fence, LeaseLost, renew

log = logging.getLogger("evalcore.worker")

STOP_GRACE_S = 10.0
"""How long a stopping worker lets calls in flight finish before it cancels them (a call
cancelled is paid for and sent again by the next worker)."""
LEASE_POLL_S = 0.1
"""Seconds between looks at the lease while a retry waits for it."""
Handler = Callable[["JobContext"], Awaitable[dict[str, Any]]]
HANDLERS: dict[str, Handler] = {}


def handler(kind: str) -> Callable[[Handler], Handler]:
    """Register the coroutine that does jobs of `kind`."""
    def register(fn: Handler) -> Handler:
        HANDLERS[kind] = fn
        return fn
    return register


@dataclass
class JobContext:
    """What a handler gets: the engine, its job row, its fence and a cancel flag."""

    engine: Engine
    job: Any  # the job row (store.jobs)
    fence: Fence
    worker: str
    cancelled: asyncio.Event = field(default_factory=asyncio.Event)
    draining: asyncio.Event = field(default_factory=asyncio.Event)
    """Set when the worker stops: start no new call, finish those in flight, return
    {"status": "drained"} (the job is then released, not finished)."""
    on_progress: Optional[Callable[[Any], None]] = None
    renewed_at: float = field(default_factory=time.monotonic)
    """When (monotonic) the last renewal that went through was sent: the lease lasts at
    least one lease from then."""
    paused: bool = False
    """Whether model calls wait for the lease (logged once per pause)."""

    def lease_held(self) -> bool:
        """Whether the lease surely has not run out. A worker cut off from the database
        cannot renew, and its job goes to another worker one lease later: from then on
        each model call it started would be paid twice (its writes are fenced, its calls
        cannot be), so no attempt starts (`providers.retry.ATTEMPT_GATE`) until a renewal
        goes through again."""
        return time.monotonic() - self.renewed_at < self.fence.lease_s

    def share(self, model: Any, stage: str, want: Optional[int] = None) -> Any:
        """This job's share of `model`'s concurrency (a `ModelShare`; `async with`): it
        wants `want` slots (default all) of the model's configured `concurrency`, which
        every job on the model shares."""
        return ModelShare(self.engine, model.name, f"job{self.fence.job_id}:{stage}",
                          capacity=model.concurrency, want=want or model.concurrency)

    async def until_lease_held(self) -> None:
        """Wait while the lease may have run out: the keeper renews it (the work goes on)
        or finds it taken over (the work is cancelled, this wait with it)."""
        if self.lease_held():
            return
        if not self.paused:
            self.paused = True
            log.warning("job %s: lease not renewed for %.0f s: no model call until it is "
                        "(or the job is found taken over)", self.fence.job_id,
                        time.monotonic() - self.renewed_at)
        while not self.lease_held():
            await asyncio.sleep(LEASE_POLL_S)
        self.paused = False

    async def renew(self, **progress: int) -> bool:
        """Renew the lease (storing `progress`); returns whether a cancel was asked."""
        sent = time.monotonic()
        cancel = await asyncio.to_thread(renew, self.engine, self.fence, **progress)
        self.renewed_at = sent
        return cancel

    async def progress(self, done: int, total: int) -> bool:
        """Store progress (also renews the lease); returns whether a cancel was asked."""
        cancel = await self.renew(done=done, total=total)
        if cancel:
            self.cancelled.set()
        return cancel


async def execute_job(engine: Engine, job: Any, worker: str, *,
                      stop: Optional[asyncio.Event] = None,
                      on_progress: Optional[Callable[[Any], None]] = None) -> str:
    """Run a job this worker has claimed to its end; returns the job's final status
    ('released' if `stop` was set first, 'lost' if another worker took it over)."""
    fence = Fence(int(job.id), int(job.token))
    ctx = JobContext(engine, job, fence, worker, on_progress=on_progress)
    fn = HANDLERS.get(job.kind)
    log.info("job %s (%s%s) started on %s, attempt %s", job.id, job.kind,
             f" run {job.run_id}" if job.run_id else "", worker, job.attempts)
    if fn is None:
        await patiently(engine, f"job {job.id} stored its end", store.finish_job, engine,
                        fence, "failed",
                        error=f"no handler for job kind {job.kind!r} in this worker")
        return "failed"
    gate = ATTEMPT_GATE.set(ctx.until_lease_held)  # in the handler's tasks (a copy)
    try:
        work = asyncio.create_task(fn(ctx))
    finally:
        ATTEMPT_GATE.reset(gate)
    keeper = asyncio.create_task(_keep_lease(ctx, work))
    stopper = asyncio.create_task(stop.wait()) if stop is not None else None
    try:
        waiting = {work} | ({stopper} if stopper else set())
        await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
        if not work.done():  # stop came first: let the calls in flight land, then release
            ctx.draining.set()
            await asyncio.wait({work}, timeout=STOP_GRACE_S)
            if not work.done():
                work.cancel()
            await asyncio.gather(work, return_exceptions=True)
        full = _disk_full(engine, job, work)
        if full is not None:  # given back: no other worker can store more than this one
            status = await _release(engine, fence)
        elif _drained(work):
            if not work.cancelled() and work.exception() is not None:  # the database went
                database(engine).failed(f"job {job.id} ({job.kind}) ran", work.exception())
            status = await _release(engine, fence)
        else:
            status = await _finish(engine, ctx, work)
    finally:
        keeper.cancel()
        if stopper is not None:
            stopper.cancel()
        await asyncio.gather(keeper, *([stopper] if stopper else []), return_exceptions=True)
    log.info("job %s (%s) ended: %s", job.id, job.kind, status)
    if full is not None:
        raise full
    return status


def _disk_full(engine: Engine, job: Any, work: asyncio.Task) -> Optional[DiskFull]:
    """The one-line error if the handler stopped because the database's disk is full."""
    if work.cancelled() or work.exception() is None or not is_disk_full(work.exception()):
        return None
    exc = work.exception()
    return exc if isinstance(exc, DiskFull) else disk_full_error(engine, job.run_id)


def _drained(work: asyncio.Task) -> bool:
    """The handler stopped early for a stopping worker (or was cancelled for it), or
    because the database went away under it (the job is given back, not failed)."""
    if work.cancelled():
        return True
    exc = work.exception()
    if exc is not None:
        return is_outage(exc)
    return (work.result() or {}).get("status") == "drained"


async def _finish(engine: Engine, ctx: JobContext, work: asyncio.Task) -> str:
    exc = work.exception()
    if isinstance(exc, LeaseLost):
        return "lost"
    if exc is not None:
        error = f"{type(exc).__name__}: {exc}"
        log.error("job %s failed: %s", ctx.fence.job_id, error, exc_info=exc)
        status, result = "failed", None
    else:
        result = work.result() or {}
        status = result.pop("status", "cancelled" if ctx.cancelled.is_set() else "done")
        error = result.pop("error", None)
    try:
        await patiently(engine, f"job {ctx.fence.job_id} stored its end", store.finish_job,
                        engine, ctx.fence, status, error=error, result=result)
    except LeaseLost:
        return "lost"
    return status


async def _release(engine: Engine, fence: Fence) -> str:
    try:
        await patiently(engine, f"job {fence.job_id} gave its job back", store.release_job,
                        engine, fence)
    except LeaseLost:
        return "lost"
    except Exception as exc:
        if not is_disk_full(exc):
            raise
        log.warning("job %s: no space to give it back (%s); another worker takes it over "
                    "when its lease runs out", fence.job_id, short(exc))
    return "released"


async def _keep_lease(ctx: JobContext, work: asyncio.Task) -> None:
    """Renew every lease/3; cancel the work when the job was taken over; keep trying
    (with the lease running out) while the database cannot be reached."""
    while True:
        await asyncio.sleep(ctx.fence.lease_s / 3)
        try:
            if await ctx.renew():
                ctx.cancelled.set()
            database(ctx.engine).ok()
        except LeaseLost as exc:
            log.warning("%s", exc)
            work.cancel()
            return
        except Exception as exc:  # noqa: BLE001 - the database may come back
            database(ctx.engine).failed(f"job {ctx.fence.job_id} renewed its lease", exc)
