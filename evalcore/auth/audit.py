"""The audit log (table `audit_event`): who changed what, when, on which object."""
from __future__ import annotations

from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, Optional

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine

    from evalcore.auth.identity import Actor
    from evalcore.store.tables import AuditEvent


def record(engine: "Engine", actor: "Actor", action: str, object_type: str = "",
           object_id: Any = "", detail: Optional[dict[str, Any]] = None) -> None:
    """Append one event; `action` is '<object>.<verb>' (run.start, dataset.delete ...)."""
    from evalcore.store.db import session_scope
    from evalcore.store.tables import AuditEvent

    with session_scope(engine) as session:
        session.add(AuditEvent(actor=actor.label, action=action, object_type=object_type,
                               object_id="" if object_id is None else str(object_id),
                               detail={"role": actor.role, **(detail or {})}))


def list_events(engine: "Engine", *, since: Optional[datetime] = None,
                actor: Optional[str] = None, limit: int = 500) -> list["AuditEvent"]:
    """Events newest first, optionally since a time or of one actor."""
    from sqlmodel import select

    from evalcore.store.db import reader, session_scope
    from evalcore.store.tables import AuditEvent

    query = select(AuditEvent).order_by(AuditEvent.at.desc(), AuditEvent.id.desc()).limit(limit)
    if since is not None:
        if since.tzinfo is None:
            since = since.replace(tzinfo=timezone.utc)
        query = query.where(AuditEvent.at >= since)
    if actor:
        query = query.where(AuditEvent.actor == actor.strip().lower())
    with session_scope(reader(engine), write=False) as session:
        return list(session.exec(query))


def event_info(event: "AuditEvent") -> dict[str, Any]:
    """An event as a JSON-ready dict."""
    return {"at": event.at.isoformat(), "actor": event.actor, "action": event.action,
            "object_type": event.object_type, "object_id": event.object_id,
            "detail": event.detail}
