"""One background asyncio loop per process, shared by every Streamlit session, with the
app's embedded worker on it.

Pages never execute work: they create jobs and read them from the database. The embedded
worker (`ensure_worker`) claims jobs on the same lease mechanism as `python -m evalcore
worker`, so a single-user `make run` needs nothing else, and a restarted app takes its
unfinished jobs over by itself once their leases run out. `EVALCORE_EMBEDDED_WORKER=0`
turns it off (a team server whose workers run apart). The same loop runs the short
coroutines pages need (test a model connection), so aiohttp sessions and the local model
server live as long as the process.
"""
from __future__ import annotations

import asyncio
import atexit
import logging
import threading
from typing import Any, Coroutine, Optional, TypeVar

from sqlalchemy.engine import Engine

from evalcore.config import embedded_worker, worker_jobs
from evalcore.providers.event_loop import new_event_loop
from evalcore.providers.client import close_clients
from evalcore.runner.worker import POLL_S, Worker, worker_id

T = TypeVar("T")
log = logging.getLogger(__name__)

EMBEDDED_JOBS = 2
"""Jobs the app's embedded worker executes at once (EVALCORE_WORKER_JOBS overrides)."""


class BackgroundRunner:
    """A daemon thread running an asyncio loop; thread-safe `call` and `ensure_worker`."""

    def __init__(self) -> None:
        self._loop = new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="evalcore-runner",
                                        daemon=True)
        self._thread.start()
        self._workers: dict[str, Any] = {}
        self._lock = threading.Lock()

    def call(self, coro: Coroutine[Any, Any, T], timeout: Optional[float] = None) -> T:
        """Run a coroutine on the loop and wait for its result (for short page actions)."""
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout)

    def ensure_worker(self, engine: Engine, *, jobs: Optional[int] = None,
                      poll_s: Optional[float] = None) -> Optional[Any]:
        """Start this process's embedded worker for `engine`'s database (once); None when
        EVALCORE_EMBEDDED_WORKER=0."""
        if not embedded_worker():  # a value that is not a switch is refused, not read as yes
            return None
        key = str(engine.url)
        with self._lock:
            worker = self._workers.get(key)
            if worker is not None:
                return worker

            count = jobs or worker_jobs(default=EMBEDDED_JOBS)

            async def make() -> Worker:
                return Worker(engine, jobs=count, name=worker_id("app"),
                              poll_s=poll_s or POLL_S)

            worker = self.call(make())
            worker.beat_now()  # the sidebar of the page that started it already shows it
            future = asyncio.run_coroutine_threadsafe(worker.run(), self._loop)
            future.add_done_callback(_log_end)
            self._workers[key] = worker
            return worker

    def stop_workers(self, timeout: float = 10.0) -> None:
        """Stop the embedded workers (their jobs are released for others) and forget them."""
        with self._lock:
            workers, self._workers = list(self._workers.values()), {}
        if not workers:
            return

        async def _stop() -> None:
            for worker in workers:
                worker.stop.set()
            for _ in range(int(timeout / 0.05)):
                if not any(w.active for w in workers):
                    return
                await asyncio.sleep(0.05)

        self.call(_stop(), timeout=timeout + 1)

    def shutdown(self) -> None:
        """Stop the workers (their jobs are released) and the loop (tests; the process
        exit does this for the app)."""
        async def _close() -> None:
            await close_clients()

        try:
            self.stop_workers()
            self.call(_close(), timeout=10)
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=5)


def _log_end(future: Any) -> None:
    if not future.cancelled() and future.exception() is not None:
        log.error("embedded worker stopped: %s", future.exception())


_runner: Optional[BackgroundRunner] = None
_runner_lock = threading.Lock()


def get_runner() -> BackgroundRunner:
    """The process-wide runner, created on first use."""
    global _runner
    with _runner_lock:
        if _runner is None:
            _runner = BackgroundRunner()
            atexit.register(_at_exit, _runner)
        return _runner


def _at_exit(runner: BackgroundRunner) -> None:
    """At interpreter exit, tell the embedded workers to stop polling (their jobs' leases
    run out and other workers take them over)."""
    for worker in list(runner._workers.values()):
        runner._loop.call_soon_threadsafe(worker.stop.set)
