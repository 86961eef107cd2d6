"""What a review card shows and what the review figures group by, read for queue items.

A card never carries another reviewer's verdict: the second review is blind.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import select

from evalcore.store.db import Bind, reading
from evalcore.store.review_queues import ReviewQueueError, _queue
from evalcore.store.tables import AttackItem, AttackSet, Call, Item, ReviewQueueItem

ATTACK_ITEM = AttackItem.__table__
ATTACK_SET = AttackSet.__table__
CALL = Call.__table__
ITEM = Item.__table__
QI = ReviewQueueItem.__table__


def card(bind: Bind, queue_id: int, item_id: int) -> dict[str, Any]:
    """The card of one queue item: the queue's guidelines, the item's place in the queue,
    and the attacked question (original, attacked, options, flags) or the judged answer
    (question, reference, answer, the judge's verdict and reason)."""
    with reading(bind) as conn:
        queue = _queue(conn, queue_id)
        item = conn.execute(select(QI).where(QI.c.id == item_id, QI.c.queue_id == queue_id)
                            ).first()
        if item is None:
            raise ReviewQueueError(f"item {item_id} is not in review queue {queue_id}")
        out: dict[str, Any] = {"item_id": int(item.id), "queue_id": queue_id,
                               "position": int(item.position), "total": int(queue.item_count),
                               "kind": queue.kind, "guidelines": queue.guidelines}
        if queue.kind == "attack":
            out.update(_attack_card(conn, int(item.attack_item_id)))
        else:
            out.update(_answer_card(conn, int(item.call_id)))
    return out


def _choices(conn: Any, item_id: Any) -> list[str]:
    if item_id is None:
        return []
    return list(conn.execute(select(ITEM.c.choices).where(ITEM.c.id == item_id)
                             ).scalar_one_or_none() or [])


def _attack_card(conn: Any, attack_item_id: int) -> dict[str, Any]:
    row = conn.execute(select(ATTACK_ITEM).where(ATTACK_ITEM.c.id == attack_item_id)).first()
    if row is None:
        return {"gone": True, "original": "", "attacked": ""}
    return {"attack_item_id": attack_item_id, "original": row.original,
            "attacked": row.attacked, "flags": list(row.flags or []),
            "pairs": list(row.pairs or []), "similarity": row.similarity,
            "options": _choices(conn, row.source_item_id),
            "attacked_options": _choices(conn, row.attacked_item_id)}


def _answer_card(conn: Any, call_id: int) -> dict[str, Any]:
    call = conn.execute(select(CALL).where(CALL.c.id == call_id)).first()
    if call is None:
        return {"gone": True, "question": "", "answer": ""}
    item = conn.execute(select(ITEM.c.question, ITEM.c.reference, ITEM.c.choices)
                        .where(ITEM.c.id == call.item_id)).first()
    answer = call.answer
    if call.stage != "answer":
        answer = conn.execute(select(CALL.c.answer).where(
            CALL.c.run_id == call.run_id, CALL.c.item_id == call.item_id,
            CALL.c.round == call.round, CALL.c.stage == "answer")).scalar_one_or_none()
    return {"call_id": call_id, "question": item.question if item else "",
            "reference": item.reference if item else None,
            "options": list(item.choices or []) if item else [], "answer": answer,
            "judge_verdict": "correct" if call.correct else "incorrect",
            "judge": call.model, "reason": call.reason}


def attack_groups(bind: Bind, attack_item_ids: Sequence[int]) -> dict[int, dict[str, Any]]:
    """{attack item id: {"level", "language", "details"}}: what precision is grouped by,
    from the attacked item's record of its attack."""
    out: dict[int, dict[str, Any]] = {}
    with reading(bind) as conn:
        for start in range(0, len(attack_item_ids), 500):  # bound-parameter limits
            rows = conn.execute(
                select(ATTACK_ITEM.c.id, ATTACK_SET.c.level, ITEM.c.language, ITEM.c.meta)
                .join(ATTACK_SET, ATTACK_SET.c.id == ATTACK_ITEM.c.attack_set_id)
                .outerjoin(ITEM, ITEM.c.id == ATTACK_ITEM.c.attacked_item_id)
                .where(ATTACK_ITEM.c.id.in_(list(attack_item_ids[start:start + 500]))))
            for row in rows:
                details = dict((row.meta or {}).get("attack_details") or {})
                out[int(row.id)] = {"level": row.level,
                                    "language": details.get("language") or row.language or "?",
                                    "details": details}
    return out


def judge_verdicts(bind: Bind, call_ids: Sequence[int]) -> dict[int, bool]:
    """{call id: the judge's verdict (answer correct?)}."""
    out: dict[int, bool] = {}
    with reading(bind) as conn:
        for start in range(0, len(call_ids), 500):
            out.update({int(i): bool(c) for i, c in conn.execute(
                select(CALL.c.id, CALL.c.correct).where(
                    CALL.c.id.in_(list(call_ids[start:start + 500]))))})
    return out
