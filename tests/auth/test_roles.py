"""Roles, permissions and the refusal message."""
from __future__ import annotations

import pytest

from evalcore.auth import PERMISSIONS, ROLES, PermissionDenied, allows, check_role, require, why_not
from evalcore.auth.config import auth_config
from evalcore.errors import EvalcoreError
from tests.auth.conftest import team_actor

EXPECTED = {  # the issue's table: what each role may do
    "viewer": {"read", "export"},
    "evaluator": {"read", "export", "run", "import", "attack", "test_model", "schedule"},
    # issue 26: a reviewer or admin marks a run as the baseline of its suite and model
    "reviewer": {"read", "export", "run", "import", "attack", "test_model", "schedule",
                 "review", "baseline"},
    "admin": set(PERMISSIONS),
    "worker": {"work"},  # the workers' service account: executes jobs, nothing else
}


@pytest.mark.parametrize("role", ROLES)
def test_each_role_has_exactly_the_permissions_of_the_issue(role: str) -> None:
    assert {p for p in PERMISSIONS if allows(role, p)} == EXPECTED[role]


def test_refusal_names_the_actor_the_role_and_the_role_needed() -> None:
    bob = team_actor("viewer", "bob@example.com")
    with pytest.raises(PermissionDenied) as info:
        require(bob, "run")
    text = str(info.value)
    assert "bob@example.com" in text and "viewer" in text and "role evaluator or higher" in text
    assert "users set-role bob@example.com evaluator" in text
    assert why_not(bob, "run") and why_not(team_actor("evaluator"), "run") is None


def test_unknown_role_lists_the_valid_ones() -> None:
    with pytest.raises(EvalcoreError, match="viewer, evaluator, reviewer, admin"):
        check_role("superuser")
    assert check_role(" Reviewer ") == "reviewer"
    assert not allows("superuser", "read")


def test_auth_config_defaults_and_errors() -> None:
    cfg = auth_config({})
    assert cfg.mode == "none" and not cfg.team and cfg.default_role == "viewer"
    cfg = auth_config({"EVALCORE_AUTH": "OIDC", "EVALCORE_ADMINS": " A@x.com, b@x.com ,",
                       "EVALCORE_DEFAULT_ROLE": "evaluator"})
    assert cfg.team and cfg.admins == {"a@x.com", "b@x.com"} and cfg.default_role == "evaluator"
    with pytest.raises(EvalcoreError, match="none, oidc, header"):
        auth_config({"EVALCORE_AUTH": "ldap"})
    with pytest.raises(EvalcoreError, match="EVALCORE_DEFAULT_ROLE"):
        auth_config({"EVALCORE_DEFAULT_ROLE": "boss"})
