"""The team: who may read a page or command, adding users and setting roles (checked
actions)."""
from __future__ import annotations

from evalcore.actions.admin import add_user, require_read, set_role

__all__ = ["add_user", "require_read", "set_role"]
