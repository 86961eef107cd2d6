"""A judge model rates every answer of a fairness run (tone, professionalism, stereotype).

Each rating is stored as a call of stage `analysis` beside the answer it rates (the
judge's reply in `answer`, the parsed figures as JSON in `extracted`), in batches as they
finish (a job: `runner.passes`): an interrupted pass resumes without asking again, and the report reads them back
next to the word-list analysis (`report.fairness`).
"""
from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any, Optional

from sqlalchemy.engine import Engine

from evalcore.providers.base import ModelConfig
from evalcore.providers.registry import get_model
from evalcore.runner.passes import run_pass
from evalcore.runner.run import model_snapshot
from evalcore.scorers.analysis_judge import analysis_request, parse_analysis
from evalcore.store import jobs, queries, run_items
from evalcore.store.types import utcnow
from evalcore.values import validated

ANALYSIS_STAGE = "analysis"


def create_judge_analysis_job(engine: Engine, run_id: int, judge: str, *, models_path: Path,
                              limit: Optional[int] = None, created_by: str = "") -> int:
    """Queue a pass in which `judge` rates every answer of `run_id` not rated yet (the
    first `limit` in item and round order, if given); returns the job id."""
    queries.get_run(engine, run_id)
    params = {"judge": model_snapshot(get_model(models_path, judge)), "limit": limit}
    return jobs.create_job(engine, "judge_analysis", run_id=run_id, params=params,
                           label=f"judge analysis of run {run_id} by {judge}",
                           created_by=created_by)


def analysis_todo(engine: Engine, run_id: int, limit: Optional[int]) -> tuple[list[Any], int]:
    """(answer calls still to rate, how many of the chosen answers are rated already)."""
    answers = [c for c in queries.run_calls(engine, run_id, "answer")
               if c.error is None and c.answer is not None]
    answers.sort(key=lambda c: (c.item_id, c.round))
    answers = answers[:limit] if limit is not None else answers
    done = queries.done_units(engine, run_id)
    todo = [c for c in answers if (c.item_id, c.round, ANALYSIS_STAGE) not in done]
    return todo, len(answers) - len(todo)


async def judge_analysis_job(ctx: Any) -> dict[str, int]:
    """The job handler. Returns {"rated", "errors", "already"}: new readable ratings, new
    calls without one (provider error or unreadable reply), and answers rated before."""
    judge = validated(ModelConfig, ctx.job.params["judge"])

    run_id = int(ctx.job.run_id)
    todo, already = await asyncio.to_thread(analysis_todo, ctx.engine, run_id,
                                            ctx.job.params.get("limit"))
    prompts = await asyncio.to_thread(run_items.run_prompts, ctx.engine, run_id)

    async def one(client: Any, call: Any) -> dict[str, Any]:
        row = await _rate(client, judge, call, call.prompt or prompts.get(call.item_id, ""))
        row["extracted_error"] = row["error"] is None and row["extracted"] is None
        return row

    counts = await run_pass(ctx, judge, todo, one, already=already)
    return {"rated": counts["stored"] - counts["errors"], "errors": counts["errors"],
            "already": already}


async def _rate(client: Any, judge: ModelConfig, call: Any, prompt: str) -> dict[str, Any]:
    """One judge call for one answer, as a call row (a failure is stored, never raised)."""
    request = analysis_request(prompt, call.answer, structured=judge.supports_json_schema)
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
            extracted = json.dumps({"sentiment": rating.sentiment,
                                    "professionalism": rating.professionalism,
                                    "stereotype": rating.stereotype})
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
    out: dict[tuple[int, int], dict[str, Any]] = {}
    for call in queries.iter_calls(engine, run_id, stage=ANALYSIS_STAGE):
        if call.extracted is None:
            out[(call.item_id, call.round)] = {"error": call.reason, "model": call.model}
        else:
            out[(call.item_id, call.round)] = {**json.loads(call.extracted),
                                               "reason": call.reason, "model": call.model}
    return out
