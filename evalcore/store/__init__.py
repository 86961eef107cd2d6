"""The store: one database (SQLite by default, or PostgreSQL) that is the truth about
datasets, runs and every model call, and the only code that writes to it.

`tables` and `monitor_tables` are the schema (SQLModel, the one definition; Core
statements use each class's `__table__`), `migrations` its history, `db` the engine and
`transaction`. Every store function takes `conn`: the Connection of an open
`transaction(engine)` (the steps of one action then commit together, once), or an Engine,
on which it opens a short transaction of its own.

One module per concept: `runs` (a run's row), `calls`, `run_items`, `run_state`,
`run_reads`, `run_browse`, `run_summary`, `jobs`, `workers`, `datasets` and
`dataset_writes`, `attack_sets` and `attack_set_writes`, `reviews`, review queues and
cards, `people`, `model_entries`, `model_share`, `schedules`, `baselines`, `alerts`, `uploads`,
`submissions`; `redaction` keeps secrets out of what is written. `queries` keeps the
names callers used before the split importable.

Import the modules themselves (`from evalcore.store import runs`): this package
re-exports nothing, so importing one module loads only what that module needs.
"""
