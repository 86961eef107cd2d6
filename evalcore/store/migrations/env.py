"""Alembic environment: runs on the connection `evalcore.store.db.migrate` passes in.

Without one (the alembic command line, when writing a revision) it opens the database
from `sqlalchemy.url` or the evalcore settings.
"""
from __future__ import annotations

from alembic import context
from sqlmodel import SQLModel

from evalcore.store import monitor_tables, tables  # noqa: F401  (fill SQLModel.metadata)

config = context.config
target_metadata = SQLModel.metadata


def run_on(connection) -> None:  # type: ignore[no-untyped-def]
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        render_as_batch=connection.dialect.name == "sqlite",  # SQLite cannot ALTER much
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()


connection = config.attributes.get("connection")
if connection is not None:
    run_on(connection)
else:
    from evalcore.config import load_settings
    from evalcore.store.db import make_engine

    engine = make_engine(config.get_main_option("sqlalchemy.url") or load_settings().db_url,
                         migrate=False)
    with engine.begin() as conn:
        run_on(conn)
    engine.dispose()
