"""A worker: claim jobs from the database and execute them, up to `jobs` at once.

Any number of workers, on any number of hosts, share one database: the claim is atomic
(`store.jobs.claim_job`), each job is held under a renewed lease, and a job whose worker
died is taken over by the next worker that polls after its lease ran out. The app runs
one embedded worker on its background loop (`runner.background`); `python -m evalcore
worker` runs more. A lost database is waited out with backoff, never fatal; SIGTERM
releases the jobs in hand so another worker continues them at once.
"""
from __future__ import annotations

import asyncio
import importlib
import logging
import os
import socket
import sys
import threading
import traceback
import uuid
from datetime import datetime, timezone
from typing import Any, Iterable, Optional

from sqlalchemy.engine import Engine

from evalcore.providers import local
from evalcore.runner.model_share import live_shares
from evalcore.runner.jobs import execute_job
from evalcore.runner.outage import database, short
from evalcore.store.jobs import claim_job
from evalcore.store.schedules import enqueue_checks, enqueue_due
from evalcore.store.types import utcnow
from evalcore.store.workers import beat, forget, HEARTBEAT_S

log = logging.getLogger("evalcore.worker")

POLL_S = 0.5
"""Seconds between looks at the queue while idle."""
SCHEDULE_POLL_S = 1.0
"""Seconds between looks for schedules that fell due (and scheduled runs to gate)."""
HANDLER_MODULES = ("evalcore.runner.job_types", "evalcore.monitor.jobs")
"""Modules whose import registers job handlers (the monitor's sits above the runner, so
it is named here rather than imported)."""
MAX_BACKOFF_S = 5.0
"""Longest wait between looks at a lost database: one connection attempt per 5 s costs
nothing, and the worker is back at work within 5 s of the database."""


def worker_id(prefix: str = "worker") -> str:
    """host:pid:short-uuid, unique across hosts and restarts."""
    return f"{prefix}@{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"


class Worker:
    """Claims and executes jobs on the running loop until `stop` is set."""

    def __init__(self, engine: Engine, *, jobs: int = 2, kinds: Optional[Iterable[str]] = None,
                 name: Optional[str] = None, poll_s: float = POLL_S) -> None:
        for module in HANDLER_MODULES:  # registers the job handlers
            importlib.import_module(module)
        self.engine = engine
        self.jobs = max(1, jobs)
        self.kinds = list(kinds) if kinds else None
        self.name = name or worker_id()
        self.poll_s = poll_s
        self.stop = asyncio.Event()
        self.active: dict[int, asyncio.Task] = {}
        self.finished = 0
        self.started_at = utcnow()

    async def run(self, *, once: bool = False) -> int:
        """Work until stopped (or, with `once`, until the queue is empty); returns the
        number of jobs that ended here. Jobs in hand when stopped are released. A
        heartbeat row says meanwhile that it is alive and what its local model does."""
        log.info("worker %s started (jobs=%d, kinds=%s)", self.name, self.jobs,
                 ",".join(self.kinds) if self.kinds else "all")
        heart = asyncio.create_task(self._heartbeat())
        clock = (asyncio.create_task(self._schedules())
                 if self.kinds is None or "schedule" in self.kinds else None)
        try:
            return await self._work(once)
        finally:
            for task in (heart, clock):
                if task is not None:
                    task.cancel()
            await asyncio.gather(heart, *([clock] if clock else []), return_exceptions=True)
            await asyncio.to_thread(self._forget)

    async def _work(self, once: bool) -> int:
        backoff = self.poll_s
        while not self.stop.is_set():
            claimed = None
            if len(self.active) < self.jobs:
                try:
                    claimed = await asyncio.to_thread(claim_job, self.engine, self.name,
                                                      kinds=self.kinds)
                    backoff = self.poll_s
                    database(self.engine).ok()
                except Exception as exc:  # noqa: BLE001 - a lost database is waited out
                    backoff = min(backoff * 2, MAX_BACKOFF_S)
                    database(self.engine).failed(f"worker {self.name} looked for jobs", exc)
                    await self._sleep(backoff)
                    continue
            if claimed is not None:
                task = asyncio.create_task(execute_job(self.engine, claimed, self.name,
                                                       stop=self.stop))
                self.active[int(claimed.id)] = task
                task.add_done_callback(lambda t, jid=int(claimed.id): self._done(jid, t))
                continue  # look for more at once while there is room
            if once and not self.active:
                break
            await self._sleep(self.poll_s)
        if self.active:
            await asyncio.gather(*self.active.values(), return_exceptions=True)
        log.info("worker %s stopped after %d jobs", self.name, self.finished)
        return self.finished

    def heartbeat_state(self) -> dict[str, Any]:
        """What this worker's heartbeat says: jobs in hand and the local model's state in
        this process (where its runs call it)."""
        return {"jobs": len(self.active), "capacity": self.jobs,
                "kinds": self.kinds or [], "local": local.local_state()}

    def beat_now(self) -> None:
        """Write one heartbeat (blocking): the app calls it once when it starts its worker,
        so the first page already shows it; a lost database is logged, never raised."""
        try:
            beat(self.engine, self.name, self.heartbeat_state(), started_at=self.started_at)
        except Exception as exc:  # noqa: BLE001 - a heartbeat never stops the work
            database(self.engine).failed(f"worker {self.name} wrote its heartbeat", exc)
        else:
            database(self.engine).ok()

    async def _heartbeat(self) -> None:
        """Write the heartbeat every HEARTBEAT_S until cancelled (the jobs' leases are
        renewed apart, by each job)."""
        while True:
            await asyncio.to_thread(self.beat_now)
            await asyncio.sleep(HEARTBEAT_S)

    def schedule_tick(self) -> None:
        """Queue the jobs of schedules that fell due and of scheduled runs that ended
        (blocking; `store.schedules` makes each happen once whatever the workers)."""
        try:
            enqueue_due(self.engine, unreachable=self.unreachable,
                        running_since=self.started_at)
            enqueue_checks(self.engine)
        except Exception as exc:  # noqa: BLE001 - tried again at the next tick
            database(self.engine).failed(f"worker {self.name} looked for due schedules", exc)
        else:
            database(self.engine).ok()

    def unreachable(self, moment: datetime) -> Optional[tuple[datetime, datetime]]:
        """When this worker could not reach the database around `moment` (UTC), if it
        could not: a due time missed then says so, not that no worker ran."""
        window = database(self.engine).unreachable(moment.timestamp())
        if window is None:
            return None
        start, end = window
        return (datetime.fromtimestamp(start, timezone.utc),
                datetime.fromtimestamp(end, timezone.utc))

    async def _schedules(self) -> None:
        while True:
            await asyncio.to_thread(self.schedule_tick)
            await asyncio.sleep(SCHEDULE_POLL_S)

    def dump_state(self) -> None:
        """Log what this worker is doing now (on SIGUSR1): its jobs, each model share's
        gate and last sync, where every task and thread waits. A hang is then diagnosable
        from the log alone."""
        log.warning("worker %s state: jobs %s", self.name, sorted(self.active))
        for line in live_shares():
            log.warning("  share %s", line)
        for place, count in sorted(_task_places().items()):
            log.warning("  %d task(s) at %s", count, place)
        idle = 0
        for name, place in _thread_places():
            if place.startswith("thread.py:") and "_worker" in place.split(" < ")[0]:
                idle += 1  # an executor thread waiting for work
                continue
            log.warning("  thread %s at %s", name, place)
        log.warning("  %d idle executor thread(s)", idle)

    def _forget(self) -> None:
        try:
            forget(self.engine, self.name)
        except Exception as exc:  # noqa: BLE001 - its row simply ages out
            log.warning("worker %s: heartbeat row not removed (%s)", self.name, short(exc))

    def _done(self, job_id: int, task: asyncio.Task) -> None:
        self.active.pop(job_id, None)
        self.finished += 1
        if not task.cancelled() and task.exception() is not None:  # retrieved: one line
            database(self.engine).failed(f"job {job_id} ended", task.exception())

    async def _sleep(self, seconds: float) -> None:
        try:
            await asyncio.wait_for(self.stop.wait(), seconds)
        except asyncio.TimeoutError:
            pass



def _where(frames: list[Any]) -> str:
    """`file:line fn < file:line fn` of the innermost frames of a stack (innermost first)."""
    parts = [f"{os.path.basename(f.f_code.co_filename)}:{f.f_lineno} {f.f_code.co_name}"
             for f in frames[-4:]]
    return " < ".join(reversed(parts))


def _awaits(coro: Any) -> list[Any]:
    """The frames of `coro` and of what it awaits, outermost first (a task's own
    `get_stack` stops at its coroutine's frame)."""
    frames = []
    while coro is not None and len(frames) < 50:
        frame = getattr(coro, "cr_frame", None) or getattr(coro, "gi_frame", None)
        if frame is None:
            break
        frames.append(frame)
        coro = getattr(coro, "cr_await", None) or getattr(coro, "gi_yieldfrom", None)
    return frames


def _task_places() -> dict[str, int]:
    """{where a task waits: how many tasks wait there} on the running loop."""
    places: dict[str, int] = {}
    for task in asyncio.all_tasks():
        place = f"{task.get_coro().__qualname__}: {_where(_awaits(task.get_coro()))}"
        places[place] = places.get(place, 0) + 1
    return places


def _thread_places() -> list[tuple[str, str]]:
    """(thread name, where it is) of every thread but the loop's (executor threads blocked
    in the database show here)."""
    names = {t.ident: t.name for t in threading.enumerate()}
    out = []
    for ident, frame in sys._current_frames().items():
        if ident == threading.get_ident():
            continue
        stack = [f for f, _ in traceback.walk_stack(frame)][::-1]
        out.append((names.get(ident, str(ident)), _where(stack)))
    return sorted(out)
