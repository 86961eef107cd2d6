"""Group a stability run's open answers by meaning with a judge model asked "same meaning?".

A job (`create_meaning_job`, kind `meaning_judge`) run by any worker, like re-judging.
Each verdict is a call of stage `meaning:<hash of judge and the unordered answer pair>`
(`scorers.meaning.pair_stage`), so a pair is asked once per run and judge, the report
reads the verdicts back without a model call, and an interrupted job resumes where the
database says it stopped. Per question the text groups are merged biggest first against
the kept groups' representatives (`metrics.repeats.merge_groups`): n answers of one
meaning cost n - 1 calls, n different ones n(n-1)/2. The job asks in waves: each wave
one pair per question still undecided, all questions at once.
"""
from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, Optional

from sqlalchemy.engine import Engine

from evalcore.metrics.repeats import comparisons_bounds, group_answers, next_comparison
from evalcore.providers.base import ModelConfig
from evalcore.providers.registry import get_model
from evalcore.runner.passes import run_pass
from evalcore.runner.run import model_snapshot
from evalcore.scorers.meaning import meaning_request, MEANING_STAGE, pair_stage, parse_same
from evalcore.store import jobs, queries, run_items
from evalcore.store.db import Bind
from evalcore.store.types import utcnow
from evalcore.values import validated

OPEN_SKIP = frozenset({"choice", "math", "sentiment", "multi_tf"})
"""Task types grouped by their extracted answer, never by meaning (as in the report)."""


def open_groups(engine: Engine, run_id: int) -> dict[int, tuple[str, list[Any]]]:
    """{item_id: (question text, text groups)} of the run's open questions with more than
    one distinct answer: the groups the report merges, in the same order."""
    run = queries.get_run(engine, run_id)
    questions = run_items.run_questions(engine, run_id)
    replies: dict[int, list[Optional[str]]] = {}
    for call in queries.iter_calls(engine, run_id, stage="answer"):
        q = questions.get(call.item_id)
        if q is None or q.task_type in OPEN_SKIP or not 1 <= call.round <= run.rounds:
            continue
        replies.setdefault(call.item_id, [None] * run.rounds)[call.round - 1] = call.answer
    out = {}
    for item_id, texts in replies.items():
        groups = group_answers(texts, [None] * len(texts))
        if sum(g.answer is not None for g in groups) > 1:
            out[item_id] = (questions[item_id].question, groups)
    return out


def stored_verdicts(engine: Engine, run_id: int, judge: str) -> dict[str, Optional[bool]]:
    """{stage: same?} of `judge`'s stored "same meaning?" calls (None: the call failed or
    the reply said neither yes nor no; such a pair is kept apart and not asked again)."""
    return {c.stage: (None if c.error is not None else c.correct)
            for c in queries.iter_calls(engine, run_id, stage_prefix=MEANING_STAGE)
            if c.model == judge}


def known_from(judge: str, verdicts: dict[str, Optional[bool]]) -> Any:
    """The `known(kept, group)` lookup `merge_groups` replays (KeyError: not asked yet)."""
    def known(kept: Any, g: Any) -> Optional[bool]:
        return bool(verdicts[pair_stage(judge, kept.answer, g.answer)])
    return known


def pending_pairs(groups: dict[int, tuple[str, list[Any]]], judge: str,
                  verdicts: dict[str, Optional[bool]]) -> list[tuple[int, str, Any, Any]]:
    """One (item_id, question, representative, group) per question still undecided."""
    known = known_from(judge, verdicts)
    out = []
    for item_id, (question, gs) in groups.items():
        pair = next_comparison(gs, known)
        if pair is not None:
            out.append((item_id, question, *pair))
    return out


def meaning_cost(engine: Engine, run_id: int, judge: str) -> dict[str, int]:
    """What grouping by `judge` costs before it starts: open questions with several
    answers, their distinct answers, the fewest and most judge calls (all one meaning /
    all different) and the verdicts already stored, which are not asked again."""
    groups = open_groups(engine, run_id)
    verdicts = stored_verdicts(engine, run_id, judge)
    low = high = distinct = 0
    for _, gs in groups.values():
        n = sum(g.answer is not None for g in gs)
        lo, hi = comparisons_bounds(n)
        low, high, distinct = low + lo, high + hi, distinct + n
    cached = len(verdicts)
    if not pending_pairs(groups, judge, verdicts):
        low = high = cached  # every merge is decided: nothing left to ask
    return {"questions": len(groups), "distinct_answers": distinct, "cached": cached,
            "min_calls": max(low - cached, 0), "max_calls": max(high - cached, 0)}


def cost_line(cost: dict[str, int], judge: str) -> str:
    """The cost of grouping by a judge in one sentence (page and CLI, before it starts)."""
    if not cost["questions"]:
        return "no open question has two different answers: grouping by meaning asks nothing"
    calls = (f"{cost['min_calls']}" if cost["min_calls"] == cost["max_calls"]
             else f"{cost['min_calls']} to {cost['max_calls']}")
    return (f"asking {judge} \"same meaning?\" costs {calls} judge calls "
            f"({cost['distinct_answers']} distinct answers in {cost['questions']} questions; "
            f"fewest when answers agree; {cost['cached']} verdicts already stored)")


def create_meaning_job(engine: Engine, run_id: int, judge: str, *, models_path: Path,
                       created_by: str = "", into: Optional["Bind"] = None) -> int:
    """Queue the "same meaning?" pass of `run_id` by the judge model `judge`; its id.
    The job is written `into` the caller's transaction when given (the action's)."""
    cost = meaning_cost(engine, run_id, judge)
    config = get_model(models_path, judge)
    return jobs.create_job(into if into is not None else engine, "meaning_judge", run_id=run_id,
                           params={"judge": model_snapshot(config)},
                           label=f"group run {run_id}'s answers by meaning with {judge}",
                           created_by=created_by, total=cost["max_calls"])


async def meaning_job(ctx: Any) -> dict[str, Any]:
    """The job handler: ask the pairs the merge needs, wave after wave, storing each."""
    judge = validated(ModelConfig, ctx.job.params["judge"])
    run_id = int(ctx.job.run_id)
    groups = await asyncio.to_thread(open_groups, ctx.engine, run_id)
    # the most verdicts the merge can need: the progress total, fixed for every wave
    most = sum(comparisons_bounds(sum(g.answer is not None for g in gs))[1]
               for _, gs in groups.values())
    asked = failed = 0

    async def one(client: Any, entry: tuple[int, str, Any, Any]) -> dict[str, Any]:
        item_id, question, kept, g = entry
        request = meaning_request(question, kept.example, g.example)
        reply = await client.chat(request)
        same = parse_same(reply.text) if reply.ok else None
        return {"run_id": run_id, "item_id": item_id, "round": 1,
                "stage": pair_stage(judge.name, kept.answer, g.answer), "model": judge.name,
                "prompt": request.messages[-1]["content"],
                "answer": reply.text if reply.ok else None, "correct": same,
                "score": None if same is None else float(same),
                "reason": ("same meaning" if same else "different meaning") if same is not None
                else ("judge error: no yes/no in the reply" if reply.ok
                      else f"judge error: {reply.error}"),
                "latency_ms": reply.latency_ms, "prompt_tokens": reply.prompt_tokens,
                "completion_tokens": reply.completion_tokens, "error": reply.error,
                "attempts": reply.attempts, "created_at": utcnow(),
                "extracted_error": same is None}

    while not (ctx.cancelled.is_set() or ctx.draining.is_set()):
        verdicts = await asyncio.to_thread(stored_verdicts, ctx.engine, run_id, judge.name)
        todo = pending_pairs(groups, judge.name, verdicts)
        if not todo:
            break
        counts = await run_pass(ctx, judge, todo, one, already=len(verdicts), total=most)
        asked += counts["stored"]
        failed += counts["errors"]
    if ctx.draining.is_set():
        return {"status": "drained"}
    if not ctx.cancelled.is_set():  # the merge needed fewer than the most: done of done
        stored = len(await asyncio.to_thread(stored_verdicts, ctx.engine, run_id, judge.name))
        await asyncio.to_thread(jobs.renew, ctx.engine, ctx.fence, done=stored, total=stored)
    return {"asked": asked, "failed": failed, "questions": len(groups)}
