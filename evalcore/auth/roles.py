"""Roles and what each may do: viewer < evaluator < reviewer < admin, each with the
permissions of the ones below it. Checked in evalcore's functions that change state
(`evalcore.actions`), not only by the pages hiding buttons."""
from __future__ import annotations

from typing import TYPE_CHECKING

from evalcore.errors import EvalcoreError

if TYPE_CHECKING:
    from evalcore.auth.identity import Actor

RANKS: tuple[str, ...] = ("viewer", "evaluator", "reviewer", "admin")
"""The people's roles, lowest first: a role may do everything the roles before it may."""
SERVICE_ROLES: dict[str, frozenset[str]] = {"worker": frozenset({"work"})}
"""Roles of service accounts, outside the ranks: exactly these permissions, nothing else
(the workers' account executes queued jobs; it cannot read, start or delete anything)."""
ROLES: tuple[str, ...] = RANKS + tuple(SERVICE_ROLES)

PERMISSIONS: dict[str, tuple[str, str]] = {
    "read": ("viewer", "read runs, datasets and reports"),
    "export": ("viewer", "export results"),
    "run": ("evaluator", "start, cancel or resume runs"),
    "import": ("evaluator", "import datasets or attack sets"),
    "attack": ("evaluator", "generate attack sets"),
    "review": ("reviewer", "review attacked questions"),
    "test_model": ("evaluator", "send a test call to a model (a paid call)"),
    "schedule": ("evaluator", "add, pause, resume or delete schedules, or send a test alert"),
    "models": ("admin", "add, edit or delete models"),
    "users": ("admin", "add users or change roles"),
    "delete": ("admin", "delete datasets or attack sets"),
    "baseline": ("reviewer", "mark a run as the baseline of its dataset and model"),
    "audit": ("admin", "read the user list or the audit log"),
    "work": ("admin", "run a worker (python -m evalcore worker)"),
}
"""permission -> (the lowest role that has it, what it allows, for messages)."""

ADMIN_READS: dict[str, str] = {
    "users list": "audit",
    "audit list": "audit",
    "team page": "audit",
}
"""The reading doors that are not for every viewer, and the permission each needs: the
same table decides for the app (the Team page) and the CLI (`users list`, `audit list`),
so a viewer cannot read through one door what another refuses."""


class PermissionDenied(EvalcoreError):
    """The actor's role is below what the action needs; the message names the role needed."""


def check_role(role: str) -> str:
    """`role` lower-cased if it is one of ROLES, else an error listing the valid ones."""
    value = (role or "").strip().lower()
    if value not in ROLES:
        raise EvalcoreError(f"unknown role {role!r}; valid roles: {', '.join(ROLES)}")
    return value


def role_needed(permission: str) -> str:
    """The lowest role that has `permission`."""
    if permission not in PERMISSIONS:
        raise ValueError(f"unknown permission {permission!r}; known: {', '.join(PERMISSIONS)}")
    return PERMISSIONS[permission][0]


def allows(role: str, permission: str) -> bool:
    """Whether `role` has `permission` (an unknown role has none)."""
    needed = role_needed(permission)
    if role in SERVICE_ROLES:
        return permission in SERVICE_ROLES[role]
    if role not in RANKS:
        return False
    return RANKS.index(role) >= RANKS.index(needed)


def require(actor: "Actor", permission: str) -> None:
    """Raise PermissionDenied unless `actor`'s role has `permission`."""
    if allows(actor.role, permission):
        return
    needed = role_needed(permission)
    services = [role for role, granted in SERVICE_ROLES.items() if permission in granted]
    grant = services[0] if services else needed
    also = f" (or role {', '.join(services)}, a service account's)" if services else ""
    raise PermissionDenied(
        f"{actor.label} (role {actor.role}) may not {PERMISSIONS[permission][1]}: that needs "
        f"role {needed} or higher{also}; an admin can grant it with "
        f"`python -m evalcore users set-role {actor.email or actor.label} {grant}`")


def read_permission(door: str) -> str:
    """The permission a reading door needs: its row in ADMIN_READS, else plain 'read'."""
    return ADMIN_READS.get(door, "read")


def why_not(actor: "Actor", permission: str) -> str | None:
    """None if `actor` may do it, else a one-line reason for a disabled button."""
    if allows(actor.role, permission):
        return None
    return (f"Your role ({actor.role}) may not {PERMISSIONS[permission][1]}; "
            f"ask an admin for role {role_needed(permission)}.")
