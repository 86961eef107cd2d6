"""Typed settings, read once from the environment and passed down.

`EVALCORE_HOME` (default `./.evalcore`) holds the SQLite database and `models.toml`;
`EVALCORE_DB_URL` overrides the database and `EVALCORE_MODELS` the model file
(`database`, the default on PostgreSQL, keeps models in the database for a team). A database
URL is checked here, once: SQLite or PostgreSQL (`postgres://` and `postgresql://` are
read as `postgresql+psycopg://`, the driver evalcore ships with); anything else is a
`SettingsError` that says what to write instead.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from evalcore.errors import SettingsError

DEFAULT_MODEL = "local"
"""Name of the model used when none is chosen: the embedded one (`providers.registry`).
Defined here, with the settings, so the CLI's parser can name it without importing the
providers package (~0.3 s of every command's start-up)."""
DB_URL_HELP = ("expected sqlite:///path/to/evalcore.db or "
               "postgresql://USER@HOST:5432/DBNAME")
MAX_FIELD_BYTES = 1 << 20
"""Default largest cell an import accepts (1 MiB): a question, an option, a column name."""
_PG_ALIASES = ("postgres://", "postgresql://", "postgres+psycopg://")


def normalize_db_url(url: str) -> str:
    """`url` as SQLAlchemy wants it, or a SettingsError (never echoing a password)."""
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    url = url.strip()
    for alias in _PG_ALIASES:
        if url.startswith(alias):
            url = "postgresql+psycopg://" + url[len(alias):]
            break
    try:
        parsed = make_url(url)
    except (ArgumentError, ValueError):
        raise SettingsError(f"EVALCORE_DB_URL is not a database URL ({DB_URL_HELP})") from None
    backend = parsed.get_backend_name()
    if backend not in ("sqlite", "postgresql"):
        raise SettingsError(f"EVALCORE_DB_URL: database '{backend}' is not supported; "
                            f"evalcore stores runs in SQLite or PostgreSQL ({DB_URL_HELP})")
    if backend == "postgresql" and parsed.get_driver_name() != "psycopg":
        raise SettingsError(f"EVALCORE_DB_URL: driver '{parsed.get_driver_name()}' is not "
                            "installed; use postgresql://... (psycopg 3)")
    return url


@dataclass(frozen=True)
class Settings:
    """Where evalcore keeps its state. Built by `load_settings()`; tests build their own."""

    home: Path
    db_url: str
    models_path: Any
    """A models.toml Path, or the database's list (`evalcore.model_store.ModelsInDatabase`,
    the default on PostgreSQL); `providers.registry` accepts either."""

    def redacted_db_url(self) -> str:
        """The database URL with any password hidden, for the sidebar and logs."""
        from sqlalchemy.engine import make_url

        return make_url(self.db_url).render_as_string(hide_password=True)


def home_dir(env: dict[str, str] | None = None) -> Path:
    """`EVALCORE_HOME` (default `./.evalcore`), read now from `env` or `os.environ`."""
    env = dict(os.environ if env is None else env)
    return Path(env.get("EVALCORE_HOME") or ".evalcore").expanduser().resolve()


def settings_from_env(env: dict[str, str] | None = None) -> Settings:
    """Build settings from `env` (default: `os.environ`) without caching."""
    env = dict(os.environ if env is None else env)
    home = home_dir(env)
    db_url = normalize_db_url(env.get("EVALCORE_DB_URL") or f"sqlite:///{home / 'evalcore.db'}")
    models_path = Path(env.get("EVALCORE_MODELS") or home / "models.toml").expanduser()
    from evalcore.model_store import models_location  # light: no SQLAlchemy here

    models_path = models_location(db_url, env.get("EVALCORE_MODELS"), models_path)
    return Settings(home=home, db_url=db_url, models_path=models_path)


def max_field_bytes(env: dict[str, str] | None = None) -> int:
    """`EVALCORE_MAX_FIELD_BYTES` (default 1 MiB): the largest cell a dataset import reads.

    Read at each import, not cached, so a test or a worker can change it. A 50 MB
    one-line file is refused at this size instead of becoming one 50 MB question.
    """
    raw = (os.environ if env is None else env).get("EVALCORE_MAX_FIELD_BYTES", "").strip()
    if not raw:
        return MAX_FIELD_BYTES
    try:
        value = int(raw.replace("_", ""))
    except ValueError:
        value = 0
    if value < 1024:
        raise SettingsError(f"EVALCORE_MAX_FIELD_BYTES={raw[:40]!r} is not a size in bytes of "
                            f"at least 1024 (default {MAX_FIELD_BYTES}; unset it or write e.g. "
                            "4194304)")
    return value


@lru_cache(maxsize=1)
def load_settings() -> Settings:
    """The process-wide settings, read once from the environment."""
    return settings_from_env()
