"""The people of a team deployment and their roles (table `app_user`)."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional

from evalcore.auth.config import AuthConfig
from evalcore.auth.roles import check_role
from evalcore.errors import EvalcoreError

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine

    from evalcore.store.tables import AppUser


def _norm(email: str) -> str:
    value = (email or "").strip().lower()
    if not value:
        raise EvalcoreError("an email is needed")
    return value


def get_user(engine: "Engine", email: str) -> "AppUser":
    """One user, or an error listing the known ones."""
    from sqlmodel import select

    from evalcore.store.db import reader, session_scope
    from evalcore.store.tables import AppUser

    email = _norm(email)
    with session_scope(reader(engine), write=False) as session:
        user = session.exec(select(AppUser).where(AppUser.email == email)).first()
        if user is None:
            known = [u.email for u in session.exec(select(AppUser).order_by(AppUser.email))]
            raise EvalcoreError(f"no user {email!r}; known users: {', '.join(known) or '(none)'}."
                                f" Add one with `python -m evalcore users add {email} "
                                "--role ROLE`")
        return user


def list_users(engine: "Engine") -> list["AppUser"]:
    """Everyone, by email."""
    from sqlmodel import select

    from evalcore.store.db import reader, session_scope
    from evalcore.store.tables import AppUser

    with session_scope(reader(engine), write=False) as session:
        return list(session.exec(select(AppUser).order_by(AppUser.email)))


def user_info(user: "AppUser") -> dict[str, Any]:
    """A user as a JSON-ready dict (CLI --json, the admin page)."""
    return {"email": user.email, "name": user.name, "role": user.role,
            "created_at": user.created_at.isoformat() if user.created_at else None,
            "last_seen": user.last_seen.isoformat() if user.last_seen else None}


def add_user(engine: "Engine", email: str, role: str, name: str = "") -> "AppUser":
    """Add a user with a role; an existing email is an error (use `set_role`)."""
    from sqlmodel import select

    from evalcore.store.db import session_scope
    from evalcore.store.tables import AppUser

    email, role = _norm(email), check_role(role)
    with session_scope(engine) as session:
        if session.exec(select(AppUser).where(AppUser.email == email)).first() is not None:
            raise EvalcoreError(f"user {email!r} exists already; change the role with "
                                f"`python -m evalcore users set-role {email} {role}`")
        user = AppUser(email=email, name=name or email, role=role)
        session.add(user)
        session.flush()
        return user


def set_role(engine: "Engine", email: str, role: str) -> tuple["AppUser", str]:
    """Change a user's role; returns the user and the previous role."""
    from sqlmodel import select

    from evalcore.store.db import session_scope
    from evalcore.store.tables import AppUser

    role = check_role(role)
    get_user(engine, email)  # the error lists the known users
    with session_scope(engine) as session:
        user = session.exec(select(AppUser).where(AppUser.email == _norm(email))).one()
        previous, user.role = user.role, role
        session.add(user)
        session.flush()
        return user, previous


def role_of(engine: "Engine", email: str, config: AuthConfig) -> str:
    """The role `email` acts with: admin if listed in EVALCORE_ADMINS, else the stored
    role, else the default role for unknown users."""
    from sqlmodel import select

    from evalcore.store.db import reader, session_scope
    from evalcore.store.tables import AppUser

    email = _norm(email)
    if email in config.admins:
        return "admin"
    with session_scope(reader(engine), write=False) as session:
        user = session.exec(select(AppUser).where(AppUser.email == email)).first()
    return user.role if user is not None else config.default_role


def sign_in(engine: "Engine", email: str, name: str, config: AuthConfig,
            now: Optional[Any] = None) -> "AppUser":
    """Record a sign-in: a first-timer is added with the default role (admin if listed in
    EVALCORE_ADMINS) so they show up in the user list; last_seen is updated."""
    from sqlmodel import select

    from evalcore.store.db import session_scope
    from evalcore.store.tables import AppUser, utcnow

    email = _norm(email)
    with session_scope(engine) as session:
        user = session.exec(select(AppUser).where(AppUser.email == email)).first()
        if user is None:
            user = AppUser(email=email, name=name or email, role=config.default_role)
        if email in config.admins:
            user.role = "admin"
        if name and user.name in ("", user.email):
            user.name = name
        user.last_seen = now or utcnow()
        session.add(user)
        session.flush()
        return user
