"""The names callers used before the store was split by concept, kept importable:
a run's row (`store.runs`), its calls (`store.calls`), its items (`store.run_items`) and
secret redaction (`store.redaction`). New code imports those modules.
"""
from __future__ import annotations

from evalcore.store.calls import (
    answer_outcome,
    archive_failed_calls,
    count_calls,
    done_units,
    flush_run,
    iter_call_rows,
    iter_calls,
    record_calls,
    record_calls_fenced,
    run_calls,
    unjudged_answers,
)
from evalcore.store.redaction import redact_secrets
from evalcore.store.run_items import add_run_items
from evalcore.store.runs import (
    FINISHED,
    create_run,
    delete_run,
    get_run,
    list_runs,
    progress,
    recount_progress,
    request_cancel,
    update_run,
)

__all__ = ["FINISHED", "add_run_items", "answer_outcome", "archive_failed_calls",
           "count_calls", "create_run", "delete_run", "done_units", "flush_run",
           "get_run", "iter_call_rows", "iter_calls", "list_runs", "progress",
           "record_calls", "record_calls_fenced", "recount_progress", "redact_secrets",
           "request_cancel", "run_calls", "unjudged_answers", "update_run"]
