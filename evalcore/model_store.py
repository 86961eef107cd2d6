"""The shared model registry of team mode: models in the database (table `model_entry`),
so every app replica and worker sees the same list and the Models page edits it for everyone.

`ModelsInDatabase` stands where a models.toml path stands (`Settings.models_path`), and
`providers.registry` reads and writes through it; rows hold the same tables as the TOML
file (keys stay the NAMES of environment variables, resolved where a call is made).
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from evalcore.db_url import normalize_db_url

DATABASE = "database"
"""`EVALCORE_MODELS=database` keeps the models in the database (the default on PostgreSQL)."""


@dataclass(frozen=True)
class ModelsInDatabase:
    """The model list of the database at `db_url`."""

    db_url: str
    bind: Any = field(default=None, compare=False, repr=False)
    """The Connection of an open transaction on this database: reads and writes join it
    (an admin's model change and its audit event commit together)."""

    def within(self, conn: Any) -> "ModelsInDatabase":
        """This list, read and written in `conn`'s transaction when `conn` is on the same
        database (else as it is)."""
        same = _same_database(conn.engine.url.render_as_string(hide_password=False),
                              self.db_url)
        return replace(self, bind=conn) if same else self

    def __str__(self) -> str:
        from sqlalchemy.engine import make_url

        url = make_url(self.db_url).render_as_string(hide_password=True)
        return f"the database's model list ({url})"

    def exists(self) -> bool:
        """Whether any model was stored (an empty list means the built-in defaults)."""
        return bool(self.tables())

    def _engine(self) -> Any:
        from evalcore.store.db import get_engine

        return self.bind if self.bind is not None else get_engine(self.db_url)

    def tables(self) -> dict[str, dict[str, Any]]:
        """Every stored model's settings, by name."""
        from evalcore.store.model_entries import model_tables

        return model_tables(self._engine())

    def save(self, tables: dict[str, dict[str, Any]], editor: str = "") -> None:
        """Make the stored list equal `tables` in one transaction: changed rows are
        updated (with who and when), new ones inserted, missing ones deleted."""
        from evalcore.store.model_entries import save_model_tables

        save_model_tables(self._engine(), tables, editor)


def _same_database(a: str, b: str) -> bool:
    """Whether two URLs name one database (a SQLite file however its path is spelt)."""
    from pathlib import Path

    from sqlalchemy.engine import make_url

    left, right = make_url(normalize_db_url(a)), make_url(normalize_db_url(b))
    if left.get_backend_name() == right.get_backend_name() == "sqlite":
        if not left.database or not right.database:
            return left.database == right.database
        return Path(left.database).resolve() == Path(right.database).resolve()
    return left.set(drivername=right.drivername) == right


def models_location(db_url: str, models_env: str | None, default_file: Any) -> Any:
    """Where the model list lives: `EVALCORE_MODELS` names a file or `database`; unset,
    PostgreSQL (team mode) means the database and SQLite the file under EVALCORE_HOME."""
    if models_env == DATABASE or (not models_env and db_url.startswith("postgresql")):
        return ModelsInDatabase(db_url)
    return default_file
