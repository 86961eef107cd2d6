"""The one door pages and the CLI go through, one module per concept.

A page or a command acts through these modules (the checked actions of
`evalcore.actions`: permission, audit, one transaction) and reads through them (the
store's and the runner's named reads), and imports nothing from `evalcore.store` or
`evalcore.runner` itself (tests/test_architecture.py): the engine's inside can change
without touching a page. Each module only re-exports; evaluation logic stays where it is.

    runs       start, cancel, resume, delete a run; read runs and their progress
    jobs       the job queue: read jobs, cancel, requeue, execute one here
    workers    the embedded worker, worker processes and their heartbeats
    datasets   import, delete; a dataset's items
    attacks    attack sets: generate, import, review
    judging    judge passes (re-judge, meaning, judge analysis): costs and reliability
    variants   option orders and templates of a finished run
    baselines  a dataset and model's baseline run
    reviews    shared review queues
    users      the team: read permission, users, roles
    schedules  runs that repeat: intervals and reads
    monitoring schedules and baselines changed, test alerts
    models     the model registry
    database   the engine of the configured database

The submodules are imported by name (`from evalcore.service import runs`), so a command
loads only its own part.
"""
