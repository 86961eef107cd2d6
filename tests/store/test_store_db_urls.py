"""Database URLs: `postgres://` and `postgresql://` are PostgreSQL (psycopg 3); other
databases and non-URLs are refused with a message naming what to write."""
from __future__ import annotations

import pytest
from sqlalchemy import text

from evalcore.config import normalize_db_url, settings_from_env
from evalcore.errors import SettingsError


@pytest.mark.parametrize(("url", "expected"), [
    ("postgres://u:p@h:5432/d", "postgresql+psycopg://u:p@h:5432/d"),
    ("postgresql://u@h/d", "postgresql+psycopg://u@h/d"),
    ("postgresql+psycopg://u@h/d", "postgresql+psycopg://u@h/d"),
    ("sqlite:///x.db", "sqlite:///x.db"),
])
def test_aliases_are_normalised(url: str, expected: str) -> None:
    assert normalize_db_url(url) == expected
    assert settings_from_env({"EVALCORE_DB_URL": url}).db_url == expected


@pytest.mark.parametrize(("url", "message"), [
    ("not a url", "is not a database URL"),
    ("mysql://u:secret-pw@h/d", "'mysql' is not supported"),
    ("postgresql+psycopg2://u@h/d", "'psycopg2' is not installed"),
])
def test_other_urls_are_refused_without_the_password(url: str, message: str) -> None:
    with pytest.raises(SettingsError, match=message) as caught:
        normalize_db_url(url)
    assert "secret-pw" not in str(caught.value)


@pytest.mark.postgres
def test_postgres_alias_connects(pg_url: str) -> None:
    from evalcore.store.db import make_engine

    alias = pg_url.replace("postgresql+psycopg://", "postgres://")
    engine = make_engine(alias)
    try:
        with engine.connect() as conn:
            assert conn.execute(text("SELECT 1")).scalar() == 1
    finally:
        engine.dispose()
