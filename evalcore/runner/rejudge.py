"""Judge reliability: re-judge a sample of a run's answers J times to tell judge noise
from model noise. Each re-judgement is stored as a call (stage `rejudge1`..`rejudgeJ`),
so the figures can be recomputed and an interrupted re-judging resumes without resending.
A pass is a job (`create_rejudge_job`), executed by any worker (`runner.passes`).
"""
from __future__ import annotations

import asyncio
import random
from pathlib import Path
from typing import Any, Optional

from sqlalchemy.engine import Engine

from evalcore.providers.base import ModelConfig

REJUDGE_PREFIX = "rejudge"


def create_rejudge_job(engine: Engine, run_id: int, judge: str, *, models_path: Path,
                       sample: int = 20, passes: int = 3, seed: int = 0,
                       temperature: Optional[float] = None, created_by: str = "") -> int:
    """Queue a re-judge pass of `run_id` by the judge model `judge`; returns the job id.

    The judge's settings are snapshotted (env var names only) so any worker can run it.
    `temperature` overrides the judge's (the rubric asks at 0.0; raise it to probe how
    much the verdicts move)."""
    from evalcore.errors import RunError
    from evalcore.providers.registry import get_model
    from evalcore.runner.run import model_snapshot
    from evalcore.store import jobs, queries

    queries.get_run(engine, run_id)
    if sample < 1 or passes < 1:
        raise RunError(f"re-judging needs at least 1 answer and 1 pass (got sample={sample}, "
                       f"passes={passes})")
    config = get_model(models_path, judge)
    params = {"judge": model_snapshot(config), "sample": sample, "passes": passes,
              "seed": seed, "temperature": temperature}
    return jobs.create_job(engine, "rejudge", run_id=run_id, params=params,
                           label=f"re-judge run {run_id} with {judge}", created_by=created_by,
                           total=sample * passes)


def rejudge_todo(engine: Engine, run_id: int, *, sample: int, passes: int,
                 seed: int) -> tuple[list[tuple[Any, int]], int]:
    """([(answer call, pass number)] still to judge, how many are stored already): the
    same seeded sample every time, so a resumed pass completes the same answers."""
    from evalcore.store import queries

    answered = [c for c in queries.run_calls(engine, run_id, "answer")
                if c.error is None and c.answer is not None]
    answered.sort(key=lambda c: (c.item_id, c.round))
    picked = random.Random(seed).sample(answered, min(sample, len(answered)))
    done = queries.done_units(engine, run_id)
    wanted = [(c, j) for c in picked for j in range(1, passes + 1)]
    todo = [(c, j) for c, j in wanted if (c.item_id, c.round, f"{REJUDGE_PREFIX}{j}") not in done]
    return todo, len(wanted) - len(todo)


async def rejudge_job(ctx: Any) -> dict[str, Any]:
    """The job handler: judge the sample's answers not judged yet, store them as they come."""
    from evalcore.runner.passes import run_pass
    from evalcore.scorers.judge import judge_request, parse_verdict
    from evalcore.store import queries
    from evalcore.store.tables import utcnow

    params = ctx.job.params
    run_id = int(ctx.job.run_id)
    judge = ModelConfig.model_validate(params["judge"])
    questions = await asyncio.to_thread(queries.run_questions, ctx.engine, run_id)
    todo, already = await asyncio.to_thread(rejudge_todo, ctx.engine, run_id,
                                            sample=params["sample"], passes=params["passes"],
                                            seed=params.get("seed", 0))

    async def one(client: Any, entry: tuple[Any, int]) -> dict[str, Any]:
        call, j = entry
        request = judge_request(questions[call.item_id], call.answer,
                                structured=judge.supports_json_schema)
        if params.get("temperature") is not None:
            request = request.model_copy(update={"temperature": params["temperature"]})
        reply = await client.chat(request)
        verdict = parse_verdict(reply.text) if reply.ok else None
        return {"run_id": run_id, "item_id": call.item_id, "round": call.round,
                "stage": f"{REJUDGE_PREFIX}{j}", "model": judge.name,
                "prompt": request.messages[-1]["content"],
                "answer": reply.text if reply.ok else None,
                "score": verdict.value if verdict else None,
                "correct": verdict.correct if verdict else None,
                "reason": verdict.reason if verdict else f"judge error: {reply.error}",
                "latency_ms": reply.latency_ms, "prompt_tokens": reply.prompt_tokens,
                "completion_tokens": reply.completion_tokens, "error": reply.error,
                "attempts": reply.attempts, "created_at": utcnow()}

    counts = await run_pass(ctx, judge, todo, one, already=already)
    reliability = await asyncio.to_thread(judge_reliability_of_run, ctx.engine, run_id)
    return {"judged": counts["stored"], "already": already, "reliability": reliability}


def judge_reliability_of_run(engine: Engine, run_id: int) -> Optional[dict[str, Any]]:
    """The reliability figures from a run's stored re-judgements (None if there are none)."""
    from evalcore.metrics.agreement import judge_reliability
    from evalcore.store import queries

    by_answer: dict[tuple[int, int], dict[int, Optional[bool]]] = {}
    for call in queries.iter_calls(engine, run_id, stage_prefix=REJUDGE_PREFIX):
        suffix = call.stage.removeprefix(REJUDGE_PREFIX)
        if call.stage.startswith(REJUDGE_PREFIX) and suffix.isdigit():
            verdict = None if call.error or (call.reason or "").startswith("judge error") \
                else call.correct
            by_answer.setdefault((call.item_id, call.round), {})[int(suffix)] = verdict
    if not by_answer:
        return None
    passes = max(max(v) for v in by_answer.values())
    rows = [[v.get(j) for j in range(1, passes + 1)] for v in by_answer.values()]
    return judge_reliability(rows).to_json_dict()
