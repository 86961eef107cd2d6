"""review_event: every review action on an attack item (the audit trail).

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-21
"""
from __future__ import annotations

from typing import Sequence, Union

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: Union[str, Sequence[str], None] = "0003"
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None

TIMESTAMP = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "review_event",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("attack_set_id", sa.Integer(), nullable=False),
        sa.Column("attack_item_id", sa.Integer(), nullable=False),
        sa.Column("status", sa.String(), nullable=False),
        sa.Column("previous_status", sa.String(), nullable=False),
        sa.Column("edited", sa.Boolean(), nullable=False),
        sa.Column("attacked", sa.Text(), nullable=False),
        sa.Column("reviewer", sa.String(), nullable=False),
        sa.Column("note", sa.String(), nullable=False),
        sa.Column("at", TIMESTAMP, nullable=False),
        sa.ForeignKeyConstraint(["attack_set_id"], ["attack_set.id"]),
        sa.ForeignKeyConstraint(["attack_item_id"], ["attack_item.id"]),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_review_event_attack_set_id", "review_event", ["attack_set_id"])
    op.create_index("ix_review_event_attack_item_id", "review_event", ["attack_item_id"])


def downgrade() -> None:
    op.drop_index("ix_review_event_attack_item_id", "review_event")
    op.drop_index("ix_review_event_attack_set_id", "review_event")
    op.drop_table("review_event")
