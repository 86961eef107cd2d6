"""Guard: an API key set in the environment never reaches the database, wherever a
caller puts it in a run's config or a call's error."""
from __future__ import annotations

import pytest
from sqlalchemy import text

from evalcore.store import queries as q
from evalcore.store.tables import Call

KEY = "sk-evalcore-guard-4f9a1c77e2"
OTHER = "tok-not-in-env-but-named-0123"


def _stored_text(engine) -> str:  # type: ignore[no-untyped-def]
    """Every value of every row of every table, as the database holds it."""
    from sqlmodel import SQLModel

    from evalcore.store import monitor_tables, tables  # noqa: F401 - every table

    parts = []
    with engine.connect() as conn:
        for table in SQLModel.metadata.sorted_tables:
            for row in conn.execute(text(f'SELECT * FROM "{table.name}"')):
                parts.extend(str(value) for value in row)
    return "\n".join(parts)


@pytest.fixture()
def secret_env(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("EVALCORE_GUARD_API_KEY", KEY)
    return KEY


def test_api_keys_are_never_stored(store, item_ids, secret_env: str) -> None:
    config = {
        "model": {"name": "gpt-x", "base_url": "https://api.example.com/v1",
                  "api_key": secret_env, "api_key_env": "EVALCORE_GUARD_API_KEY"},
        "headers": {"Authorization": f"Bearer {secret_env}"},
        "judge": {"token": OTHER, "max_tokens": 64},
        "notes": [f"called with key={secret_env}"],
    }
    run = q.create_run(store, kind="eval", config=config, error=f"401 for key {secret_env}")
    q.update_run(store, run.id, config={**config, "retry": f"Bearer {OTHER}"})
    q.record_calls(store, [Call(run_id=run.id, item_id=item_ids[0], round=1,
                                error=f"HTTP 401: invalid api key {secret_env}")])

    stored = _stored_text(store)
    assert secret_env not in stored
    assert OTHER not in stored
    # the rest of the config is kept, so the run stays reproducible
    kept = q.get_run(store, run.id).config
    assert kept["model"]["name"] == "gpt-x"
    assert kept["model"]["api_key_env"] == "EVALCORE_GUARD_API_KEY"  # the variable's name
    assert kept["judge"]["max_tokens"] == 64


def test_redact_secrets_leaves_ordinary_values_alone() -> None:
    value = {"max_tokens": 5, "prompt_tokens": 3, "temperature": 0.0, "stop": ["\n"],
             "keyword": "tokenizer", "choices": ["A", "B"]}
    assert q.redact_secrets(value, secrets=[]) == value
