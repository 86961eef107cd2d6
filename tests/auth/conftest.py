"""Auth fixtures: the store tests' throw-away databases (SQLite and PostgreSQL) and actors."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest


def _load_store_conftest():  # type: ignore[no-untyped-def]
    path = Path(__file__).resolve().parents[1] / "store" / "conftest.py"
    spec = importlib.util.spec_from_file_location("evalcore_tests_store_conftest", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_store = _load_store_conftest()
pg_url = _store.pg_url
store_url = _store.store_url
store = _store.store


def team_actor(role: str, email: str | None = None):  # type: ignore[no-untyped-def]
    from evalcore.auth import Actor

    email = email or f"{role}@example.com"
    return Actor(email=email, name=email.split("@")[0], role=role, team=True)


@pytest.fixture()
def actor_of():  # type: ignore[no-untyped-def]
    """`actor_of(role)`: a signed-in team actor with that role."""
    return team_actor
