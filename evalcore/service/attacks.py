"""Attack sets: generate, import, review, edit, delete (checked actions), and the job
that makes a set."""
from __future__ import annotations

from evalcore.actions.attacks import (
    approve_unflagged,
    delete_attack_set,
    edit_attack_item,
    queue_attack,
    queue_attack_import,
    set_review,
)
from evalcore.runner.attack import attack_set_job
from evalcore.store.jobs import attack_set_jobs

__all__ = ["approve_unflagged", "attack_set_job", "attack_set_jobs", "delete_attack_set",
           "edit_attack_item", "queue_attack", "queue_attack_import", "set_review"]
