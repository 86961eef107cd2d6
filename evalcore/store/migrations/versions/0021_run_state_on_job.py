"""A run's state has one owner, its newest run-kind job (`store/run_state.py`): copy onto
finished jobs what only the run row held before, so an upgraded database shows the same
status and reason as before (a budget cancel's reason, for one, lived on the run alone).

Revision ID: 0021
Revises: 0020
Create Date: 2026-11-27
"""
from __future__ import annotations

from typing import Sequence, Union

from alembic import op

revision: str = "0021"
down_revision: Union[str, Sequence[str], None] = "0020"
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None

_NEWEST_RUN_JOB = ("job.id = (SELECT max(j2.id) FROM job AS j2 "
                   "WHERE j2.run_id = job.run_id AND j2.kind = 'run')")
_FINISHED = "('done', 'failed', 'cancelled')"


def upgrade() -> None:
    # Pages read the run row until now: where a finished job and its run disagree, the
    # run's status and error are what users saw, so they become the job's.
    op.execute(f"""
        UPDATE job SET
            status = (SELECT run.status FROM run WHERE run.id = job.run_id),
            error = COALESCE((SELECT run.error FROM run WHERE run.id = job.run_id), job.error)
        WHERE job.kind = 'run' AND job.status IN {_FINISHED} AND {_NEWEST_RUN_JOB}
          AND EXISTS (SELECT 1 FROM run WHERE run.id = job.run_id
                      AND run.status IN {_FINISHED}
                      AND (run.status <> job.status
                           OR (run.error IS NOT NULL AND job.error IS NULL)))""")


def downgrade() -> None:
    """Nothing to undo: the run rows were left as they were."""
