"""One background asyncio loop per process, shared by every Streamlit session.

Pages submit run ids and return at once; the loop thread executes them with
`execute_run`, which keeps the truth (status, progress, calls) in the database. The
same loop runs the short coroutines pages need (test a model connection), so aiohttp
sessions and the local model server live as long as the process.
"""
from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import threading
from typing import Any, Coroutine, Optional, TypeVar

from sqlalchemy.engine import Engine

T = TypeVar("T")
log = logging.getLogger(__name__)


class BackgroundRunner:
    """A daemon thread running an asyncio loop; thread-safe `submit`, `call` and `cancel`."""

    def __init__(self) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="evalcore-runner",
                                        daemon=True)
        self._thread.start()
        self._runs: dict[int, concurrent.futures.Future] = {}
        self._lock = threading.Lock()

    def call(self, coro: Coroutine[Any, Any, T], timeout: Optional[float] = None) -> T:
        """Run a coroutine on the loop and wait for its result (for short page actions)."""
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout)

    def submit(self, engine: Engine, run_id: int) -> concurrent.futures.Future:
        """Start executing `run_id` in the background (once: a second submit returns the same future)."""
        from evalcore.runner.run import execute_run

        with self._lock:
            future = self._runs.get(run_id)
            if future is not None and not future.done():
                return future
            future = asyncio.run_coroutine_threadsafe(execute_run(engine, run_id), self._loop)
            future.add_done_callback(lambda f, rid=run_id: self._log_failure(rid, f))
            self._runs[run_id] = future
            return future

    def is_active(self, run_id: int) -> bool:
        """Whether this process is executing `run_id` right now."""
        future = self._runs.get(run_id)
        return future is not None and not future.done()

    def cancel(self, engine: Engine, run_id: int) -> None:
        """Ask a run to stop: the flag is stored, so a run in another process stops too."""
        from evalcore.store import queries

        queries.request_cancel(engine, run_id)

    def shutdown(self) -> None:
        """Stop the loop (tests; the process exit does this for the app)."""
        async def _close() -> None:
            from evalcore.providers.client import close_clients

            await close_clients()

        try:
            self.call(_close(), timeout=5)
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=5)

    @staticmethod
    def _log_failure(run_id: int, future: concurrent.futures.Future) -> None:
        if not future.cancelled() and future.exception() is not None:
            log.error("run %s failed: %s", run_id, future.exception())


_runner: Optional[BackgroundRunner] = None
_runner_lock = threading.Lock()


def get_runner() -> BackgroundRunner:
    """The process-wide runner, created on first use."""
    global _runner
    with _runner_lock:
        if _runner is None:
            _runner = BackgroundRunner()
        return _runner
