"""run_summary: a finished run's outcome counts and report figures, stored once, so reads of a run with a
million calls never count its calls again (`store/run_summary.py`).

Revision ID: 0023
Revises: 0022
Create Date: 2026-12-06
"""
from __future__ import annotations

from typing import Sequence, Union

import sqlalchemy as sa
from alembic import op

revision: str = "0023"
down_revision: Union[str, Sequence[str], None] = "0022"
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None


def upgrade() -> None:
    # no rows copied: each finished run's summary is counted at its next read
    op.create_table(
        "run_summary",
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(), nullable=False),
        sa.Column("state", sa.String(), nullable=False),
        sa.Column("data", sa.Text(), nullable=False),
        sa.ForeignKeyConstraint(["run_id"], ["run.id"]),
        sa.PrimaryKeyConstraint("run_id", "name"),
    )


def downgrade() -> None:
    op.drop_table("run_summary")
