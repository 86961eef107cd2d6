"""`users` and `audit` commands, and the CLI's actor in team mode."""
from __future__ import annotations

import json

import pytest

from evalcore.cli import main


@pytest.fixture()
def team(settings, monkeypatch):  # type: ignore[no-untyped-def]
    monkeypatch.setenv("EVALCORE_AUTH", "header")
    monkeypatch.setenv("EVALCORE_ADMINS", "root@x.com")
    monkeypatch.setenv("EVALCORE_USER", "root@x.com")
    return settings


def test_admin_adds_users_sets_roles_and_the_audit_log_shows_it(team, capsys, monkeypatch) -> None:
    assert main(["users", "add", "Bob@X.com", "--role", "viewer"]) == 0
    assert main(["users", "set-role", "bob@x.com", "evaluator"]) == 0
    capsys.readouterr()
    assert main(["users", "list", "--json"]) == 0
    users = json.loads(capsys.readouterr().out)
    assert [(u["email"], u["role"]) for u in users] == [("bob@x.com", "evaluator")]
    assert main(["audit", "list", "--since", "1h", "--json"]) == 0
    events = json.loads(capsys.readouterr().out)
    assert [(e["actor"], e["action"], e["object_id"]) for e in events] == [
        ("root@x.com", "user.set_role", "bob@x.com"), ("root@x.com", "user.add", "bob@x.com")]
    monkeypatch.setenv("EVALCORE_USER", "bob@x.com")  # an evaluator may not change roles
    assert main(["users", "set-role", "bob@x.com", "admin"]) == 2
    assert "role admin or higher" in capsys.readouterr().err


def test_unknown_role_or_user_exits_2_listing_the_valid_ones(team, capsys) -> None:
    assert main(["users", "add", "c@x.com", "--role", "boss"]) == 2
    assert "valid roles: viewer, evaluator, reviewer, admin" in capsys.readouterr().err
    assert main(["users", "set-role", "ghost@x.com", "viewer"]) == 2
    assert "no user 'ghost@x.com'" in capsys.readouterr().err
    assert main(["audit", "list", "--since", "yesterday"]) == 2
    assert "30m, 12h, 7d" in capsys.readouterr().err


def test_a_viewer_cannot_import_from_the_cli(team, capsys, monkeypatch, tmp_path) -> None:
    from tests.perturb.attack_set_helpers import write_math_csv

    monkeypatch.setenv("EVALCORE_USER", "viewer@x.com")
    path = write_math_csv(tmp_path / "m.csv")
    assert main(["datasets", "import", str(path), "--format", "math23k"]) == 2
    assert "may not import datasets" in capsys.readouterr().err
