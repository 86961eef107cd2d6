"""Runs: the one way to start one (`create_run`, the checked action: permission, audit,
submission key, one transaction), the other run actions, and the reads pages and the CLI
show (a run, the list, progress, calls, why a queued run waits)."""
from __future__ import annotations

from evalcore.actions.runs import (
    cancel_run,
    create_run,
    delete_run,
    resume_run,
    retry_failed,
    set_budget,
    start_demo,
)
from evalcore.runner.start import NO_WORKER, busy_text, is_stale, run_in_foreground, waiting_text
from evalcore.store.queries import FINISHED, count_calls, get_run, iter_call_rows, list_runs
from evalcore.store.queries import progress as run_progress
from evalcore.store.run_reads import answer_error_counts

__all__ = ["FINISHED", "NO_WORKER", "answer_error_counts", "busy_text", "cancel_run",
           "count_calls", "create_run", "delete_run", "get_run", "is_stale", "iter_call_rows",
           "list_runs", "resume_run", "retry_failed", "run_in_foreground", "run_progress",
           "set_budget", "start_demo", "waiting_text"]
