"""Judge reliability: re-judge a sample of a run's answers J times to tell judge noise
from model noise. Each re-judgement is stored as a call (stage `rejudge1`..`rejudgeJ`),
so the figures can be recomputed and an interrupted re-judging resumes without resending.
"""
from __future__ import annotations

import asyncio
import random
from typing import Any, Optional

from sqlalchemy.engine import Engine

from evalcore.providers.base import ModelConfig

REJUDGE_PREFIX = "rejudge"


async def rejudge_sample(engine: Engine, run_id: int, judge: ModelConfig, *, sample: int = 20,
                         passes: int = 3, seed: int = 0,
                         temperature: Optional[float] = None) -> dict[str, Any]:
    """Judge `sample` answered calls of `run_id` `passes` times each; returns the
    reliability figures (flip rate, Cohen's and Fleiss' kappa) as a JSON-ready dict.

    `temperature` overrides the judge's (the rubric asks at 0.0; raise it to probe how
    much the verdicts move)."""
    from evalcore.providers.client import get_client
    from evalcore.scorers.judge import judge_request, parse_verdict
    from evalcore.store import queries
    from evalcore.store.tables import utcnow

    questions = await asyncio.to_thread(queries.run_questions, engine, run_id)
    answered = [c for c in await asyncio.to_thread(queries.run_calls, engine, run_id, "answer")
                if c.error is None and c.answer is not None]
    answered.sort(key=lambda c: (c.item_id, c.round))
    picked = random.Random(seed).sample(answered, min(sample, len(answered)))
    done = await asyncio.to_thread(queries.done_units, engine, run_id)
    client = get_client(judge)
    limit = asyncio.Semaphore(judge.concurrency)

    async def one(call: Any, j: int) -> Optional[dict[str, Any]]:
        stage = f"{REJUDGE_PREFIX}{j}"
        if (call.item_id, call.round, stage) in done:
            return None
        request = judge_request(questions[call.item_id], call.answer,
                                structured=judge.supports_json_schema)
        if temperature is not None:
            request = request.model_copy(update={"temperature": temperature})
        async with limit:
            reply = await client.chat(request)
        verdict = parse_verdict(reply.text) if reply.ok else None
        return {"run_id": run_id, "item_id": call.item_id, "round": call.round, "stage": stage,
                "model": judge.name, "prompt": request.messages[-1]["content"],
                "answer": reply.text if reply.ok else None,
                "score": verdict.value if verdict else None,
                "correct": verdict.correct if verdict else None,
                "reason": verdict.reason if verdict else f"judge error: {reply.error}",
                "latency_ms": reply.latency_ms, "prompt_tokens": reply.prompt_tokens,
                "completion_tokens": reply.completion_tokens, "error": reply.error,
                "attempts": reply.attempts, "created_at": utcnow()}

    rows = await asyncio.gather(*(one(c, j) for c in picked for j in range(1, passes + 1)))
    await asyncio.to_thread(queries.record_calls, engine, [r for r in rows if r])
    return await asyncio.to_thread(judge_reliability_of_run, engine, run_id)


def judge_reliability_of_run(engine: Engine, run_id: int) -> Optional[dict[str, Any]]:
    """The reliability figures from a run's stored re-judgements (None if there are none)."""
    from evalcore.metrics.agreement import judge_reliability
    from evalcore.store import queries

    by_answer: dict[tuple[int, int], dict[int, Optional[bool]]] = {}
    for call in queries.iter_calls(engine, run_id, stage_prefix=REJUDGE_PREFIX):
        if call.stage.startswith(REJUDGE_PREFIX):
            verdict = None if call.error or (call.reason or "").startswith("judge error") \
                else call.correct
            by_answer.setdefault((call.item_id, call.round), {})[
                int(call.stage.removeprefix(REJUDGE_PREFIX))] = verdict
    if not by_answer:
        return None
    passes = max(max(v) for v in by_answer.values())
    rows = [[v.get(j) for j in range(1, passes + 1)] for v in by_answer.values()]
    return judge_reliability(rows).to_json_dict()
