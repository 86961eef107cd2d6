"""A judge model rates every answer of a fairness run (tone, professionalism, stereotype).

Each rating is stored as a call of stage `analysis` beside the answer it rates (the
judge's reply in `answer`, the parsed figures as JSON in `extracted`), in batches as they
finish: an interrupted pass resumes without asking again, and the report reads them back
next to the word-list analysis (`report.fairness`).
"""
from __future__ import annotations

import asyncio
import json
from typing import Any, Optional

from sqlalchemy.engine import Engine

from evalcore.providers.base import ModelConfig

ANALYSIS_STAGE = "analysis"
FLUSH_EVERY = 20
"""Ratings stored per transaction (a killed process loses at most this many)."""


async def judge_analysis(engine: Engine, run_id: int, judge: ModelConfig, *,
                         limit: Optional[int] = None) -> dict[str, int]:
    """Ask `judge` to rate each answered call of `run_id` not rated yet (the first `limit`
    in item and round order, if given). Returns {"rated", "errors", "already"}: new
    readable ratings, new calls without one (provider error or unreadable reply), and
    answers rated before."""
    from evalcore.store import queries

    answers = [c for c in await asyncio.to_thread(queries.run_calls, engine, run_id, "answer")
               if c.error is None and c.answer is not None]
    answers.sort(key=lambda c: (c.item_id, c.round))
    answers = answers[:limit] if limit is not None else answers
    done = await asyncio.to_thread(queries.done_units, engine, run_id)
    todo = [c for c in answers if (c.item_id, c.round, ANALYSIS_STAGE) not in done]
    counts = {"rated": 0, "errors": 0, "already": len(answers) - len(todo)}
    if not todo:
        return counts
    from evalcore.providers.client import get_client

    client = get_client(judge)
    slots = asyncio.Semaphore(judge.concurrency)
    pending: list[dict[str, Any]] = []

    async def rate(call: Any) -> dict[str, Any]:
        async with slots:
            return await _rate(client, judge, call)

    for finished in asyncio.as_completed([rate(c) for c in todo]):
        row = await finished
        counts["errors" if row["extracted"] is None else "rated"] += 1
        pending.append(row)
        if len(pending) >= FLUSH_EVERY:
            rows, pending = pending, []
            await asyncio.to_thread(queries.record_calls, engine, rows)
    if pending:
        await asyncio.to_thread(queries.record_calls, engine, pending)
    return counts


async def _rate(client: Any, judge: ModelConfig, call: Any) -> dict[str, Any]:
    """One judge call for one answer, as a call row (a failure is stored, never raised)."""
    from evalcore.scorers.analysis_judge import analysis_request, parse_analysis
    from evalcore.store.tables import utcnow

    request = analysis_request(call.prompt, call.answer, structured=judge.supports_json_schema)
    reply = await client.chat(request)
    extracted: Optional[str] = None
    reason = f"judge error: {reply.error}"
    sentiment: Optional[float] = None
    if reply.ok:
        try:
            rating = parse_analysis(reply.text)
        except ValueError as exc:
            reason = f"judge error: {exc}"
        else:
            extracted = json.dumps(rating.model_dump(exclude={"reason"}))
            reason, sentiment = rating.reason or "(judge gave no reason)", rating.sentiment
    return {"run_id": call.run_id, "item_id": call.item_id, "round": call.round,
            "stage": ANALYSIS_STAGE, "model": judge.name,
            "prompt": request.messages[-1]["content"],
            "answer": reply.text if reply.ok else None, "score": sentiment, "correct": None,
            "reason": reason, "extracted": extracted, "latency_ms": reply.latency_ms,
            "prompt_tokens": reply.prompt_tokens, "completion_tokens": reply.completion_tokens,
            "error": reply.error, "attempts": reply.attempts, "created_at": utcnow()}


def judged_figures(engine: Engine, run_id: int) -> dict[tuple[int, int], dict[str, Any]]:
    """(item_id, round) -> the judge's figures for that answer, or {"error": reason} for a
    rating that failed; empty when the run was never judged."""
    from evalcore.store import queries

    out: dict[tuple[int, int], dict[str, Any]] = {}
    for call in queries.iter_calls(engine, run_id, stage=ANALYSIS_STAGE):
        if call.extracted is None:
            out[(call.item_id, call.round)] = {"error": call.reason, "model": call.model}
        else:
            out[(call.item_id, call.round)] = {**json.loads(call.extracted),
                                               "reason": call.reason, "model": call.model}
    return out
