"""Review-queue actions: create a queue, take the next item, decide, skip, undo,
adjudicate (reviewers and admins), and read a queue's figures (any role). Each change and
its audit event are one transaction; the reviewer recorded is the acting identity."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from evalcore.actions._core import _check, _record
from evalcore.auth.identity import Actor
from evalcore.report.review_stats import queue_stats
from evalcore.store import review_queues as rq
from evalcore.store.db import transaction
from evalcore.store.review_cards import card

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine


def create_review_queue(actor: Actor, engine: Engine, **kwargs: Any) -> int:
    """`store.review_queues.create_queue`, for reviewers and admins."""
    _check(engine, actor, "review", "create_review_queue")
    kwargs["created_by"] = actor.attribution(kwargs.get("created_by"))
    with transaction(engine) as conn:
        queue_id = rq.create_queue(conn, **kwargs)
        _record(conn, actor, "review_queue.create", "review_queue", queue_id,
                attack_set=kwargs.get("attack_set_id"), run=kwargs.get("run_id"),
                items=kwargs.get("items"), sample=kwargs.get("sample"),
                double_share=kwargs.get("double_share"))
    return queue_id


def review_next(actor: Actor, engine: Engine, queue_id: int) -> dict[str, Any] | None:
    """The card of the item the actor holds, else of the next one now reserved for them;
    None when nothing is left for them."""
    _check(engine, actor, "review", "review_next", queue_id)
    with transaction(engine) as conn:
        item_id, new = rq.claim(conn, queue_id, actor.attribution())
        if item_id is None:
            return None
        if new:
            _record(conn, actor, "review_queue.reserve", "review_queue_item", item_id,
                    queue=queue_id)
        return card(conn, queue_id, item_id)


def review_submit(actor: Actor, engine: Engine, queue_id: int, item_id: int, verdict: str,
                  **edit: Any) -> None:
    """`store.review_queues.submit` as the actor (`question`, `options`: an edit)."""
    _check(engine, actor, "review", "review_submit", item_id)
    with transaction(engine) as conn:
        rq.submit(conn, queue_id, item_id, actor.attribution(), verdict, **edit)
        _record(conn, actor, f"review_queue.{verdict}", "review_queue_item", item_id,
                queue=queue_id, edited=bool(edit.get("question") or edit.get("options")) or None)


def review_skip(actor: Actor, engine: Engine, queue_id: int, item_id: int) -> None:
    """Pass an item on to the others."""
    _check(engine, actor, "review", "review_skip", item_id)
    with transaction(engine) as conn:
        rq.skip(conn, queue_id, item_id, actor.attribution())
        _record(conn, actor, "review_queue.skip", "review_queue_item", item_id, queue=queue_id)


def review_undo(actor: Actor, engine: Engine, queue_id: int) -> int | None:
    """Take back the actor's latest decision in the queue; the item it was on."""
    _check(engine, actor, "review", "review_undo", queue_id)
    with transaction(engine) as conn:
        item_id = rq.undo(conn, queue_id, actor.attribution())
        if item_id is not None:
            _record(conn, actor, "review_queue.undo", "review_queue_item", item_id,
                    queue=queue_id)
    return item_id


def review_adjudicate(actor: Actor, engine: Engine, queue_id: int, item_id: int,
                      verdict: str, note: str = "") -> None:
    """The final verdict on an item, for reviewers and admins."""
    _check(engine, actor, "review", "review_adjudicate", item_id)
    with transaction(engine) as conn:
        rq.adjudicate(conn, queue_id, item_id, actor.attribution(), verdict, note)
        _record(conn, actor, "review_queue.adjudicate", "review_queue_item", item_id,
                queue=queue_id, verdict=verdict)


def review_stats(actor: Actor, engine: Engine, queue_id: int) -> dict[str, Any]:
    """`report.review_stats.queue_stats`, for every role ("mine" is the actor's)."""
    _check(engine, actor, "read", "review_stats", queue_id)
    return queue_stats(engine, queue_id, reviewer=actor.attribution())
