"""Attack sets and attacked items with their review state.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-21
"""
from __future__ import annotations

from typing import Sequence, Union

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: Union[str, Sequence[str], None] = "0001"
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None

TIMESTAMP = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "attack_set",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(), nullable=False),
        sa.Column("source_dataset_id", sa.Integer(), nullable=False),
        sa.Column("dataset_id", sa.Integer(), nullable=True),
        sa.Column("level", sa.String(), nullable=False),
        sa.Column("origin", sa.String(), nullable=False),
        sa.Column("seed", sa.Integer(), nullable=True),
        sa.Column("params", sa.JSON(), nullable=False),
        sa.Column("created_by", sa.String(), nullable=False),
        sa.Column("created_at", TIMESTAMP, nullable=False),
        sa.Column("item_count", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(["source_dataset_id"], ["dataset.id"]),
        sa.ForeignKeyConstraint(["dataset_id"], ["dataset.id"]),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_attack_set_name", "attack_set", ["name"], unique=True)
    op.create_index("ix_attack_set_source_dataset_id", "attack_set", ["source_dataset_id"])

    op.create_table(
        "attack_item",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("attack_set_id", sa.Integer(), nullable=False),
        sa.Column("source_item_id", sa.Integer(), nullable=False),
        sa.Column("attacked_item_id", sa.Integer(), nullable=True),
        sa.Column("original", sa.Text(), nullable=False),
        sa.Column("attacked", sa.Text(), nullable=False),
        sa.Column("attack_num", sa.Integer(), nullable=False),
        sa.Column("pairs", sa.JSON(), nullable=False),
        sa.Column("similarity", sa.Float(), nullable=True),
        sa.Column("flags", sa.JSON(), nullable=False),
        sa.Column("status", sa.String(), nullable=False),
        sa.Column("reviewer", sa.String(), nullable=False),
        sa.Column("reviewed_at", TIMESTAMP, nullable=True),
        sa.Column("edited", sa.Boolean(), nullable=False),
        sa.Column("note", sa.String(), nullable=False),
        sa.ForeignKeyConstraint(["attack_set_id"], ["attack_set.id"]),
        sa.ForeignKeyConstraint(["source_item_id"], ["item.id"]),
        sa.ForeignKeyConstraint(["attacked_item_id"], ["item.id"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("attack_set_id", "source_item_id", name="uq_attack_item_source"),
    )
    op.create_index("ix_attack_item_attack_set_id", "attack_item", ["attack_set_id"])
    op.create_index("ix_attack_item_source_item_id", "attack_item", ["source_item_id"])
    op.create_index("ix_attack_item_status", "attack_item", ["status"])


def downgrade() -> None:
    op.drop_table("attack_item")
    op.drop_table("attack_set")
