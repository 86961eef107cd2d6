"""The store: one database (SQLite by default, or PostgreSQL) that is the truth about
datasets, runs and every model call. `tables` is the schema, `db` the engine and
migrations, `queries` the reads and writes everyone shares. `transaction(engine)` yields
a Connection that every store function takes in place of the engine: the steps of one
action then commit together, once.
Beside it, a module of named queries per use case (run_items, run_reads, run_browse,
datasets, attack_sets, reviews, people, model_entries).

Importing this package imports SQLAlchemy; the CLI imports it inside its handlers.
"""
from evalcore.store.db import (
    Bind,
    current_revision,
    dispose_engines,
    get_engine,
    init_db,
    make_engine,
    migrate,
    reader,
    reading,
    session_scope,
    transaction,
)
from evalcore.store.queries import (
    add_progress,
    call_stats,
    count_calls,
    create_run,
    done_units,
    get_run,
    iter_call_rows,
    iter_calls,
    list_runs,
    progress,
    record_calls,
    redact_secrets,
    request_cancel,
    run_calls,
    unjudged_answers,
    update_run,
)
from evalcore.store.run_items import dataset_item_ids, run_questions
from evalcore.store.tables import Call, Dataset, Item, Run

__all__ = [
    "Bind", "Call", "Dataset", "Item", "Run",
    "add_progress", "call_stats", "count_calls", "create_run",
    "current_revision", "dataset_item_ids", "dispose_engines", "done_units", "get_engine",
    "get_run", "init_db", "iter_call_rows", "iter_calls", "list_runs",
    "make_engine", "migrate", "progress", "reader", "record_calls",
    "redact_secrets", "request_cancel", "run_calls", "run_questions", "session_scope",
    "transaction", "reading", "unjudged_answers", "update_run",
]
