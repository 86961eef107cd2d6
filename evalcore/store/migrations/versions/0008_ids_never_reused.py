"""Ids are never reused: SQLite tables whose ids users see get AUTOINCREMENT.

Without it SQLite hands out max(id)+1, so deleting run 7 (the newest) made the next run
run 7 again, and old exports, the work queue and CLI lines saying "run 7" then pointed
at another run. AUTOINCREMENT keeps the highest id ever used (sqlite_sequence), seeded
here from the ids present. SQLite cannot alter a table's key, so each table is rebuilt
(batch mode copies the rows, ids kept). PostgreSQL identity columns never reuse ids
already: nothing to do there.

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-26
"""
from __future__ import annotations

from typing import Sequence, Union

from alembic import op

revision: str = "0008"
down_revision: Union[str, Sequence[str], None] = "0007"
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None

TABLES = ("dataset", "item", "run", "attack_set", "attack_item", "review_event", "job",
          "upload", "audit_event")
"""Tables whose ids users see or other rows keep (exports, the work queue, CLI lines,
review and audit trails, a job's upload). `call` is left as it is: its ids are never
shown, and rebuilding the biggest table would make the upgrade slow."""


def _rebuild(autoincrement: bool) -> None:
    conn = op.get_bind()
    if conn.dialect.name != "sqlite":
        return
    # The rebuild drops and renames parent tables: `store.db.migrate` turns foreign key
    # checks off for it and checks every reference before the commit.
    for name in TABLES:
        with op.batch_alter_table(name, recreate="always",
                                  table_kwargs={"sqlite_autoincrement": autoincrement}):
            pass


def upgrade() -> None:
    _rebuild(True)


def downgrade() -> None:
    _rebuild(False)
