"""Typed settings, read once from the environment and passed down.

`EVALCORE_HOME` (default `./.evalcore`) holds the SQLite database and `models.toml`;
`EVALCORE_DB_URL` overrides the database and `EVALCORE_MODELS` the model file
(`database`, the default on PostgreSQL, keeps models in the database for a team). A database
URL is checked here, once: SQLite or PostgreSQL (`postgres://` and `postgresql://` are
read as `postgresql+psycopg://`, the driver evalcore ships with); anything else is a
`SettingsError` that says what to write instead.
"""
from __future__ import annotations

import math
import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Mapping

from evalcore.db_url import normalize_db_url
from evalcore.errors import SettingsError
from evalcore.model_store import models_location  # light: no SQLAlchemy here

DEFAULT_MODEL = "local"
"""Name of the model used when none is chosen: the embedded one (`providers.registry`).
Defined here, with the settings, so the CLI's parser can name it without importing the
providers package (~0.3 s of every command's start-up)."""
MAX_FIELD_BYTES = 1 << 20
"""Default largest cell an import accepts (1 MiB): a question, an option, a column name."""
MAX_IMPORT_BYTES = 128 << 20
"""Default largest amount of data an import holds or unpacks (128 MiB): a workbook's
unpacked XML, a JSON or JSONL file (read whole). CSV is streamed and needs no such cap."""


LEASE_FLOOR_S = 2.0
"""The shortest job lease accepted (EVALCORE_LEASE_S): workers renew every third of it, so
a shorter one is lost to a slow query or a GC pause and invites takeovers of healthy jobs."""
LEASE_CEILING_S = 3600.0
"""The longest: a dead worker's job waits this long before another worker takes it over."""
MAX_WORKER_JOBS = 64
_TRUE, _FALSE = ("1", "true", "yes", "on"), ("0", "false", "no", "off")


def env_number(env: Mapping[str, str], name: str, default: float, low: float, high: float,
               why_low: str, kind: type = float) -> Any:
    """`env[name]` as a number within [low, high] (unset or empty: `default`); else a
    SettingsError naming the variable, the bounds and `why_low` (what a low value breaks)."""
    text = (env.get(name) or "").strip()
    if not text:
        return default
    what = "a whole number" if kind is int else "a number of seconds"
    try:
        value = kind(text)
    except ValueError:
        raise SettingsError(f"{name}={text[:40]!r} is not {what} (unset it for the default "
                            f"{default:g})") from None
    if not math.isfinite(value) or value < low or value > high:
        raise SettingsError(f"{name}={text[:40]} is out of range: use {low:g} to {high:g}"
                            f" ({why_low}; unset it for the default {default:g})")
    return value


def env_flag(env: Mapping[str, str], name: str, default: bool) -> bool:
    """`env[name]` as a yes/no switch (1/0, true/false, yes/no, on/off); anything else is
    a SettingsError, not a silent default."""
    text = (env.get(name) or "").strip().lower()
    if not text:
        return default
    if text in _TRUE or text in _FALSE:
        return text in _TRUE
    raise SettingsError(f"{name}={text[:40]!r} is not a switch: use 1 or 0 (also true/false, "
                        "yes/no, on/off)")


def lease_seconds(env: Mapping[str, str] | None = None, default: float = 15.0) -> float:
    """EVALCORE_LEASE_S, checked against LEASE_FLOOR_S and LEASE_CEILING_S."""
    return float(env_number(os.environ if env is None else env, "EVALCORE_LEASE_S", default,
                            LEASE_FLOOR_S, LEASE_CEILING_S,
                            "a shorter lease is lost to a slow query and other workers take "
                            "over healthy jobs"))


def embedded_worker(env: Mapping[str, str] | None = None) -> bool:
    """EVALCORE_EMBEDDED_WORKER: whether the app runs a worker itself (default yes)."""
    return env_flag(os.environ if env is None else env, "EVALCORE_EMBEDDED_WORKER", True)


def worker_jobs(env: Mapping[str, str] | None = None, default: int = 2) -> int:
    """EVALCORE_WORKER_JOBS: jobs a worker executes at once (1-MAX_WORKER_JOBS)."""
    return int(env_number(os.environ if env is None else env, "EVALCORE_WORKER_JOBS", default,
                          1, MAX_WORKER_JOBS, "each job holds a database connection and "
                          "model calls", kind=int))


def check_environment(env: Mapping[str, str]) -> None:
    """Refuse a bad worker setting at start-up, whichever command or page reads it later:
    a typo is one line `error: ...`, never a silent default. (The sign-in settings are
    checked by `auth.config.auth_config`, which the CLI and the app call at start too.)"""
    lease_seconds(env)
    embedded_worker(env)
    worker_jobs(env)


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
    check_environment(env)
    home = home_dir(env)
    db_url = normalize_db_url(env.get("EVALCORE_DB_URL") or f"sqlite:///{home / 'evalcore.db'}")
    models_path = Path(env.get("EVALCORE_MODELS") or home / "models.toml").expanduser()

    models_path = models_location(db_url, env.get("EVALCORE_MODELS"), models_path)
    return Settings(home=home, db_url=db_url, models_path=models_path)


def max_field_bytes(env: dict[str, str] | None = None) -> int:
    """`EVALCORE_MAX_FIELD_BYTES` (default 1 MiB): the largest cell a dataset import reads.

    Read at each import, not cached, so a test or a worker can change it. A 50 MB
    one-line file is refused at this size instead of becoming one 50 MB question.
    """
    return _size_setting(env, "EVALCORE_MAX_FIELD_BYTES", MAX_FIELD_BYTES)


def max_import_bytes(env: dict[str, str] | None = None) -> int:
    """`EVALCORE_MAX_IMPORT_BYTES` (default 128 MiB): the most an import unpacks or holds.

    A 2 MB workbook can unpack to gigabytes (a zip bomb); its members' sizes are checked
    against this before anything is parsed. Read at each import, like the field limit.
    """
    return _size_setting(env, "EVALCORE_MAX_IMPORT_BYTES", MAX_IMPORT_BYTES)


def _size_setting(env: dict[str, str] | None, key: str, default: int) -> int:
    raw = (os.environ if env is None else env).get(key, "").strip()
    if not raw:
        return default
    try:
        value = int(raw.replace("_", ""))
    except ValueError:
        value = 0
    if value < 1024:
        raise SettingsError(f"{key}={raw[:40]!r} is not a size in bytes of at least 1024 "
                            f"(default {default}; unset it or write e.g. {default * 4})")
    return value


@lru_cache(maxsize=1)
def load_settings() -> Settings:
    """The process-wide settings, read once from the environment."""
    return settings_from_env()
