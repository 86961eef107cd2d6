"""The store: one database (SQLite by default, or PostgreSQL) that is the truth about
datasets, runs and every model call. `tables` is the schema (SQLModel, the one definition;
Core statements use each class's `__table__`), `db` the engine and migrations, `queries`
the reads and writes everyone shares. `transaction(engine)` yields a Connection that every store function takes in place of the engine: the steps of one
action then commit together, once.
Beside it, a module of named queries per use case (run_items, run_reads, run_browse,
datasets, attack_sets, reviews, people, model_entries).

Import the modules themselves (`from evalcore.store import queries`): this package
re-exports nothing, so importing one module loads only what that module needs.
"""
