"""The reads and writes of users (`app_user`) and the reads of the audit log
(`audit_event`) for `evalcore.auth`, which checks the input and words the errors.

Each user change reads and writes in one transaction (a sign-in of a first-timer cannot
race another into two rows of one email: the email is the key)."""
from __future__ import annotations

from datetime import datetime
from typing import Any, Optional

from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from evalcore.store.db import reader, session_scope
from evalcore.store.tables import AppUser, AuditEvent, utcnow


def user_by_email(session: Session, email: str) -> Optional[AppUser]:
    """The user with this (normalised) email, if any."""
    return session.exec(select(AppUser).where(AppUser.email == email)).first()


def users_by_email(session: Session) -> list[AppUser]:
    """Everyone, by email."""
    return list(session.exec(select(AppUser).order_by(AppUser.email)))


def find_user(engine: Engine, email: str) -> tuple[Optional[AppUser], list[str]]:
    """(the user with this email, None if none; every known email when not found)."""
    with session_scope(reader(engine), write=False) as session:
        user = user_by_email(session, email)
        if user is not None:
            return user, []
        return None, [u.email for u in users_by_email(session)]


def all_users(engine: Engine) -> list[AppUser]:
    """Everyone, by email."""
    with session_scope(reader(engine), write=False) as session:
        return users_by_email(session)


def insert_user(engine: Engine, email: str, name: str, role: str) -> Optional[AppUser]:
    """Add a user; None (nothing written) when the email exists."""
    with session_scope(engine) as session:
        if user_by_email(session, email) is not None:
            return None
        user = AppUser(email=email, name=name, role=role)
        session.add(user)
        session.flush()
        return user


def change_role(engine: Engine, email: str, role: str) -> Optional[tuple[AppUser, str]]:
    """(the user, their previous role) after setting `role`; None if there is no such user."""
    with session_scope(engine) as session:
        user = user_by_email(session, email)
        if user is None:
            return None
        previous, user.role = user.role, role
        session.add(user)
        session.flush()
        return user, previous


def stored_role(engine: Engine, email: str) -> Optional[str]:
    """The stored role of `email`, None for an unknown user."""
    with session_scope(reader(engine), write=False) as session:
        user = user_by_email(session, email)
    return user.role if user is not None else None


def upsert_sign_in(engine: Engine, email: str, name: str, *, default_role: str, admin: bool,
                   now: Optional[Any] = None) -> AppUser:
    """A sign-in: a first-timer is added with `default_role` (admin if `admin`); the name
    fills in a placeholder; last_seen is set."""
    with session_scope(engine) as session:
        user = user_by_email(session, email)
        if user is None:
            user = AppUser(email=email, name=name or email, role=default_role)
        if admin:
            user.role = "admin"
        if name and user.name in ("", user.email):
            user.name = name
        user.last_seen = now or utcnow()
        session.add(user)
        session.flush()
        return user


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
