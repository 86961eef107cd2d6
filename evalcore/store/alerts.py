"""Alert deliveries: one row per (event, channel), inserted BEFORE the message is sent,
and each try counted on it BEFORE that try goes out.

A worker that finds the row already there does not send: either the message went out
(sent), failed for good (failed), or a worker died while sending it (sending). A dead
worker's row that counts no try sent nothing: the finder takes it over and sends. One
that counts a try may have reached the channel: sending again could make a second
message, so it is marked 'possibly delivered' with that reason. At most one message per
event and channel, whatever crashes or retries, and none silently lost.
"""
from __future__ import annotations

from typing import Any, Optional

from sqlalchemy import select, update
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session

from evalcore.store.db import reader
from evalcore.store.monitor_tables import AlertDelivery
from evalcore.store.types import utcnow

POSSIBLY_DELIVERED = "possibly delivered"
INTERRUPTED = ("interrupted during try {tries}: the worker stopped while sending, so the "
               "channel may have it; not sent again, so that no second message can go out "
               "(check the channel)")


def claim_delivery(engine: Any, event: str, channel: str, *, run_id: Optional[int] = None,
                   schedule_id: Optional[int] = None) -> Optional[int]:
    """Insert the delivery row; its id if this caller sends, None if it exists already.
    A row left 'sending' by a dead worker is taken over (its id returned) when it counts
    no try, else marked possibly delivered; it is never sent twice."""
    table = AlertDelivery.__table__
    try:
        with engine.begin() as conn:
            return int(conn.execute(table.insert().values(
                event=event, channel=channel, run_id=run_id, schedule_id=schedule_id,
                status="sending", attempts=0, created_at=utcnow()).returning(table.c.id)
                ).scalar_one())
    except IntegrityError:
        pass
    with engine.begin() as conn:
        row = conn.execute(select(table.c.id, table.c.status, table.c.attempts).where(
            table.c.event == event, table.c.channel == channel)).one()
        if row.status != "sending":
            return None
        if row.attempts == 0:  # nothing went out: the first try decides who sends
            return int(row.id)
        conn.execute(update(table).where(table.c.id == row.id, table.c.status == "sending")
                     .values(status=POSSIBLY_DELIVERED,
                             error=INTERRUPTED.format(tries=row.attempts)))
    return None


def start_attempt(engine: Any, delivery_id: int, attempt: int) -> bool:
    """Count try `attempt` on the row before it goes out; False if another worker counted
    it first (it sends; this one must not)."""
    table = AlertDelivery.__table__
    with engine.begin() as conn:
        return conn.execute(update(table).where(
            table.c.id == delivery_id, table.c.status == "sending",
            table.c.attempts == attempt - 1).values(attempts=attempt)).rowcount == 1


def finish_delivery(engine: Any, delivery_id: int, *, ok: bool, attempts: int,
                    error: Optional[str] = None) -> None:
    """Record how a delivery ended: sent, or failed with the (masked) reason."""
    with engine.begin() as conn:
        conn.execute(update(AlertDelivery).where(AlertDelivery.id == delivery_id).values(
            status="sent" if ok else "failed", attempts=attempts, error=error,
            sent_at=utcnow() if ok else None))


def deliveries(engine: Any, *, run_id: Optional[int] = None,
               schedule_id: Optional[int] = None, event: Optional[str] = None
               ) -> list[dict[str, Any]]:
    """Delivery rows (of a run, a schedule or an event) as dicts, oldest first."""
    query = select(AlertDelivery).order_by(AlertDelivery.id)  # type: ignore[arg-type]
    if run_id is not None:
        query = query.where(AlertDelivery.run_id == run_id)
    if schedule_id is not None:
        query = query.where(AlertDelivery.schedule_id == schedule_id)
    if event is not None:
        query = query.where(AlertDelivery.event == event)
    with Session(reader(engine)) as session:
        return [{"event": d.event, "channel": d.channel, "status": d.status,
                 "attempts": d.attempts, "error": d.error, "run_id": d.run_id,
                 "sent_at": d.sent_at.isoformat() if d.sent_at else None}
                for d in session.scalars(query)]
