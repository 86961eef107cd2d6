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
    from evalcore.store.db import reader, session_scope
    from evalcore.store.people import user_by_email, users_by_email

    email = _norm(email)
    with session_scope(reader(engine), write=False) as session:
        user = user_by_email(session, email)
        if user is None:
            known = [u.email for u in users_by_email(session)]
            raise EvalcoreError(f"no user {email!r}; known users: {', '.join(known) or '(none)'}."
                                f" Add one with `python -m evalcore users add {email} "
                                "--role ROLE`")
        return user


def list_users(engine: "Engine") -> list["AppUser"]:
    """Everyone, by email."""
    from evalcore.store.db import reader, session_scope
    from evalcore.store.people import users_by_email

    with session_scope(reader(engine), write=False) as session:
        return users_by_email(session)


def user_info(user: "AppUser") -> dict[str, Any]:
    """A user as a JSON-ready dict (CLI --json, the admin page)."""
    return {"email": user.email, "name": user.name, "role": user.role,
            "created_at": user.created_at.isoformat() if user.created_at else None,
            "last_seen": user.last_seen.isoformat() if user.last_seen else None}


def add_user(engine: "Engine", email: str, role: str, name: str = "") -> "AppUser":
    """Add a user with a role; an existing email is an error (use `set_role`)."""
    from evalcore.store.db import session_scope
    from evalcore.store.people import user_by_email
    from evalcore.store.tables import AppUser

    email, role = _norm(email), check_role(role)
    with session_scope(engine) as session:
        if user_by_email(session, email) is not None:
            raise EvalcoreError(f"user {email!r} exists already; change the role with "
                                f"`python -m evalcore users set-role {email} {role}`")
        user = AppUser(email=email, name=name or email, role=role)
        session.add(user)
        session.flush()
        return user


def set_role(engine: "Engine", email: str, role: str) -> tuple["AppUser", str]:
    """Change a user's role; returns the user and the previous role."""
    from evalcore.store.db import session_scope
    from evalcore.store.people import user_by_email

    role = check_role(role)
    get_user(engine, email)  # the error lists the known users
    with session_scope(engine) as session:
        user = user_by_email(session, _norm(email))
        assert user is not None  # get_user found it
        previous, user.role = user.role, role
        session.add(user)
        session.flush()
        return user, previous


def role_of(engine: "Engine", email: str, config: AuthConfig) -> str:
    """The role `email` acts with: admin if listed in EVALCORE_ADMINS, else the stored
    role, else the default role for unknown users."""
    from evalcore.store.db import reader, session_scope
    from evalcore.store.people import user_by_email

    email = _norm(email)
    if email in config.admins:
        return "admin"
    with session_scope(reader(engine), write=False) as session:
        user = user_by_email(session, email)
    return user.role if user is not None else config.default_role


def sign_in(engine: "Engine", email: str, name: str, config: AuthConfig,
            now: Optional[Any] = None) -> "AppUser":
    """Record a sign-in: a first-timer is added with the default role (admin if listed in
    EVALCORE_ADMINS) so they show up in the user list; last_seen is updated."""
    from evalcore.store.db import session_scope
    from evalcore.store.people import user_by_email
    from evalcore.store.tables import AppUser, utcnow

    email = _norm(email)
    with session_scope(engine) as session:
        user = user_by_email(session, email)
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
