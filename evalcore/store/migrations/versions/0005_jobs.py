"""job and model_budget: long work claimed by workers under leases; model concurrency
shared across workers. run_item: a run's questions in order with their rendered prompt,
moved out of run.config["item_ids"] (existing runs are copied over, prompts left empty).

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-24
"""
from __future__ import annotations

from typing import Sequence, Union

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: Union[str, Sequence[str], None] = "0004"
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None

TIMESTAMP = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "job",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(), nullable=False),
        sa.Column("status", sa.String(), nullable=False),
        sa.Column("run_id", sa.Integer(), nullable=True),
        sa.Column("attack_set_id", sa.Integer(), nullable=True),
        sa.Column("params", sa.JSON(), nullable=False),
        sa.Column("label", sa.String(), nullable=False),
        sa.Column("owner", sa.String(), nullable=False),
        sa.Column("token", sa.Integer(), nullable=False),
        sa.Column("lease_expires_at", TIMESTAMP, nullable=True),
        sa.Column("heartbeat_at", TIMESTAMP, nullable=True),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("max_attempts", sa.Integer(), nullable=False),
        sa.Column("done", sa.Integer(), nullable=False),
        sa.Column("total", sa.Integer(), nullable=False),
        sa.Column("cancel_requested", sa.Boolean(), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("result", sa.JSON(), nullable=False),
        sa.Column("created_by", sa.String(), nullable=False),
        sa.Column("created_at", TIMESTAMP, nullable=True),
        sa.Column("started_at", TIMESTAMP, nullable=True),
        sa.Column("finished_at", TIMESTAMP, nullable=True),
        sa.ForeignKeyConstraint(["run_id"], ["run.id"]),
        sa.ForeignKeyConstraint(["attack_set_id"], ["attack_set.id"]),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_job_kind", "job", ["kind"])
    op.create_index("ix_job_status", "job", ["status"])
    op.create_index("ix_job_run_id", "job", ["run_id"])
    op.create_index("ix_job_attack_set_id", "job", ["attack_set_id"])
    op.create_index("ix_job_lease_expires_at", "job", ["lease_expires_at"])
    op.create_table(
        "model_budget",
        sa.Column("model", sa.String(), nullable=False),
        sa.Column("holder", sa.String(), nullable=False),
        sa.Column("capacity", sa.Integer(), nullable=False),
        sa.Column("want", sa.Integer(), nullable=False),
        sa.Column("slots", sa.Integer(), nullable=False),
        sa.Column("expires_at", TIMESTAMP, nullable=False),
        sa.PrimaryKeyConstraint("model", "holder"),
    )


    op.create_table(
        "run_item",
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("item_id", sa.Integer(), nullable=False),
        sa.Column("prompt", sa.Text(), nullable=True),
        sa.ForeignKeyConstraint(["run_id"], ["run.id"]),
        sa.ForeignKeyConstraint(["item_id"], ["item.id"]),
        sa.PrimaryKeyConstraint("run_id", "position"),
        sa.UniqueConstraint("run_id", "item_id", name="uq_run_item"),
    )
    op.create_index("ix_run_item_item_id", "run_item", ["item_id"])
    _copy_item_lists()


def _copy_item_lists() -> None:
    """Existing runs: config["item_ids"] -> run_item rows (the list stays in the config)."""
    import json

    conn = op.get_bind()
    table = sa.table("run_item", sa.column("run_id"), sa.column("position"),
                     sa.column("item_id"), sa.column("prompt"))
    for run_id, config in conn.execute(sa.text("SELECT id, config FROM run")).all():
        if isinstance(config, str):
            config = json.loads(config)
        ids = list(dict.fromkeys((config or {}).get("item_ids") or []))
        if ids:
            conn.execute(table.insert(), [{"run_id": run_id, "position": n, "item_id": i,
                                           "prompt": None} for n, i in enumerate(ids)])


def downgrade() -> None:
    op.drop_index("ix_run_item_item_id", "run_item")
    op.drop_table("run_item")
    op.drop_table("model_budget")
    for name in ("lease_expires_at", "attack_set_id", "run_id", "status", "kind"):
        op.drop_index(f"ix_job_{name}", "job")
    op.drop_table("job")
