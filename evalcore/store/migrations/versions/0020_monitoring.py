"""Continuous monitoring: schedule, schedule_run (one per due time), baseline (the stored
baseline of a dataset and model, with its history) and alert_delivery (one per event and
channel).

Revision ID: 0020
Revises: 0010
Create Date: 2026-11-26
"""
from __future__ import annotations

from typing import Sequence, Union

import sqlalchemy as sa
from alembic import op

revision: str = "0020"
down_revision: Union[str, Sequence[str], None] = "0010"
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None

AUTO = {"sqlite_autoincrement": True}


def _when(name: str, nullable: bool = False) -> sa.Column:
    return sa.Column(name, sa.DateTime(timezone=True), nullable=nullable)


def upgrade() -> None:
    op.create_table(
        "schedule",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(), nullable=False),
        sa.Column("params", sa.JSON(), nullable=False),
        sa.Column("every_s", sa.Integer(), nullable=True),
        sa.Column("cron", sa.String(), nullable=True),
        sa.Column("gate", sa.JSON(), nullable=False),
        sa.Column("channels", sa.JSON(), nullable=False),
        sa.Column("paused", sa.Boolean(), nullable=False),
        _when("next_due_at"),
        sa.Column("created_by", sa.String(), nullable=False),
        _when("created_at"),
        sa.PrimaryKeyConstraint("id"), **AUTO)
    op.create_table(
        "schedule_run",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("schedule_id", sa.Integer(), nullable=False),
        _when("due_at"),
        sa.Column("status", sa.String(), nullable=False),
        sa.Column("run_id", sa.Integer(), nullable=True),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("verdict", sa.String(), nullable=True),
        sa.Column("checks", sa.JSON(), nullable=False),
        sa.Column("baseline_id", sa.Integer(), nullable=True),
        _when("created_at"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("schedule_id", "due_at", name="uq_schedule_due"), **AUTO)
    op.create_index("ix_schedule_run_schedule_id", "schedule_run", ["schedule_id"])
    op.create_index("ix_schedule_run_run_id", "schedule_run", ["run_id"])
    op.create_table(
        "baseline",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("dataset_id", sa.Integer(), nullable=False),
        sa.Column("model", sa.String(), nullable=False),
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.Column("set_by", sa.String(), nullable=False),
        _when("set_at"),
        sa.PrimaryKeyConstraint("id"), **AUTO)
    op.create_index("ix_baseline_dataset_id", "baseline", ["dataset_id"])
    op.create_index("ix_baseline_model", "baseline", ["model"])
    op.create_table(
        "alert_delivery",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("event", sa.String(), nullable=False),
        sa.Column("channel", sa.String(), nullable=False),
        sa.Column("run_id", sa.Integer(), nullable=True),
        sa.Column("schedule_id", sa.Integer(), nullable=True),
        sa.Column("status", sa.String(), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        _when("created_at"),
        _when("sent_at", nullable=True),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("event", "channel", name="uq_alert_event_channel"), **AUTO)
    op.create_index("ix_alert_delivery_run_id", "alert_delivery", ["run_id"])
    op.create_index("ix_alert_delivery_schedule_id", "alert_delivery", ["schedule_id"])


def downgrade() -> None:
    for name in ("alert_delivery", "baseline", "schedule_run", "schedule"):
        op.drop_table(name)
