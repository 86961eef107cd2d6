"""The reads and writes of attack-item review (`evalcore.perturb.review`).

Each action is one transaction (its own, or the caller's: `store.db.transaction`) that
changes the item and appends its `ReviewEvent` together; `expected_status` makes the
update conditional (a reviewer who was shown a stale status changes nothing and the
caller says who did).
"""
from __future__ import annotations

from datetime import datetime
from typing import Any, Optional

from sqlalchemy import func, insert, select, update
from sqlalchemy.engine import Connection
from sqlmodel import select as orm_select

from evalcore.store.db import Bind, reading, session_scope, transaction
from evalcore.store.tables import AttackItem, Item, ReviewEvent


def get_item(conn: Bind, attack_item_id: int) -> Optional[AttackItem]:
    """One attack item, None if there is none."""
    with session_scope(conn, write=False) as session:
        return session.get(AttackItem, attack_item_id)


def get_source_item(conn: Bind, item_id: int) -> Optional[Item]:
    """The clean item an attack item was made from."""
    with session_scope(conn, write=False) as session:
        return session.get(Item, item_id)


def item_choices(conn: Bind, item_ids: list[int]) -> dict[int, list[str]]:
    """{item id: its options} of the given items (clean and attacked: the options' diff)."""
    choices: dict[int, list[str]] = {}
    with reading(conn) as tx:
        for start in range(0, len(item_ids), 500):  # stay under bound-parameter limits
            for item_id, options in tx.execute(select(Item.id, Item.choices).where(
                    Item.id.in_(item_ids[start:start + 500]))):  # type: ignore[union-attr]
                choices[int(item_id)] = list(options or [])
    return choices


def set_items(conn: Bind, attack_set_id: int, status: Optional[str] = None
              ) -> list[AttackItem]:
    """A set's attack items in source order, only those with `status` if given."""
    query = orm_select(AttackItem).where(AttackItem.attack_set_id == attack_set_id)
    if status is not None:
        query = query.where(AttackItem.status == status)
    with session_scope(conn, write=False) as session:
        return list(session.exec(query.order_by(AttackItem.source_item_id)).all())  # type: ignore[arg-type]


def _current(conn: Connection, attack_item_id: int) -> Any:
    """(attack_set_id, status, attacked) of an item, locked for this transaction where the
    database can (PostgreSQL; SQLite's BEGIN IMMEDIATE already holds the write lock)."""
    return conn.execute(
        select(AttackItem.attack_set_id, AttackItem.status, AttackItem.attacked)
        .where(AttackItem.id == attack_item_id).with_for_update()).first()


def _record(conn: Connection, events: list[dict[str, Any]]) -> None:
    """Append review events (one per changed item) in the caller's transaction."""
    if events:
        conn.execute(insert(ReviewEvent), events)


def _update_item(conn: Connection, attack_item_id: int, values: dict[str, Any],
                 expected_status: Optional[str], logged: Optional[str] = None) -> bool:
    """Apply one action to an item and log it; False if it is gone or not `expected_status`."""
    before = _current(conn, attack_item_id)
    if before is None or (expected_status is not None and before.status != expected_status):
        return False
    conn.execute(update(AttackItem).where(AttackItem.id == attack_item_id).values(**values))  # type: ignore[arg-type]
    _record(conn, [{"attack_set_id": before.attack_set_id, "attack_item_id": attack_item_id,
                    "status": values["status"], "previous_status": before.status,
                    "edited": "attacked" in values,
                    "attacked": logged or values.get("attacked", before.attacked),
                    "reviewer": values["reviewer"], "note": values.get("note") or "",
                    "at": values["reviewed_at"]}])
    return True


def review_item(conn: Bind, attack_item_id: int, values: dict[str, Any],
                expected_status: Optional[str], *,
                attacked_item_id: Optional[int] = None,
                choices: Optional[list[str]] = None, logged: Optional[str] = None) -> bool:
    """Apply `values` (status, reviewer, reviewed_at, ...) to one item and log the event
    (its text `logged` if given: an edit's question with its edited options);
    with `attacked_item_id` (an edit) also put the new text, and `choices` if given, in the
    derived dataset's item.
    False, and nothing written, if the item is gone or no longer `expected_status`."""
    with transaction(conn) as tx:
        changed = _update_item(tx, attack_item_id, values, expected_status, logged)
        if changed and attacked_item_id is not None:
            new = {"question": values["attacked"],
                   **({"choices": list(choices)} if choices is not None else {})}
            tx.execute(update(Item).where(Item.id == attacked_item_id)  # type: ignore[arg-type]
                         .values(**new))
    return changed


def approve_pending(conn: Bind, attack_set_id: int, ids: list[int], *, reviewer: str,
                    at: datetime, note: str) -> int:
    """Approve those of `ids` still pending, logging one event each; returns how many."""
    changed = 0
    with transaction(conn) as tx:
        for start in range(0, len(ids), 500):
            chunk = ids[start:start + 500]
            rows = tx.execute(
                update(AttackItem)
                .where(AttackItem.id.in_(chunk), AttackItem.status == "pending")  # type: ignore
                .values(status="approved", reviewer=reviewer, reviewed_at=at)
                .returning(AttackItem.id, AttackItem.attacked)).all()
            _record(tx, [{"attack_set_id": attack_set_id, "attack_item_id": item_id,
                            "status": "approved", "previous_status": "pending", "edited": False,
                            "attacked": attacked, "reviewer": reviewer, "note": note, "at": at}
                           for item_id, attacked in rows])
            changed += len(rows)
    return changed


def review_version(conn: Bind, attack_set_id: int) -> tuple[int, int]:
    """(review actions, newest action's id) of a set in one aggregate query."""
    query = (select(func.count(), func.coalesce(func.max(ReviewEvent.id), 0))
             .where(ReviewEvent.attack_set_id == attack_set_id))
    with reading(conn) as tx:
        count, newest = tx.execute(query).one()
    return int(count), int(newest)


def review_events(conn: Bind, attack_set_id: int,
                  limit: Optional[int] = None) -> list[ReviewEvent]:
    """Every review event of a set, newest first."""
    query = (orm_select(ReviewEvent).where(ReviewEvent.attack_set_id == attack_set_id)
             .order_by(ReviewEvent.at.desc(), ReviewEvent.id.desc())  # type: ignore[attr-defined]
             .limit(limit))
    with session_scope(conn, write=False) as session:
        return list(session.exec(query).all())
