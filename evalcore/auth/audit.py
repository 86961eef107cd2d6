"""The audit log (table `audit_event`): who changed what, when, on which object."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING, Any, Optional

from evalcore.store.people import add_audit_event, audit_events, recent_sign_ins

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine

    from evalcore.auth.identity import Actor
    from evalcore.store.db import Bind


def record(engine: "Bind", actor: "Actor", action: str, object_type: str = "",
           object_id: Any = "", detail: Optional[dict[str, Any]] = None) -> None:
    """Append one event; `action` is '<object>.<verb>' (run.start, dataset.delete ...).
    Given a `store.db.transaction`'s Connection, the event commits with the change."""
    add_audit_event(engine, actor=actor.label, action=action, object_type=object_type,
                    object_id="" if object_id is None else str(object_id),
                    detail={"role": actor.role, **(detail or {})})


SIGN_IN_WINDOW_S = 8 * 3600.0
"""Without a login key (header mode: the proxy's sign-in is invisible here), sessions of
one person within this many seconds of the last recorded sign-in are the same sign-in."""


def record_sign_in(engine: "Engine", actor: "Actor", via: str, login: Optional[str] = None,
                   *, now: Optional[datetime] = None) -> bool:
    """Record `user.sign_in` once per sign-in, not once per Streamlit session; returns
    whether it was recorded.

    The app meets a person in a new session on every page load (a reload, a link typed
    in, a second tab: the first sign-in was written twice ~5 s apart when the browser
    opened a page after the provider's redirect). `login` (`identity.login_key`) names
    the sign-in itself; without one, a sign-in within SIGN_IN_WINDOW_S is the same one.
    """
    now = now or datetime.now(timezone.utc)
    earlier = recent_sign_ins(engine, actor.label, 50)
    if login is not None:
        if any((e.detail or {}).get("login") == login for e in earlier):
            return False
    elif earlier:
        last = earlier[0].at if earlier[0].at.tzinfo else earlier[0].at.replace(
            tzinfo=timezone.utc)
        if now - last < timedelta(seconds=SIGN_IN_WINDOW_S):
            return False
    record(engine, actor, "user.sign_in", "user", actor.label,
           {"via": via, **({"login": login} if login else {})})
    return True


def list_events(engine: "Engine", *, since: Optional[datetime] = None,
                actor: Optional[str] = None, limit: int = 500) -> list[Any]:
    """Events newest first, optionally since a time or of one actor."""
    if since is not None and since.tzinfo is None:
        since = since.replace(tzinfo=timezone.utc)
    return audit_events(engine, since=since, actor=actor.strip().lower() if actor else None,
                        limit=limit)


def event_info(event: Any) -> dict[str, Any]:
    """An event as a JSON-ready dict."""
    return {"at": event.at.isoformat(), "actor": event.actor, "action": event.action,
            "object_type": event.object_type, "object_id": event.object_id,
            "detail": event.detail}
