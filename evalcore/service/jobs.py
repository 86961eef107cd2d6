"""The job queue (runs, judge passes, attack generation): read jobs, cancel or requeue
one (checked actions), or claim and execute one in this process (the CLI's foreground)."""
from __future__ import annotations

from evalcore.actions.runs import cancel_job, requeue_job
from evalcore.runner.start import run_job_here
from evalcore.store.jobs import JOB_FINISHED, KINDS, get_job, lease_alive, list_jobs, run_job

__all__ = ["JOB_FINISHED", "KINDS", "cancel_job", "get_job", "lease_alive", "list_jobs",
           "requeue_job", "run_job", "run_job_here"]
