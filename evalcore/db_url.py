"""EVALCORE_DB_URL checked and normalised: the one rule `config` (reading the settings)
and `store.db` (opening an engine) share, kept below both so neither imports the other
for it (the store must not import the settings that name it)."""
from __future__ import annotations

from evalcore.errors import SettingsError

DB_URL_HELP = ("expected sqlite:///path/to/evalcore.db or "
               "postgresql://USER@HOST:5432/DBNAME")
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
    try:
        port = parsed.port
    except ValueError:
        port = None
    if port is not None and not 1 <= int(port) <= 65535:
        raise SettingsError(f"EVALCORE_DB_URL: port {port} is out of range: ports are "
                            f"1-65535 ({DB_URL_HELP})")
    backend = parsed.get_backend_name()
    if backend not in ("sqlite", "postgresql"):
        raise SettingsError(f"EVALCORE_DB_URL: database '{backend}' is not supported; "
                            f"evalcore stores runs in SQLite or PostgreSQL ({DB_URL_HELP})")
    if backend == "postgresql" and parsed.get_driver_name() != "psycopg":
        raise SettingsError(f"EVALCORE_DB_URL: driver '{parsed.get_driver_name()}' is not "
                            "installed; use postgresql://... (psycopg 3)")
    return url
