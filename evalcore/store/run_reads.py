"""Reads over a run's calls for reports, estimates, budgets and the CLI: aggregates
counted in SQL (one row per model or item, not per call) so a 100,000-call run is never
loaded to draw a figure."""
from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import datetime
from typing import Any, Optional

from sqlalchemy import and_, case, func, select

from evalcore.store.db import Bind, reading
from evalcore.store.tables import Call, Item, RunItem

CALL = Call.__table__
ITEM = Item.__table__
RUN_ITEM = RunItem.__table__


def outcome_rows(conn: Bind, run_id: int, rounds: int, *, judged: bool) -> dict[str, Any]:
    """A run's outcomes in one read transaction (one snapshot):

    - `usage`: [(model, calls, prompt tokens, completion tokens)] over every call;
    - `answered`: (answer calls with an error, latency sum, calls with a latency) of the
      answer calls in rounds 1..`rounds`;
    - `verdicts`: rules runs (`judged` False): [(item_id, right, errors, stored)] counted
      per item (right = correct and no error); judged runs: [(item_id, round, stage,
      correct, error, failed)] of every call in rounds 1..`rounds`, `failed` when its
      reason says the judge gave no verdict ("judge error: ...", `scorers.judge`).
    """
    in_run = and_(CALL.c.run_id == run_id, CALL.c.round >= 1, CALL.c.round <= rounds)
    answers = and_(in_run, CALL.c.stage == "answer")
    usage = (select(CALL.c.model, func.count(), func.coalesce(func.sum(CALL.c.prompt_tokens), 0),
                    func.coalesce(func.sum(CALL.c.completion_tokens), 0))
             .where(CALL.c.run_id == run_id).group_by(CALL.c.model))
    answered = select(func.count(CALL.c.error), func.coalesce(func.sum(CALL.c.latency_ms), 0.0),
                      func.count(CALL.c.latency_ms)).where(answers)
    if judged:
        verdicts = select(CALL.c.item_id, CALL.c.round, CALL.c.stage, CALL.c.correct,
                          CALL.c.error, CALL.c.reason.like("judge error%")).where(in_run)
    else:
        ok = case((and_(CALL.c.correct.is_(True), CALL.c.error.is_(None)), 1), else_=0)
        verdicts = (select(CALL.c.item_id, func.sum(ok), func.count(CALL.c.error), func.count())
                    .where(answers).group_by(CALL.c.item_id))
    with reading(conn) as tx:
        return {"usage": [tuple(r) for r in tx.execute(usage)],
                "answered": tuple(tx.execute(answered).one()),
                "verdicts": [tuple(r) for r in tx.execute(verdicts)]}


def tokens_by_model(conn: Bind, run_id: int) -> dict[str, tuple[int, int]]:
    """{model: (prompt tokens, completion tokens)} of a run's stored calls."""
    query = (select(CALL.c.model, func.coalesce(func.sum(CALL.c.prompt_tokens), 0),
                    func.coalesce(func.sum(CALL.c.completion_tokens), 0))
             .where(CALL.c.run_id == run_id).group_by(CALL.c.model))
    with reading(conn) as tx:
        return {model: (int(p), int(c)) for model, p, c in tx.execute(query)}


def answer_error_counts(conn: Bind, run_id: int, refusal_prefix: str) -> tuple[int, int, int]:
    """(answer calls, answer calls with an error, of those starting `refusal_prefix`)."""
    query = select(func.count(), func.count(CALL.c.error),
                   func.count().filter(CALL.c.error.like(f"{refusal_prefix}%"))).where(
        CALL.c.run_id == run_id, CALL.c.stage == "answer")
    with reading(conn) as tx:
        calls, errors, refusals = tx.execute(query).one()
    return int(calls), int(errors), int(refusals)


def call_ends(conn: Bind, run_id: int, stages: Sequence[str], batch: int = 5000
              ) -> Iterator[tuple[datetime, Optional[float]]]:
    """(stored at, latency ms) of a run's calls of `stages`: when each call ended, and
    how long it was under way; streamed (a million calls' rows never sit in a list)."""
    query = (select(CALL.c.created_at, CALL.c.latency_ms)
             .where(CALL.c.run_id == run_id, CALL.c.stage.in_(stages))
             .execution_options(yield_per=batch))
    with reading(conn) as tx:
        yield from tx.execute(query)  # type: ignore[misc]


def run_prompt_chars(conn: Bind, run_id: int) -> Optional[int]:
    """Mean length (characters) of a run's rendered prompts; None if it stored none."""
    query = select(func.avg(func.length(RUN_ITEM.c.prompt))).where(RUN_ITEM.c.run_id == run_id)
    with reading(conn) as tx:
        mean = tx.execute(query).scalar()
    return None if mean is None else round(float(mean))


def recent_latencies(conn: Bind, model: str, sample: int) -> list[float]:
    """Latency ms of the model's `sample` most recent answered calls (no errors, no waits)."""
    return [ms for ms, _, _ in recent_call_sizes(conn, model, sample)]


def recent_call_sizes(conn: Bind, model: str, sample: int) -> list[tuple[float, int, int]]:
    """(latency ms, prompt characters, answer characters) of the model's `sample` most
    recent answered calls: an estimate says how long the calls it learnt from were."""
    # the rendered prompt is kept once per run item (a call keeps its own only when it
    # differs, e.g. a judge's)
    item_prompt = (select(func.max(func.length(RUN_ITEM.c.prompt)))
                   .where(RUN_ITEM.c.run_id == CALL.c.run_id,
                          RUN_ITEM.c.item_id == CALL.c.item_id)
                   .scalar_subquery())
    prompt = case((func.length(CALL.c.prompt) > 0, func.length(CALL.c.prompt)),
                  else_=func.coalesce(item_prompt, 0))
    query = (select(CALL.c.latency_ms, prompt, func.coalesce(func.length(CALL.c.answer), 0))
             .where(CALL.c.model == model, CALL.c.error.is_(None),
                    CALL.c.latency_ms.is_not(None))
             .order_by(CALL.c.id.desc()).limit(sample))
    with reading(conn) as tx:
        return [(float(ms), int(p or 0), int(a or 0)) for ms, p, a in tx.execute(query)]


def item_calls(conn: Bind, run_ids: Sequence[int], item_id: int
               ) -> tuple[Optional[tuple[Any, ...]], list[tuple[Any, ...]]]:
    """(the item's (question, reference, idx), None if it is gone; its calls in `run_ids`
    as (run_id, round, stage, answer, correct, error, reason) in run, round, stage order)."""
    with reading(conn) as tx:
        item = tx.execute(select(ITEM.c.question, ITEM.c.reference, ITEM.c.idx)
                            .where(ITEM.c.id == item_id)).first()
        if item is None:
            return None, []
        calls = tx.execute(select(CALL.c.run_id, CALL.c.round, CALL.c.stage, CALL.c.answer,
                                    CALL.c.correct, CALL.c.error, CALL.c.reason)
                             .where(CALL.c.run_id.in_(list(run_ids)), CALL.c.item_id == item_id)
                             .order_by(CALL.c.run_id, CALL.c.round, CALL.c.stage)).all()
    return tuple(item), [tuple(c) for c in calls]
