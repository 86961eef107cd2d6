"""A job's progress from a synchronous callback: the long attack and import work reports
`on_progress(done, total)` from worker threads; the job stores it about once a second.
Below the job handlers (`runner.job_types`) and the work they call (`runner.attack`)."""
from __future__ import annotations

import asyncio
from typing import Any

from evalcore.runner.jobs import JobContext


class ProgressPump:
    """Turns a synchronous `on_progress(done, total)` callback (called from any thread)
    into progress stored on the job about once a second, and the last figure when the
    work ends normally (a job shorter than a second would otherwise end at "0 / 10")."""

    def __init__(self, ctx: JobContext, every_s: float = 1.0) -> None:
        self.ctx = ctx
        self.every_s = every_s
        self.latest: tuple[int, int] | None = None
        self.sent: tuple[int, int] | None = None
        self._task: asyncio.Task | None = None

    def __call__(self, done: int, total: int, *_: Any) -> None:
        self.latest = (int(done), int(total))
        if self.ctx.on_progress is not None:
            self.ctx.on_progress(*self.latest)

    async def _send(self) -> None:
        latest = self.latest
        if latest is not None and latest != self.sent:
            await self.ctx.progress(*latest)
            self.sent = latest  # only once stored: a send cancelled at the end is redone

    async def _pump(self) -> None:
        while True:
            await asyncio.sleep(self.every_s)
            await self._send()

    async def __aenter__(self) -> "ProgressPump":
        self._task = asyncio.create_task(self._pump())
        return self

    async def __aexit__(self, exc_type: Any, *exc: Any) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
        if exc_type is None:
            await self._send()
