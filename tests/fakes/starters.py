"""Start a run of a kind the one way there is: `service.runs.create_run` (the checked
action) as the single local user, with the kind's own parameters as keywords."""
from __future__ import annotations

from typing import Any

from evalcore.auth.identity import local_actor
from evalcore.service.runs import create_run


def start(kind: str, engine: Any, *, models_path: Any, **params: Any) -> int:
    """The id of a queued run of `kind` built from `params` (the page form's / CLI flags'
    names, `EvalKind.build`)."""
    return create_run(local_actor(), engine, kind, params, models_path)
