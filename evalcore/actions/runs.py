"""Run and job actions: create a run of any kind, cancel, resume, retry, delete, the
judge passes and variants, the demo. See `evalcore.actions`."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping, Optional

from evalcore.actions._core import ModelsPath, _check, _record
from evalcore.auth.identity import Actor
from evalcore.kinds import get_kind
from evalcore.runner.start import (check_resumable, resume_run as _resume, retry_failed as _retry,
                                   set_budget as _set_budget, store_run)
from evalcore.store.db import Bind, transaction
from evalcore.store.jobs import requeue_job as _requeue
from evalcore.store.queries import delete_run as _delete

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine



def create_run(actor: Actor, engine: "Engine", kind: str, params: Mapping[str, Any],
               models_path: ModelsPath, *, submit_key: Optional[str] = None) -> int:
    """A queued run of `kind` from the page form's / CLI flags' `params` (the kind's one
    spec builder, `EvalKind.build`), for evaluators and above; once per `submit_key`. Any
    worker executes it (the CLI claims it in the foreground itself). The one way to start
    a run: pages, the CLI, schedules and the package face all come here."""
    _check(engine, actor, "run", "create_run")
    build = get_kind(kind).build

    spec, item_ids = build(engine, params)
    # the run, its items, its job, its audit event and the submission key: one transaction
    return store_run(engine, spec, models_path, item_ids=item_ids, actor=actor,
                     submit_key=submit_key)


def cancel_run(actor: Actor, engine: "Engine", run_id: int) -> None:
    """`runner.start.cancel_run`, for evaluators and above."""
    from evalcore.runner.start import cancel_run as _cancel

    _check(engine, actor, "run", "cancel_run", run_id)
    with transaction(engine) as conn:
        _cancel(conn, run_id)
        _record(conn, actor, "run.cancel", "run", run_id)


def resume_run(actor: Actor, engine: "Engine", run_id: int, *, force: bool = False,
               queue: bool = True) -> None:
    """Check that `run_id` may be resumed and (with `queue`) put it back in the queue for
    a worker; the CLI passes queue=False and claims it in the foreground itself."""
    _check(engine, actor, "run", "resume_run", run_id)
    with transaction(engine) as conn:
        check_resumable(conn, run_id, force=force)
        if queue:
            _resume(conn, run_id)
        _record(conn, actor, "run.resume", "run", run_id, force=force or None)


def set_budget(actor: Actor, engine: "Engine", run_id: int, budget: Optional[float]) -> None:
    """`runner.start.set_budget` (a run's spending limit, e.g. raised before resuming a
    run that stopped at it), for evaluators and above: it lets the run spend more."""
    _check(engine, actor, "run", "set_budget", run_id)
    with transaction(engine) as conn:
        _set_budget(conn, run_id, budget)
        _record(conn, actor, "run.set_budget", "run", run_id, budget=budget)


def retry_failed(actor: Actor, engine: "Engine", run_id: int) -> tuple[int, int]:
    """`runner.start.retry_failed` (paid calls sent again), for evaluators and above."""
    _check(engine, actor, "run", "retry_failed", run_id)
    with transaction(engine) as conn:
        moved, job_id = _retry(conn, run_id)
        _record(conn, actor, "run.retry_failed", "run", run_id, calls=moved)
    return moved, job_id


def delete_run(actor: Actor, engine: Bind, run_id: int) -> Any:
    """`store.queries.delete_run` (the run, its calls and jobs), for admins."""
    _check(engine, actor, "delete", "delete_run", run_id)
    with transaction(engine) as conn:
        run = _delete(conn, run_id)
        _record(conn, actor, "run.delete", "run", run_id, kind=run.kind, model=run.model)
    return run


def queue_rejudge(actor: Actor, engine: "Engine", run_id: int, judge: str,
                  models_path: ModelsPath, **kwargs: Any) -> int:
    """`runner.rejudge.create_rejudge_job` (paid judge calls), for evaluators and above."""
    from evalcore.runner.rejudge import create_rejudge_job

    _check(engine, actor, "run", "rejudge", run_id)
    kwargs["created_by"] = actor.attribution(kwargs.get("created_by"))
    with transaction(engine) as conn:
        job_id = create_rejudge_job(conn, run_id, judge, models_path=models_path, **kwargs)
        _record(conn, actor, "run.rejudge", "run", run_id, judge=judge, job=job_id)
    return job_id


def queue_meaning_judge(actor: Actor, engine: "Engine", run_id: int, judge: str,
                        models_path: ModelsPath, created_by: str | None = None) -> int:
    """`runner.meaning_judge.create_meaning_job` (paid judge calls: a judge model says
    which open answers mean the same), for evaluators and above, like re-judging."""
    _check(engine, actor, "run", "meaning_judge", run_id)
    from evalcore.runner.meaning_judge import create_meaning_job  # off a run's start-up

    with transaction(engine) as conn:
        job_id = create_meaning_job(engine, run_id, judge, models_path=models_path,
                                    created_by=actor.attribution(created_by), into=conn)
        _record(conn, actor, "run.meaning_judge", "run", run_id, judge=judge, job=job_id)
    return job_id


def queue_variants(actor: Actor, engine: "Engine", run_id: int, *,
                   option_order: str | None, templates: list[dict[str, Any]],
                   seed: int = 0, created_by: str | None = None) -> int:
    """`runner.variants.create_variants_job` (paid calls of the run's model: its items
    under other option orders and templates), for evaluators and above."""
    _check(engine, actor, "run", "variants", run_id)
    from evalcore.runner.variants import create_variants_job  # off a run's start-up

    with transaction(engine) as conn:
        job_id = create_variants_job(engine, run_id, option_order=option_order,
                                     templates=templates, seed=seed,
                                     created_by=actor.attribution(created_by), into=conn)
        _record(conn, actor, "run.variants", "run", run_id, job=job_id,
                option_order=option_order, templates=[t["name"] for t in templates])
    return job_id


def queue_judge_analysis(actor: Actor, engine: "Engine", run_id: int, judge: str,
                         models_path: ModelsPath, **kwargs: Any) -> int:
    """`runner.judge_analysis.create_judge_analysis_job` (paid judge calls), for
    evaluators and above."""
    from evalcore.runner.judge_analysis import create_judge_analysis_job

    _check(engine, actor, "run", "judge_analysis", run_id)
    kwargs["created_by"] = actor.attribution(kwargs.get("created_by"))
    with transaction(engine) as conn:
        job_id = create_judge_analysis_job(conn, run_id, judge, models_path=models_path,
                                           **kwargs)
        _record(conn, actor, "run.judge_analysis", "run", run_id, judge=judge, job=job_id)
    return job_id


def cancel_job(actor: Actor, engine: "Engine", job_id: int) -> bool:
    """`store.jobs.cancel_job`, for evaluators and above."""
    from evalcore.store.jobs import cancel_job as _cancel

    _check(engine, actor, "run", "cancel_job", job_id)
    with transaction(engine) as conn:
        done = _cancel(conn, job_id)
        _record(conn, actor, "job.cancel", "job", job_id)
    return done


def requeue_job(actor: Actor, engine: "Engine", job_id: int) -> None:
    """`store.jobs.requeue_job`, for evaluators and above."""
    _check(engine, actor, "run", "requeue_job", job_id)
    with transaction(engine) as conn:
        _requeue(conn, job_id)
        _record(conn, actor, "job.requeue", "job", job_id)


def start_demo(actor: Actor, engine: "Engine", models_path: ModelsPath) -> int:
    """`demo.start_demo` (imports the sample, queues a local run), for evaluators and up."""
    from evalcore.demo import DEMO_KIND, start_demo as _demo

    _check(engine, actor, "run", "start_demo")
    with transaction(engine) as conn:
        run_id = _demo(conn, models_path, created_by=actor.attribution())
        _record(conn, actor, "run.start", "run", run_id, kind=DEMO_KIND, demo=True)
    return run_id
