"""The job types: the long work a worker can do, each registered with `runner.jobs.handler`.

Creating a job is the only way pages and the CLI start long work; these handlers are the
only code that does it. A new job type is a handler here plus a `create_*_job`. (Job
types are not evaluation kinds, `evalcore.kinds`: a run of any kind is one "run" job.)
"""
from __future__ import annotations

from typing import Any

from evalcore.runner.jobs import JobContext, handler
from evalcore.runner.run import execute_run


@handler("run")
async def run_job(ctx: JobContext) -> dict[str, Any]:
    """Execute (or resume, or take over) an evaluation run of any kind."""
    outcome = await execute_run(ctx.engine, int(ctx.job.run_id), ctx=ctx,
                                on_progress=ctx.on_progress)
    result: dict[str, Any] = {"status": outcome.status}
    if outcome.error is not None:  # stored on the job, the owner of the run's state
        result["error"] = outcome.error
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
