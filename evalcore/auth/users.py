"""The people of a team deployment and their roles (table `app_user`)."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional

from evalcore.auth.config import AuthConfig
from evalcore.auth.roles import check_role
from evalcore.errors import EvalcoreError
from evalcore.store import people

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
    email = _norm(email)
    user, known = people.find_user(engine, email)
    if user is None:
        raise EvalcoreError(f"no user {email!r}; known users: {', '.join(known) or '(none)'}."
                            f" Add one with `python -m evalcore users add {email} "
                            "--role ROLE`")
    return user


def list_users(engine: "Engine") -> list["AppUser"]:
    """Everyone, by email."""
    return people.all_users(engine)


def user_info(user: "AppUser") -> dict[str, Any]:
    """A user as a JSON-ready dict (CLI --json, the admin page)."""
    return {"email": user.email, "name": user.name, "role": user.role,
            "created_at": user.created_at.isoformat() if user.created_at else None,
            "last_seen": user.last_seen.isoformat() if user.last_seen else None}


def add_user(engine: "Engine", email: str, role: str, name: str = "") -> "AppUser":
    """Add a user with a role; an existing email is an error (use `set_role`)."""
    email, role = _norm(email), check_role(role)
    user = people.insert_user(engine, email, name or email, role)
    if user is None:
        raise EvalcoreError(f"user {email!r} exists already; change the role with "
                            f"`python -m evalcore users set-role {email} {role}`")
    return user


def set_role(engine: "Engine", email: str, role: str) -> tuple["AppUser", str]:
    """Change a user's role; returns the user and the previous role."""
    role = check_role(role)
    get_user(engine, email)  # the error lists the known users
    changed = people.change_role(engine, _norm(email), role)
    if changed is None:  # deleted in between
        get_user(engine, email)
    assert changed is not None
    return changed


def role_of(engine: "Engine", email: str, config: AuthConfig) -> str:
    """The role `email` acts with: admin if listed in EVALCORE_ADMINS, else the stored
    role, else the default role for unknown users."""
    email = _norm(email)
    if email in config.admins:
        return "admin"
    return people.stored_role(engine, email) or config.default_role


def sign_in(engine: "Engine", email: str, name: str, config: AuthConfig,
            now: Optional[Any] = None) -> "AppUser":
    """Record a sign-in: a first-timer is added with the default role (admin if listed in
    EVALCORE_ADMINS) so they show up in the user list; last_seen is updated."""
    email = _norm(email)
    return people.upsert_sign_in(engine, email, name, default_role=config.default_role,
                                 admin=email in config.admins, now=now)
