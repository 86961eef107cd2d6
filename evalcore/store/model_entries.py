"""The shared model list of team mode (table `model_entry`), for `evalcore.model_store`."""
from __future__ import annotations

from typing import Any

from sqlmodel import select

from evalcore.store.db import Bind, session_scope
from evalcore.store.tables import ModelEntry, utcnow


def model_tables(conn: Bind) -> dict[str, dict[str, Any]]:
    """Every stored model's settings, by name."""
    with session_scope(conn, write=False) as session:
        return {row.name: dict(row.config)
                for row in session.exec(select(ModelEntry).order_by(ModelEntry.name))}


def save_model_tables(conn: Bind, tables: dict[str, dict[str, Any]], editor: str) -> None:
    """Make the stored list equal `tables` in one transaction: changed rows are updated
    (with who and when), new ones inserted, missing ones deleted."""
    with session_scope(conn) as session:
        rows = {row.name: row for row in session.exec(select(ModelEntry))}
        for name, row in rows.items():
            if name not in tables:
                session.delete(row)
        for name, config in tables.items():
            row = rows.get(name)
            if row is None:
                session.add(ModelEntry(name=name, config=config, updated_by=editor))
            elif row.config != config:
                row.config, row.updated_by, row.updated_at = config, editor, utcnow()
                session.add(row)
