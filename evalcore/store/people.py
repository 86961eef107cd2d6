"""The reads of users (`app_user`) and the audit log (`audit_event`) for `evalcore.auth`.

User lookups take the caller's `Session`, so a sign-in or a role change reads and writes
in one transaction."""
from __future__ import annotations

from datetime import datetime
from typing import Optional

from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from evalcore.store.db import reader, session_scope
from evalcore.store.tables import AppUser, AuditEvent


def user_by_email(session: Session, email: str) -> Optional[AppUser]:
    """The user with this (normalised) email, if any."""
    return session.exec(select(AppUser).where(AppUser.email == email)).first()


def users_by_email(session: Session) -> list[AppUser]:
    """Everyone, by email."""
    return list(session.exec(select(AppUser).order_by(AppUser.email)))


def recent_sign_ins(engine: Engine, actor: str, limit: int = 50) -> list[AuditEvent]:
    """The actor's latest `user.sign_in` events, newest first."""
    query = (select(AuditEvent).where(AuditEvent.actor == actor,
                                      AuditEvent.action == "user.sign_in")
             .order_by(AuditEvent.id.desc()).limit(limit))  # type: ignore[union-attr]
    with session_scope(engine, write=False) as session:
        return list(session.exec(query))


def audit_events(engine: Engine, *, since: Optional[datetime] = None,
                 actor: Optional[str] = None, limit: int = 500) -> list[AuditEvent]:
    """Events newest first, only those at or after `since` and of `actor` if given."""
    query = select(AuditEvent).order_by(AuditEvent.at.desc(), AuditEvent.id.desc()).limit(limit)  # type: ignore[attr-defined]
    if since is not None:
        query = query.where(AuditEvent.at >= since)
    if actor:
        query = query.where(AuditEvent.actor == actor)
    with session_scope(reader(engine), write=False) as session:
        return list(session.exec(query))
