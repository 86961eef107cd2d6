"""The reads and writes of users (`app_user`) and the reads of the audit log
(`audit_event`) for `evalcore.auth`, which checks the input and words the errors.

Each user change reads and writes in one transaction (a sign-in of a first-timer cannot
race another into two rows of one email: the email is the key)."""
from __future__ import annotations

from datetime import datetime
from typing import Any, Optional

from sqlalchemy import insert, select, update
from sqlalchemy.engine import Connection, Row

from evalcore.store.db import Bind, reading, transaction
from evalcore.store.tables import AppUser, AuditEvent
from evalcore.store.types import utcnow

APP_USER = AppUser.__table__
AUDIT_EVENT = AuditEvent.__table__


def user_by_email(conn: Connection, email: str) -> Optional[Row]:
    """The user with this (normalised) email, if any (a read-only row)."""
    return conn.execute(select(APP_USER).where(APP_USER.c.email == email)).first()


def users_by_email(conn: Connection) -> list[Row]:
    """Everyone, by email."""
    return list(conn.execute(select(APP_USER).order_by(APP_USER.c.email)).all())


def find_user(conn: Bind, email: str) -> tuple[Optional[Row], list[str]]:
    """(the user with this email, None if none; every known email when not found)."""
    with reading(conn) as tx:
        user = user_by_email(tx, email)
        if user is not None:
            return user, []
        return None, [u.email for u in users_by_email(tx)]


def all_users(conn: Bind) -> list[Row]:
    """Everyone, by email."""
    with reading(conn) as tx:
        return users_by_email(tx)


def insert_user(conn: Bind, email: str, name: str, role: str) -> Optional[Row]:
    """Add a user; None (nothing written) when the email exists."""
    with transaction(conn) as tx:
        if user_by_email(tx, email) is not None:
            return None
        tx.execute(insert(APP_USER).values(email=email, name=name, role=role))
        return user_by_email(tx, email)


def change_role(conn: Bind, email: str, role: str) -> Optional[tuple[Row, str]]:
    """(the user, their previous role) after setting `role`; None if there is no such user."""
    with transaction(conn) as tx:
        user = user_by_email(tx, email)
        if user is None:
            return None
        tx.execute(update(APP_USER).where(APP_USER.c.email == email).values(role=role))
        return user_by_email(tx, email), user.role


def stored_role(conn: Bind, email: str) -> Optional[str]:
    """The stored role of `email`, None for an unknown user."""
    with reading(conn) as tx:
        return tx.execute(select(APP_USER.c.role).where(APP_USER.c.email == email)
                            ).scalar_one_or_none()


def upsert_sign_in(conn: Bind, email: str, name: str, *, default_role: str, admin: bool,
                   now: Optional[Any] = None) -> Row:
    """A sign-in: a first-timer is added with `default_role` (admin if `admin`); the name
    fills in a placeholder; last_seen is set."""
    with transaction(conn) as tx:
        user = user_by_email(tx, email)
        values: dict[str, Any] = {"last_seen": now or utcnow()}
        if admin:
            values["role"] = "admin"
        if user is None:
            tx.execute(insert(APP_USER).values(
                email=email, name=name or email, role=values.pop("role", default_role),
                **values))
        else:
            if name and user.name in ("", user.email):
                values["name"] = name
            tx.execute(update(APP_USER).where(APP_USER.c.email == email).values(**values))
        found = user_by_email(tx, email)
        assert found is not None
        return found


def add_audit_event(bind: Bind, *, actor: str, action: str, object_type: str,
                    object_id: str, detail: dict[str, Any]) -> None:
    """Append one audit event, in its own commit or the caller's `transaction`."""
    with transaction(bind) as conn:
        conn.execute(insert(AUDIT_EVENT).values(actor=actor, action=action,
                                                object_type=object_type, object_id=object_id,
                                                detail=detail))


def recent_sign_ins(conn: Bind, actor: str, limit: int = 50) -> list[Row]:
    """The actor's latest `user.sign_in` events, newest first."""
    query = (select(AUDIT_EVENT).where(AUDIT_EVENT.c.actor == actor,
                                       AUDIT_EVENT.c.action == "user.sign_in")
             .order_by(AUDIT_EVENT.c.id.desc()).limit(limit))
    with reading(conn) as tx:
        return list(tx.execute(query).all())


def audit_events(conn: Bind, *, since: Optional[datetime] = None,
                 actor: Optional[str] = None, limit: int = 500) -> list[Row]:
    """Events newest first, only those at or after `since` and of `actor` if given."""
    query = (select(AUDIT_EVENT).order_by(AUDIT_EVENT.c.at.desc(), AUDIT_EVENT.c.id.desc())
             .limit(limit))
    if since is not None:
        query = query.where(AUDIT_EVENT.c.at >= since)
    if actor:
        query = query.where(AUDIT_EVENT.c.actor == actor)
    with reading(conn) as tx:
        return list(tx.execute(query).all())
