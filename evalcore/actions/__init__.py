"""Every state change, checked and recorded: the functions pages and the CLI call.

Each one takes the acting `Actor` first, refuses with `PermissionDenied` when the actor's
role is below what the change needs (see `evalcore.auth.roles.PERMISSIONS`), puts the
actor's identity where the change records a person (run `created_by`, reviewer,
attack-set creator) and appends an `audit_event`. The change and its audit event are one
transaction (`store.db.transaction`, whose Connection the wrapped functions are given in
place of the engine): one commit per action, so a process dying half-way through stores
all of it or nothing. A refusal is its own commit (the 'denied.*' event).

The start actions take a `submit_key` (the pages pass one per form submission): the same
key never creates a second run or job; the call returns the first one's id
(`store.submissions.once`). The CLI passes none: each command is one submission.
"""
from __future__ import annotations

from evalcore.actions._core import ModelsPath, _check, _once, _record
from evalcore.actions.datasets import (
    import_dataset,
    store_parsed,
    save_suite,
    delete_dataset,
    delete_dataset_and_runs,
)
from evalcore.actions.runs import (
    create_run,
    cancel_run,
    resume_run,
    set_budget,
    retry_failed,
    delete_run,
    queue_rejudge,
    queue_meaning_judge,
    queue_variants,
    queue_judge_analysis,
    cancel_job,
    requeue_job,
    start_demo,
)
from evalcore.actions.attacks import (
    queue_attack,
    queue_attack_import,
    delete_attack_set,
    set_review,
    edit_attack_item,
    approve_unflagged,
)
from evalcore.actions.review_queues import (
    create_review_queue,
    review_next,
    review_submit,
    review_skip,
    review_undo,
    review_adjudicate,
    review_stats,
)
from evalcore.actions.admin import (
    add_model,
    update_model,
    remove_model,
    import_models,
    test_model,
    require_read,
    start_worker,
    add_user,
    set_role,
)

__all__ = [
    "ModelsPath",
    "_check",
    "_once",
    "_record",
    "import_dataset",
    "store_parsed",
    "save_suite",
    "delete_dataset",
    "delete_dataset_and_runs",
    "create_run",
    "cancel_run",
    "resume_run",
    "set_budget",
    "retry_failed",
    "delete_run",
    "queue_rejudge",
    "queue_meaning_judge",
    "queue_variants",
    "queue_judge_analysis",
    "cancel_job",
    "requeue_job",
    "start_demo",
    "queue_attack",
    "queue_attack_import",
    "delete_attack_set",
    "set_review",
    "edit_attack_item",
    "approve_unflagged",
    "create_review_queue",
    "review_next",
    "review_submit",
    "review_skip",
    "review_undo",
    "review_adjudicate",
    "review_stats",
    "add_model",
    "update_model",
    "remove_model",
    "import_models",
    "test_model",
    "require_read",
    "start_worker",
    "add_user",
    "set_role",
]
