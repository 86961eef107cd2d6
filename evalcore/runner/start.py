"""Create, start, resume and cancel runs: the functions the pages and the CLI share."""
from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Optional

from sqlalchemy.engine import Engine

from evalcore.errors import RunError
from evalcore.runner.plan import RunSpec
from evalcore.runner.run import RunProgress, execute_run, model_snapshot

STALE_AFTER_S = 30.0
"""A 'running' run whose heartbeat is older than this belongs to a dead process."""


def create_run(engine: Engine, spec: RunSpec, models_path: Path, *,
               item_ids: Optional[list[int]] = None) -> int:
    """Validate `spec`, store a queued run with a snapshot of its items and models, return its id.

    The snapshot makes a run reproducible and resumable even if the dataset list or
    models.toml changes later; it holds env var names, never API keys. `item_ids` lets
    a kind of run choose its items across datasets (robustness: clean + attacked);
    by default they are the dataset's items after `spec.limit` and `spec.item_ids`.
    """
    from evalcore.dataset import get_dataset
    from evalcore.providers.registry import get_model
    from evalcore.store import queries

    dataset = get_dataset(engine, spec.dataset)
    models = {spec.model: get_model(models_path, spec.model)}
    if spec.judge != "rules":
        models[spec.judge] = get_model(models_path, spec.judge)
    if item_ids is not None:
        item_ids = list(item_ids)
    else:
        item_ids = queries.dataset_item_ids(engine, dataset.id, limit=spec.limit)
    if spec.item_ids is not None:
        wanted = set(spec.item_ids)
        item_ids = [i for i in item_ids if i in wanted]
    if not item_ids:
        raise RunError(f"dataset {dataset.name!r} has no items to evaluate "
                       f"(limit={spec.limit}, item_ids={spec.item_ids}); pick other items")
    config = {"spec": spec.model_dump(), "item_ids": item_ids,
              "models": {name: model_snapshot(cfg) for name, cfg in models.items()}}
    run = queries.create_run(engine, kind=spec.kind, name=spec.name, dataset_id=dataset.id,
                             model=spec.model, judge=spec.judge, rounds=spec.rounds,
                             config=config, created_by=spec.created_by,
                             total=len(item_ids) * spec.rounds)
    return int(run.id)


def start_run(engine: Engine, spec: RunSpec, models_path: Path, *,
              item_ids: Optional[list[int]] = None) -> int:
    """Create a run and execute it on the background loop; returns at once with its id."""
    from evalcore.runner.background import get_runner

    run_id = create_run(engine, spec, models_path, item_ids=item_ids)
    get_runner().submit(engine, run_id)
    return run_id


def run_in_foreground(engine: Engine, run_id: int,
                      on_progress: Optional[Callable[[RunProgress], None]] = None) -> str:
    """Execute `run_id` on a fresh loop in this thread (the CLI); returns the final status."""
    from evalcore.providers.client import run_closing_clients

    return run_closing_clients(execute_run(engine, run_id, on_progress=on_progress))


def is_stale(run: Any, now: Optional[datetime] = None) -> bool:
    """Whether a queued or running run has shown no sign of life (heartbeat, else start,
    else creation) for STALE_AFTER_S: the process that had it died, so it can be resumed."""
    if run.status not in ("queued", "running"):
        return False
    last = run.heartbeat_at or run.started_at or run.created_at
    if last.tzinfo is None:
        last = last.replace(tzinfo=timezone.utc)
    now = now or datetime.now(timezone.utc)
    return (now - last).total_seconds() > STALE_AFTER_S


def check_resumable(engine: Engine, run_id: int, *, force: bool = False) -> None:
    """Refuse to resume a finished run, or one that another live process is executing."""
    from evalcore.store import queries

    run = queries.get_run(engine, run_id)
    if run.status == "done":
        raise RunError(f"run {run_id} is already done; nothing to resume")
    if run.status == "running" and not is_stale(run) and not force:
        raise RunError(f"run {run_id} is running in another process (last sign of life "
                       f"under {STALE_AFTER_S:.0f} s ago); wait {STALE_AFTER_S:.0f} s after that "
                       f"process died, or pass --force")


def cancel_run(engine: Engine, run_id: int) -> None:
    """Ask a run to stop; whichever process executes it stops after its calls in flight."""
    from evalcore.store import queries

    queries.request_cancel(engine, run_id)
