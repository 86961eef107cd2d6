"""call.extracted: what the rules scorer read from an answer (for answer consistency).

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-21
"""
from __future__ import annotations

from typing import Sequence, Union

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: Union[str, Sequence[str], None] = "0002"
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None


def upgrade() -> None:
    with op.batch_alter_table("call") as batch:
        batch.add_column(sa.Column("extracted", sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("call") as batch:
        batch.drop_column("extracted")
