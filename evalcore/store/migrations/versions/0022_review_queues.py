"""Review queues a team shares: review_queue (its source, sample, guidelines, double-review
share, reservation length), review_queue_item (one per item, with its reservation),
review_decision (one per reviewer per item) and review_adjudication (the final verdict).

Revision ID: 0022
Revises: 0021
Create Date: 2026-12-06
"""
from __future__ import annotations

from typing import Sequence, Union

import sqlalchemy as sa
from alembic import op

revision: str = "0022"
down_revision: Union[str, Sequence[str], None] = "0021"
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None

AUTO = {"sqlite_autoincrement": True}


def _when(name: str, nullable: bool = False) -> sa.Column:
    return sa.Column(name, sa.DateTime(timezone=True), nullable=nullable)


def _ref(name: str, target: str) -> sa.Column:
    return sa.Column(name, sa.Integer(), sa.ForeignKey(target), nullable=False)


def upgrade() -> None:
    op.create_table(
        "review_queue",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(), nullable=False),
        sa.Column("attack_set_id", sa.Integer(), nullable=True),
        sa.Column("run_id", sa.Integer(), nullable=True),
        sa.Column("items", sa.String(), nullable=False),
        sa.Column("sample", sa.Integer(), nullable=True),
        sa.Column("seed", sa.Integer(), nullable=False),
        sa.Column("guidelines", sa.Text(), nullable=False),
        sa.Column("double_share", sa.Float(), nullable=False),
        sa.Column("reserve_s", sa.Float(), nullable=False),
        sa.Column("item_count", sa.Integer(), nullable=False),
        sa.Column("created_by", sa.String(), nullable=False),
        _when("created_at"),
        sa.PrimaryKeyConstraint("id"), **AUTO)
    op.create_index("ix_review_queue_attack_set_id", "review_queue", ["attack_set_id"])
    op.create_index("ix_review_queue_run_id", "review_queue", ["run_id"])
    op.create_table(
        "review_queue_item",
        sa.Column("id", sa.Integer(), nullable=False),
        _ref("queue_id", "review_queue.id"),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("attack_item_id", sa.Integer(), nullable=True),
        sa.Column("call_id", sa.Integer(), nullable=True),
        sa.Column("needed", sa.Integer(), nullable=False),
        sa.Column("holder", sa.String(), nullable=False),
        _when("held_until", nullable=True),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("queue_id", "position", name="uq_review_queue_position"), **AUTO)
    op.create_index("ix_review_queue_item_queue_id", "review_queue_item", ["queue_id"])
    op.create_table(
        "review_decision",
        sa.Column("id", sa.Integer(), nullable=False),
        _ref("queue_id", "review_queue.id"),
        _ref("queue_item_id", "review_queue_item.id"),
        sa.Column("reviewer", sa.String(), nullable=False),
        sa.Column("verdict", sa.String(), nullable=False),
        sa.Column("question", sa.Text(), nullable=True),
        sa.Column("options", sa.JSON(), nullable=False),
        _when("at"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("queue_item_id", "reviewer", name="uq_review_decision"), **AUTO)
    op.create_index("ix_review_decision_queue_id", "review_decision", ["queue_id"])
    op.create_index("ix_review_decision_queue_item_id", "review_decision", ["queue_item_id"])
    op.create_table(
        "review_adjudication",
        sa.Column("id", sa.Integer(), nullable=False),
        _ref("queue_id", "review_queue.id"),
        _ref("queue_item_id", "review_queue_item.id"),
        sa.Column("verdict", sa.String(), nullable=False),
        sa.Column("adjudicator", sa.String(), nullable=False),
        sa.Column("note", sa.String(), nullable=False),
        _when("at"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("queue_item_id"), **AUTO)
    op.create_index("ix_review_adjudication_queue_id", "review_adjudication", ["queue_id"])


def downgrade() -> None:
    for table in ("review_adjudication", "review_decision", "review_queue_item", "review_queue"):
        op.drop_table(table)
