"""The kinds of long work a worker can do, each registered with `runner.jobs.handler`.

Creating a job is the only way pages and the CLI start long work; these handlers are the
only code that does it. A new kind of work is a handler here plus a `create_*_job`.
"""
from __future__ import annotations

import asyncio
from typing import Any

from evalcore.runner.jobs import JobContext, handler


@handler("run")
async def run_job(ctx: JobContext) -> dict[str, Any]:
    """Execute (or resume, or take over) an evaluation run of any kind."""
    from evalcore.runner.run import execute_run

    status = await execute_run(ctx.engine, int(ctx.job.run_id), ctx=ctx,
                               on_progress=ctx.on_progress)
    result: dict[str, Any] = {"status": status}
    if status == "failed":
        from evalcore.store import queries

        result["error"] = (await asyncio.to_thread(queries.get_run, ctx.engine,
                                                   int(ctx.job.run_id))).error
    return result


@handler("rejudge")
async def rejudge_job(ctx: JobContext) -> dict[str, Any]:
    """Re-judge a sample of a run's answers (judge reliability)."""
    from evalcore.runner.rejudge import rejudge_job as work

    return await work(ctx)


@handler("meaning_judge")
async def meaning_judge_job(ctx: JobContext) -> dict[str, Any]:
    """A judge model says which open answers of a stability run mean the same."""
    from evalcore.runner.meaning_judge import meaning_job as work

    return await work(ctx)


@handler("variants")
async def variants_job(ctx: JobContext) -> dict[str, Any]:
    """A stability run's items under other option orders and prompt templates."""
    from evalcore.runner.variants import variants_job as work

    return await work(ctx)


@handler("judge_analysis")
async def judge_analysis_job(ctx: JobContext) -> dict[str, Any]:
    """A judge model rates every answer of a fairness run."""
    from evalcore.runner.judge_analysis import judge_analysis_job as work

    return dict(await work(ctx))


@handler("attack")
async def attack_job(ctx: JobContext) -> dict[str, Any]:
    """Generate an attack set (character, word or sentence level)."""
    from evalcore.runner.attack import attack_job as work

    return await work(ctx)


@handler("attack_import")
async def attack_import_job(ctx: JobContext) -> dict[str, Any]:
    """Import an attacked file as an attack set (checks and e5 similarity of every row)."""
    from evalcore.runner.attack import import_job as work

    return await work(ctx)


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
