"""Alert deliveries: one row per (event, channel), inserted BEFORE the message is sent.

A worker that finds the row already there does not send: either the message went out
(sent), failed for good (failed), or a worker died while sending it (sending), and then
sending again could make a second message, so it is marked failed with that reason. At
most one message per event and channel, whatever crashes or retries.
"""
from __future__ import annotations

from typing import Any, Optional

from sqlalchemy import select, update
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session

from evalcore.store.db import reader
from evalcore.store.monitor_tables import AlertDelivery
from evalcore.store.types import utcnow

INTERRUPTED = ("interrupted: the worker stopped while sending; not sent again, so that no "
               "second message can go out (check the channel)")


def claim_delivery(engine: Any, event: str, channel: str, *, run_id: Optional[int] = None,
                   schedule_id: Optional[int] = None) -> Optional[int]:
    """Insert the delivery row; its id if this caller sends, None if it exists already
    (a row left 'sending' by a dead worker is marked failed, never sent twice)."""
    table = AlertDelivery.__table__
    try:
        with engine.begin() as conn:
            return int(conn.execute(table.insert().values(
                event=event, channel=channel, run_id=run_id, schedule_id=schedule_id,
                status="sending", attempts=0, created_at=utcnow()).returning(table.c.id)
                ).scalar_one())
    except IntegrityError:
        with engine.begin() as conn:
            conn.execute(update(AlertDelivery).where(
                AlertDelivery.event == event, AlertDelivery.channel == channel,
                AlertDelivery.status == "sending").values(status="failed", error=INTERRUPTED))
        return None


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
