"""The user table, sign-in bookkeeping and the audit log, on SQLite and PostgreSQL."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from evalcore.auth import audit, signed_in_actor
from evalcore.auth.config import auth_config
from evalcore.auth.users import add_user, get_user, list_users, role_of, set_role, sign_in
from evalcore.errors import EvalcoreError
from tests.auth.conftest import team_actor


def test_first_sign_in_adds_the_user_with_the_default_role(store) -> None:
    cfg = auth_config({"EVALCORE_AUTH": "oidc", "EVALCORE_ADMINS": "boss@x.com"})
    bob = signed_in_actor(store, "bob@x.com", "Bob", cfg)
    assert (bob.role, bob.name, bob.team) == ("viewer", "Bob", True)
    assert signed_in_actor(store, "boss@x.com", "Boss", cfg).role == "admin"
    assert [u.email for u in list_users(store)] == ["bob@x.com", "boss@x.com"]
    assert get_user(store, "BOB@x.com").last_seen is not None
    evaluator_cfg = auth_config({"EVALCORE_AUTH": "oidc", "EVALCORE_DEFAULT_ROLE": "evaluator"})
    assert sign_in(store, "new@x.com", "", evaluator_cfg).role == "evaluator"
    assert sign_in(store, "bob@x.com", "Bob", evaluator_cfg).role == "viewer"  # stored role wins


def test_add_and_set_role_and_clear_errors(store) -> None:
    add_user(store, "alice@x.com", "evaluator")
    with pytest.raises(EvalcoreError, match="exists already"):
        add_user(store, "alice@x.com", "viewer")
    with pytest.raises(EvalcoreError, match="valid roles: viewer, evaluator, reviewer, admin"):
        add_user(store, "zed@x.com", "owner")
    user, previous = set_role(store, "alice@x.com", "reviewer")
    assert (user.role, previous) == ("reviewer", "evaluator")
    with pytest.raises(EvalcoreError, match="no user 'ghost@x.com'; known users: alice@x.com"):
        set_role(store, "ghost@x.com", "admin")
    cfg = auth_config({"EVALCORE_AUTH": "header", "EVALCORE_ADMINS": "root@x.com"})
    assert role_of(store, "alice@x.com", cfg) == "reviewer"
    assert role_of(store, "root@x.com", cfg) == "admin"
    assert role_of(store, "stranger@x.com", cfg) == "viewer"


def test_audit_log_keeps_who_what_when_and_filters(store) -> None:
    alice, bob = team_actor("evaluator", "alice@x.com"), team_actor("viewer", "bob@x.com")
    audit.record(store, alice, "run.start", "run", 7, {"kind": "stability"})
    audit.record(store, bob, "dataset.import", "dataset", 3)
    events = audit.list_events(store)
    assert [(e.actor, e.action, e.object_id) for e in events] == [
        ("bob@x.com", "dataset.import", "3"), ("alice@x.com", "run.start", "7")]
    assert events[1].detail == {"role": "evaluator", "kind": "stability"}
    assert [e.action for e in audit.list_events(store, actor="alice@x.com")] == ["run.start"]
    future = datetime.now(timezone.utc) + timedelta(minutes=5)
    assert audit.list_events(store, since=future) == []
    assert audit.event_info(events[0])["actor"] == "bob@x.com"
