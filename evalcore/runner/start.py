"""Store, resume and cancel runs, and execute one here: the steps under the run actions
(`evalcore.actions.runs`, reached through `evalcore.service.runs`)."""
from __future__ import annotations

import asyncio
import signal
import threading
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Optional

import msgspec
from sqlalchemy.engine import Connection, Engine

from evalcore.auth import audit
from evalcore.dataset import get_dataset
from evalcore.errors import RunError
from evalcore.prompt import render_prompt
from evalcore.providers.client import run_closing_clients
from evalcore.providers.registry import get_model
from evalcore.runner.jobs import execute_job
import evalcore.runner.job_types  # noqa: F401 - registers the handlers
from evalcore.runner.plan import RunSpec, run_spec
from evalcore.runner.run import RunProgress, model_snapshot
from evalcore.runner.worker import worker_id
from evalcore.scorers.readiness import require_references
from evalcore.store import jobs, queries, run_items
from evalcore.store.db import Bind, transaction
from evalcore.store.jobs import lease_seconds
from evalcore.store.submissions import once

if TYPE_CHECKING:
    from evalcore.auth.identity import Actor


def stale_after_s() -> float:
    """A queued or running run with no sign of life for two job leases has no worker: none
    is running, or its worker died and none has taken it over yet."""
    return 2 * lease_seconds()


def store_run(engine: Bind, spec: RunSpec, models_path: Path, *,
              item_ids: Optional[list[int]] = None, actor: Optional["Actor"] = None,
              submit_key: Optional[str] = None,
              audit_detail: Optional[dict[str, Any]] = None) -> int:
    """Validate `spec`, store a queued run with a snapshot of its items and models, return its id.

    The step under the one way to start a run, `service.runs.create_run` (the checked
    action: permission, audit); nothing but that action and the demo calls it.

    The snapshot makes a run reproducible and resumable even if the dataset list or
    models.toml changes later; it holds env var names, never API keys. `item_ids` lets
    a kind of run choose its items across datasets (robustness: clean + attacked);
    by default they are the dataset's items after `spec.limit` and `spec.item_ids`.

    The run, its items, its job, the `run.start` audit event of `actor` (who is also the
    run's creator) and the `submit_key` (`store.submissions.once`: the same key returns
    the first run) are one transaction: a process dying half-way stores none of them.
    """
    # checked again here, the one door to the database: a spec built in code with the
    # plain constructor (which checks no ranges) is refused like one from a form
    spec = run_spec(msgspec.structs.asdict(spec))
    if actor is not None:
        spec = msgspec.structs.replace(spec, created_by=actor.attribution(spec.created_by))

    def make(conn: Connection) -> int:
        run_id = _insert_run(conn, spec, models_path, item_ids)
        if actor is not None:
            detail = {"kind": spec.kind, **(audit_detail or {})}
            audit.record(conn, actor, "run.start", "run", run_id,
                         {k: v for k, v in detail.items() if v is not None})
        return run_id

    return once(engine, submit_key, "run", make)


def _insert_run(conn: Connection, spec: RunSpec, models_path: Path,
                item_ids: Optional[list[int]]) -> int:
    """The steps of `store_run`, in the caller's transaction."""
    dataset = get_dataset(conn, spec.dataset)
    models = {spec.model: get_model(models_path, spec.model)}
    if spec.judge != "rules":
        models[spec.judge] = get_model(models_path, spec.judge)
    if item_ids is not None:
        item_ids = list(item_ids)
    else:
        item_ids = run_items.dataset_item_ids(conn, dataset.id, limit=spec.limit)
    if spec.item_ids is not None:
        wanted = set(spec.item_ids)
        item_ids = [i for i in item_ids if i in wanted]
    if not item_ids:
        raise RunError(f"dataset {dataset.name!r} has no items to evaluate "
                       f"(limit={spec.limit}, item_ids={spec.item_ids}); pick other items")
    config = {"spec": msgspec.structs.asdict(spec),
              "models": {name: model_snapshot(cfg) for name, cfg in models.items()}}
    prompts = _checked_prompts(conn, item_ids, spec, dataset.name)
    run = queries.create_run(conn, kind=spec.kind, name=spec.name, dataset_id=dataset.id,
                             model=spec.model, judge=spec.judge, rounds=spec.rounds,
                             config=config, created_by=spec.created_by,
                             total=len(item_ids) * spec.rounds)
    queries.add_run_items(conn, int(run.id), list(zip(item_ids, prompts)))
    jobs.create_job(conn, "run", run_id=int(run.id), label=_label(run),
                    created_by=spec.created_by)
    return int(run.id)


def _checked_prompts(engine: Bind, item_ids: list[int], spec: RunSpec,
                     dataset: str) -> list[str]:
    """The prompt of each item as the run will send it, after checking the items can be
    scored (a rules-judged run needs reference answers); a bad template or a missing
    reference fails here, before anything is stored."""
    questions = run_items.questions_by_id(engine, item_ids, what="the run's items")
    require_references(questions.values(), dataset=dataset, judge=spec.judge, kind=spec.kind)
    return [render_prompt(questions[i], spec.template, style=spec.prompt_style)
            for i in item_ids]


def run_in_foreground(engine: Engine, run_id: int,
                      on_progress: Optional[Callable[[RunProgress], None]] = None, *,
                      force: bool = False) -> str:
    """Claim the run's job for this process and execute it here (the CLI); returns the
    run's final status, or 'queued' if the process was told to stop (SIGTERM) and gave
    the run back to the queue. A run that another live worker holds is refused unless
    `force` (which takes it over: the other worker's writes are fenced off)."""
    job_id = _claimable_job(engine, run_id, force=force)
    run_job_here(engine, job_id, on_progress=on_progress)

    return queries.get_run(engine, run_id).status


def run_job_here(engine: Engine, job_id: int,
                 on_progress: Optional[Callable[[Any], None]] = None) -> str:
    """Claim job `job_id` and execute it in this process on a fresh loop; returns the
    job's end ('done', 'failed', 'cancelled', 'released' after SIGTERM, 'lost').

    SIGTERM releases the job (another worker continues it at once); Ctrl-C cancels it.
    """
    owner = worker_id("cli")
    job = jobs.claim_job(engine, owner, job_id=job_id)
    if job is None:
        raise RunError(f"job {job_id} cannot be claimed now: another worker holds it or it "
                       "has finished; see `python -m evalcore jobs list`")
    return run_closing_clients(_execute_with_signals(engine, job, owner, on_progress))


async def _execute_with_signals(engine: Engine, job: Any, owner: str,
                                on_progress: Optional[Callable[[Any], None]]) -> str:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    installed = []
    if threading.current_thread() is threading.main_thread():
        def cancel() -> None:
            jobs.cancel_job(engine, int(job.id))  # the run's state is its job's

        for sig, action in ((signal.SIGTERM, stop.set), (signal.SIGINT, cancel)):
            loop.add_signal_handler(sig, action)
            installed.append(sig)
    try:
        status = await execute_job(engine, job, owner, stop=stop, on_progress=on_progress)
    finally:
        for sig in installed:
            loop.remove_signal_handler(sig)
    if status == "released" and stop.is_set():
        raise Released(int(job.id))
    if status == "released":  # the handler was stopped by a lost database (exit code 2)
        raise RunError(f"the database could not be reached while job {job.id} ran; it was "
                       "given back to the queue: a worker continues it, or `python -m "
                       "evalcore runs resume` once the database is back")
    return status


class Released(RunError):
    """This process stopped (SIGTERM) and gave its job back to the queue."""

    exit_code = 143

    def __init__(self, job_id: int) -> None:
        super().__init__(f"stopped by SIGTERM: job {job_id} was released; a worker "
                         "continues it (or `python -m evalcore runs resume`)")
        self.job_id = job_id


def _claimable_job(engine: Bind, run_id: int, *, force: bool) -> int:
    """The run's job, made claimable: a finished one requeued, a live one refused (or,
    with `force`, its lease ended so it can be taken over)."""
    run = queries.get_run(engine, run_id)
    if run.status == "done":
        raise RunError(f"run {run_id} is already done; nothing to resume")
    job = jobs.run_job(engine, run_id)
    if job is None:  # a run from before the job queue
        return jobs.create_job(engine, "run", run_id=run_id, label=_label(run),
                               created_by=run.created_by)
    if jobs.lease_alive(job):
        if not force:
            raise RunError(f"run {run_id} is running in another process ({job.owner}, its "
                           f"lease is renewed every few seconds); wait for it, cancel it "
                           f"(`runs cancel {run_id}`), or pass --force to take it over")
        jobs.expire_lease(engine, int(job.id))
    elif job.status != "queued" or job.attempts >= job.max_attempts:  # ended, or stalled
        jobs.requeue_job(engine, int(job.id))
    return int(job.id)


def resume_run(engine: Bind, run_id: int) -> int:
    """Queue a cancelled, failed or stalled run again (a worker finishes it; stored calls
    are never sent again); returns its job id. Refused while a live worker holds it."""
    with transaction(engine) as conn:
        return _claimable_job(conn, run_id, force=False)


def retry_failed(engine: Bind, run_id: int) -> tuple[int, int]:
    """Send a finished run's failed calls again: they are kept under a new stage name
    (their record stays), the run is queued, and only they are sent. Returns (calls set
    aside, job id). One transaction: a crash leaves the run as it was."""
    with transaction(engine) as conn:
        run = queries.get_run(conn, run_id)
        job = jobs.run_job(conn, run_id)
        if run.status not in queries.FINISHED or (job is not None and jobs.lease_alive(job)):
            raise RunError(f"run {run_id} is {run.status}; retry its failed calls once it "
                           "has ended (or cancel it first)")
        moved = queries.archive_failed_calls(conn, run_id)
        queries.recount_progress(conn, run_id, judged=run.judge != "rules")
        if job is None:
            job_id = jobs.create_job(conn, "run", run_id=run_id, label=_label(run),
                                     created_by=run.created_by)
        else:
            jobs.requeue_job(conn, int(job.id))
            job_id = int(job.id)
    return moved, job_id


def _label(run: Any) -> str:
    return f"{run.kind} run {run.id}: {run.model}"


def is_stale(run: Any, now: Optional[datetime] = None, *, workers_busy: bool = False) -> bool:
    """Whether a queued or running run has shown no sign of life (heartbeat, else start,
    else creation) for `stale_after_s()`: pages say that no worker is executing it.

    A queued run is not stale while workers are busy (`workers_busy`, from
    `store.jobs.busy_workers`): it waits its turn, and a worker is there to take it."""
    if run.status not in ("queued", "running"):
        return False
    if run.status == "queued" and workers_busy:
        return False
    last = run.heartbeat_at or run.started_at or run.created_at
    if last.tzinfo is None:
        last = last.replace(tzinfo=timezone.utc)
    now = now or datetime.now(timezone.utc)
    return (now - last).total_seconds() > stale_after_s()


def busy_text(engine: Engine, what: str = "it") -> Optional[str]:
    """'waiting: worker busy with N jobs; <what> starts when one is free', or None when no
    worker holds a job (`store.jobs.busy_workers`): the line of any queued job."""
    busy = jobs.busy_workers(engine)
    if not busy:
        return None
    held = sum(busy.values())
    who = "worker" if len(busy) == 1 else f"{len(busy)} workers"
    return (f"waiting: {who} busy with {held} job{'s' if held != 1 else ''}; {what} starts "
            "when one is free")


NO_WORKER = "queued (no worker)"
"""How `waiting_text` begins when no worker shows a sign of life (pages warn then)."""


def waiting_text(engine: Engine, run: Any, now: Optional[datetime] = None) -> Optional[str]:
    """Why a queued run has not started, in one line the pages and the CLI show; None for
    a run that is not queued. Busy workers (their leases' heartbeat in the database) mean
    it waits its turn; no sign of any worker for a while means none is running."""
    if run.status != "queued":
        return None
    busy = busy_text(engine, "this run")
    if busy:
        return busy + " (cancel or delete it meanwhile if it is not wanted)"
    if is_stale(run, now):
        return (f"{NO_WORKER}: no worker has taken this run for a while; is a worker "
                "running? Start one with `python -m evalcore worker`, or check that the "
                "app's embedded worker is on (EVALCORE_EMBEDDED_WORKER)")
    return "waiting for a worker: a free worker takes it within seconds"


def check_resumable(engine: Bind, run_id: int, *, force: bool = False) -> None:
    """Refuse to resume a finished run, or one that another live worker is executing."""
    run = queries.get_run(engine, run_id)
    if run.status == "done":
        raise RunError(f"run {run_id} is already done; nothing to resume")
    job = jobs.run_job(engine, run_id)
    if job is not None and jobs.lease_alive(job) and not force:
        raise RunError(f"run {run_id} is running in another process ({job.owner}); wait "
                       "for it, or pass --force to take it over")


def cancel_run(engine: Bind, run_id: int) -> None:
    """Ask a run to stop; whichever worker executes it stops after its calls in flight
    (a run still queued is cancelled at once)."""
    queries.request_cancel(engine, run_id)


def set_budget(bind: Bind, run_id: int, budget: Optional[float]) -> None:
    """Change a run's spending limit (kept in its spec), e.g. before resuming a run that
    stopped at its budget; on a Connection, in the caller's transaction (the action's, with
    its audit event)."""
    with transaction(bind) as conn:
        run = queries.get_run(conn, run_id)
        spec = run_spec({**run.config["spec"], "budget": budget})
        queries.update_run(conn, run_id,
                           config={**run.config, "spec": msgspec.structs.asdict(spec)})
