"""Every state change, checked and recorded: the functions pages and the CLI call.

Each one takes the acting `Actor` first, refuses with `PermissionDenied` when the actor's
role is below what the change needs (see `evalcore.auth.roles.PERMISSIONS`), puts the
actor's identity where the change records a person (run `created_by`, reviewer,
attack-set creator) and appends an `audit_event` after it succeeded. The work itself is
done by the existing functions it wraps, unchanged, so a runner rewrite only has to keep
their signatures (or move these checks into itself).

The start actions take a `submit_key` (the pages pass one per form submission): the same
key never creates a second run or job; the call returns the first one's id
(`store.submissions.once`). The CLI passes none: each command is one submission.
"""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Optional, Union

from evalcore.auth import audit
from evalcore.auth.identity import Actor
from evalcore.auth.roles import PermissionDenied, require

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine

    from evalcore.providers.base import ModelConfig
    from evalcore.runner.plan import RunSpec

ModelsPath = Any  # a models.toml path or the database's model registry (evalcore.model_store)


def _record(engine: "Engine", actor: Actor, action: str, object_type: str, object_id: Any,
            **detail: Any) -> None:
    audit.record(engine, actor, action, object_type, object_id,
                 {k: v for k, v in detail.items() if v is not None})


def _check(engine: "Engine", actor: Actor, permission: str, action: str,
           object_id: Any = "") -> None:
    """`require`, and a refused attempt is kept in the audit log too ('denied.<action>')."""
    try:
        require(actor, permission)
    except PermissionDenied:
        _record(engine, actor, f"denied.{action}", "", object_id, permission=permission)
        raise


# ------------------------------------------------------------------ datasets


def _imported_by(engine: "Engine", actor: Actor, dataset: Any) -> Any:
    """Stamp the importer on the new dataset row (and the returned record)."""
    from sqlalchemy import update

    from evalcore.store.tables import Dataset

    who = actor.attribution()
    with engine.begin() as conn:
        conn.execute(update(Dataset).where(Dataset.id == dataset.id).values(created_by=who))
    dataset.created_by = who
    return dataset


def _import(actor: Actor, engine: "Engine", action: str, make: Callable[[], Any], *,
            suite: bool = False) -> Any:
    """Check the import permission, create the dataset with `make()`, stamp the importer
    on it and record the import (with its file, or as a generated suite)."""
    _check(engine, actor, "import", action)
    dataset = _imported_by(engine, actor, make())
    where = {"suite": True} if suite else {"file": dataset.source_file}
    _record(engine, actor, "dataset.import", "dataset", dataset.id, name=dataset.name,
            items=dataset.item_count, **where)
    return dataset


def import_dataset(actor: Actor, engine: "Engine", source: Any, **kwargs: Any) -> Any:
    """`evalcore.dataset.import_dataset`, for evaluators and above."""
    from evalcore.dataset import import_dataset as _import_file

    return _import(actor, engine, "import_dataset", lambda: _import_file(engine, source, **kwargs))


def store_parsed(actor: Actor, engine: "Engine", parsed: Any, **kwargs: Any) -> Any:
    """`evalcore.dataset.store_parsed` (the Datasets page's import), for evaluators and above."""
    from evalcore.dataset import store_parsed as _store

    return _import(actor, engine, "store_parsed", lambda: _store(engine, parsed, **kwargs))


def save_suite(actor: Actor, engine: "Engine", parsed: Any, name: Optional[str] = None,
               **kwargs: Any) -> Any:
    """`perturb.counterfactual.save_suite` (a generated fairness suite becomes a dataset),
    for evaluators and above."""
    from evalcore.perturb.counterfactual import save_suite as _save

    return _import(actor, engine, "save_suite", lambda: _save(engine, parsed, name, **kwargs),
                   suite=True)


def delete_dataset(actor: Actor, engine: "Engine", name_or_id: Union[str, int]) -> Any:
    """`evalcore.dataset.delete_dataset`, for admins."""
    from evalcore.dataset import delete_dataset as _delete

    _check(engine, actor, "delete", "delete_dataset", name_or_id)
    dataset = _delete(engine, name_or_id)
    _record(engine, actor, "dataset.delete", "dataset", dataset.id, name=dataset.name)
    return dataset


def delete_dataset_and_runs(actor: Actor, engine: "Engine", name_or_id: Union[str, int]
                            ) -> tuple[Any, list[int]]:
    """Delete the runs that use a dataset (each one as `delete_run`), then the dataset:
    the way out of "used by 3 runs", for admins. Returns (dataset, deleted run ids)."""
    from evalcore.dataset import dataset_users

    from evalcore.errors import DatasetError

    _check(engine, actor, "delete", "delete_dataset_and_runs", name_or_id)
    users = dataset_users(engine, name_or_id)
    if users["attack_sets"]:  # refuse before any run is gone
        shown = ", ".join(f"#{i} {n}" for i, n in users["attack_sets"][:10])
        raise DatasetError(f"dataset {name_or_id!r} has attack set(s) {shown}; delete them "
                           "first (Attacks page)")
    run_ids = users["runs"]
    for run_id in run_ids:
        delete_run(actor, engine, run_id)
    return delete_dataset(actor, engine, name_or_id), run_ids


# ------------------------------------------------------------------ runs


def _once(engine: "Engine", submit_key: Optional[str], object_type: str,
          make: Callable[[], int]) -> int:
    """`make()` once per submission key (`store.submissions.once`)."""
    from evalcore.store.submissions import once

    return once(engine, submit_key, object_type, make)


def _new_run(actor: Actor, engine: "Engine", make: Callable[..., int], *args: Any,
             **kwargs: Any) -> int:
    _check(engine, actor, "run", getattr(make, "__name__", "run"))
    submit_key = kwargs.pop("submit_key", None)
    kwargs["created_by"] = actor.attribution(kwargs.get("created_by"))

    def new() -> int:
        run_id = int(make(engine, *args, **kwargs))
        _record(engine, actor, "run.start", "run", run_id, kind=_run_kind(engine, run_id))
        return run_id

    return _once(engine, submit_key, "run", new)


def _run_kind(engine: "Engine", run_id: int) -> str:
    from evalcore.store import queries

    return str(queries.get_run(engine, run_id).kind)


def _with_creator(actor: Actor, spec: "RunSpec") -> "RunSpec":
    return spec.model_copy(update={"created_by": actor.attribution(spec.created_by)})


def create_run(actor: Actor, engine: "Engine", spec: "RunSpec", models_path: ModelsPath, *,
               item_ids: Optional[list[int]] = None) -> int:
    """`runner.start.create_run` (queued, the CLI then runs it), for evaluators and above."""
    from evalcore.runner.start import create_run as _create

    _check(engine, actor, "run", "create_run")
    run_id = _create(engine, _with_creator(actor, spec), models_path, item_ids=item_ids)
    _record(engine, actor, "run.start", "run", run_id, kind=spec.kind)
    return run_id


def start_run(actor: Actor, engine: "Engine", spec: "RunSpec", models_path: ModelsPath, *,
              item_ids: Optional[list[int]] = None, submit_key: Optional[str] = None) -> int:
    """`runner.start.start_run` (queued, executed in the background), for evaluators and up;
    once per `submit_key`."""
    from evalcore.runner.start import start_run as _start

    _check(engine, actor, "run", "start_run")

    def new() -> int:
        run_id = _start(engine, _with_creator(actor, spec), models_path, item_ids=item_ids)
        _record(engine, actor, "run.start", "run", run_id, kind=spec.kind)
        return run_id

    return _once(engine, submit_key, "run", new)


def create_robustness_run(actor: Actor, engine: "Engine", **kwargs: Any) -> int:
    """`runner.robustness.create_robustness_run`, for evaluators and above."""
    from evalcore.runner.robustness import create_robustness_run as _create

    return _new_run(actor, engine, _create, **kwargs)


def start_robustness(actor: Actor, engine: "Engine", **kwargs: Any) -> int:
    """`runner.robustness.start_robustness`, for evaluators and above; once per
    `submit_key`."""
    from evalcore.runner.robustness import start_robustness as _start

    return _new_run(actor, engine, _start, **kwargs)


def create_fairness_run(actor: Actor, engine: "Engine", **kwargs: Any) -> int:
    """`fairness.create_fairness_run`, for evaluators and above."""
    from evalcore.fairness import create_fairness_run as _create

    return _new_run(actor, engine, _create, **kwargs)


def start_fairness_run(actor: Actor, engine: "Engine", **kwargs: Any) -> int:
    """`fairness.start_fairness_run`, for evaluators and above; once per `submit_key`."""
    from evalcore.fairness import start_fairness_run as _start

    return _new_run(actor, engine, _start, **kwargs)


def cancel_run(actor: Actor, engine: "Engine", run_id: int) -> None:
    """`runner.start.cancel_run`, for evaluators and above."""
    from evalcore.runner.start import cancel_run as _cancel

    _check(engine, actor, "run", "cancel_run", run_id)
    _cancel(engine, run_id)
    _record(engine, actor, "run.cancel", "run", run_id)


def resume_run(actor: Actor, engine: "Engine", run_id: int, *, force: bool = False,
               queue: bool = True) -> None:
    """Check that `run_id` may be resumed and (with `queue`) put it back in the queue for
    a worker; the CLI passes queue=False and claims it in the foreground itself."""
    from evalcore.runner.start import check_resumable, resume_run as _resume

    _check(engine, actor, "run", "resume_run", run_id)
    check_resumable(engine, run_id, force=force)
    if queue:
        _resume(engine, run_id)
    _record(engine, actor, "run.resume", "run", run_id, force=force or None)


def retry_failed(actor: Actor, engine: "Engine", run_id: int) -> tuple[int, int]:
    """`runner.start.retry_failed` (paid calls sent again), for evaluators and above."""
    from evalcore.runner.start import retry_failed as _retry

    _check(engine, actor, "run", "retry_failed", run_id)
    moved, job_id = _retry(engine, run_id)
    _record(engine, actor, "run.retry_failed", "run", run_id, calls=moved)
    return moved, job_id


def delete_run(actor: Actor, engine: "Engine", run_id: int) -> Any:
    """`store.queries.delete_run` (the run, its calls and jobs), for admins."""
    from evalcore.store.queries import delete_run as _delete

    _check(engine, actor, "delete", "delete_run", run_id)
    run = _delete(engine, run_id)
    _record(engine, actor, "run.delete", "run", run_id, kind=run.kind, model=run.model)
    return run


def queue_rejudge(actor: Actor, engine: "Engine", run_id: int, judge: str,
                  models_path: ModelsPath, **kwargs: Any) -> int:
    """`runner.rejudge.create_rejudge_job` (paid judge calls), for evaluators and above."""
    from evalcore.runner.rejudge import create_rejudge_job

    _check(engine, actor, "run", "rejudge", run_id)
    kwargs["created_by"] = actor.attribution(kwargs.get("created_by"))
    job_id = create_rejudge_job(engine, run_id, judge, models_path=models_path, **kwargs)
    _record(engine, actor, "run.rejudge", "run", run_id, judge=judge, job=job_id)
    return job_id


def queue_meaning_judge(actor: Actor, engine: "Engine", run_id: int, judge: str,
                        models_path: ModelsPath, created_by: str | None = None) -> int:
    """`runner.meaning_judge.create_meaning_job` (paid judge calls: a judge model says
    which open answers mean the same), for evaluators and above, like re-judging."""
    from evalcore.runner.meaning_judge import create_meaning_job

    _check(engine, actor, "run", "meaning_judge", run_id)
    job_id = create_meaning_job(engine, run_id, judge, models_path=models_path,
                                created_by=actor.attribution(created_by))
    _record(engine, actor, "run.meaning_judge", "run", run_id, judge=judge, job=job_id)
    return job_id


def queue_variants(actor: Actor, engine: "Engine", run_id: int, *,
                   option_order: str | None, templates: list[dict[str, Any]],
                   seed: int = 0, created_by: str | None = None) -> int:
    """`runner.variants.create_variants_job` (paid calls of the run's model: its items
    under other option orders and templates), for evaluators and above."""
    from evalcore.runner.variants import create_variants_job

    _check(engine, actor, "run", "variants", run_id)
    job_id = create_variants_job(engine, run_id, option_order=option_order,
                                 templates=templates, seed=seed,
                                 created_by=actor.attribution(created_by))
    _record(engine, actor, "run.variants", "run", run_id, job=job_id,
            option_order=option_order, templates=[t["name"] for t in templates])
    return job_id


def queue_judge_analysis(actor: Actor, engine: "Engine", run_id: int, judge: str,
                         models_path: ModelsPath, **kwargs: Any) -> int:
    """`runner.judge_analysis.create_judge_analysis_job` (paid judge calls), for
    evaluators and above."""
    from evalcore.runner.judge_analysis import create_judge_analysis_job

    _check(engine, actor, "run", "judge_analysis", run_id)
    kwargs["created_by"] = actor.attribution(kwargs.get("created_by"))
    job_id = create_judge_analysis_job(engine, run_id, judge, models_path=models_path, **kwargs)
    _record(engine, actor, "run.judge_analysis", "run", run_id, judge=judge, job=job_id)
    return job_id


def cancel_job(actor: Actor, engine: "Engine", job_id: int) -> bool:
    """`store.jobs.cancel_job`, for evaluators and above."""
    from evalcore.store.jobs import cancel_job as _cancel

    _check(engine, actor, "run", "cancel_job", job_id)
    done = _cancel(engine, job_id)
    _record(engine, actor, "job.cancel", "job", job_id)
    return done


def requeue_job(actor: Actor, engine: "Engine", job_id: int) -> None:
    """`store.jobs.requeue_job`, for evaluators and above."""
    from evalcore.store.jobs import requeue_job as _requeue

    _check(engine, actor, "run", "requeue_job", job_id)
    _requeue(engine, job_id)
    _record(engine, actor, "job.requeue", "job", job_id)


def start_demo(actor: Actor, engine: "Engine", models_path: ModelsPath) -> int:
    """`demo.start_demo` (imports the sample, queues a local run), for evaluators and up."""
    from evalcore.demo import start_demo as _demo

    _check(engine, actor, "run", "start_demo")
    run_id = _demo(engine, models_path, created_by=actor.attribution())
    _record(engine, actor, "run.start", "run", run_id, kind="stability", demo=True)
    return run_id


# ------------------------------------------------------------------ attack sets and review


def queue_attack(actor: Actor, engine: "Engine", *, submit_key: Optional[str] = None,
                 **kwargs: Any) -> int:
    """`runner.attack.create_attack_job` (a worker generates the set), for evaluators
    and above; once per `submit_key`."""
    from evalcore.runner.attack import create_attack_job

    _check(engine, actor, "attack", "generate_attack_set")
    kwargs["created_by"] = actor.attribution(kwargs.get("created_by"))

    def new() -> int:
        job_id = create_attack_job(engine, **kwargs)
        _record(engine, actor, "attack_set.generate", "job", job_id,
                dataset=kwargs.get("dataset"), level=kwargs.get("level"))
        return job_id

    return _once(engine, submit_key, "job", new)


def queue_attack_import(actor: Actor, engine: "Engine", data: bytes, *,
                        submit_key: Optional[str] = None, **kwargs: Any) -> int:
    """`runner.attack.create_import_job` (the file is checked now, imported by a worker),
    for evaluators and above; once per `submit_key`."""
    from evalcore.runner.attack import create_import_job

    _check(engine, actor, "import", "import_attack_set")
    kwargs["created_by"] = actor.attribution(kwargs.get("created_by"))

    def new() -> int:
        job_id = create_import_job(engine, data, **kwargs)
        _record(engine, actor, "attack_set.import", "job", job_id,
                filename=kwargs.get("filename"), level=kwargs.get("level"))
        return job_id

    return _once(engine, submit_key, "job", new)


def delete_attack_set(actor: Actor, engine: "Engine", id_or_name: Union[str, int]) -> Any:
    """`perturb.sets.delete_attack_set`, for admins."""
    from evalcore.perturb.sets import delete_attack_set as _delete

    _check(engine, actor, "delete", "delete_attack_set")
    gone = _delete(engine, id_or_name)
    _record(engine, actor, "attack_set.delete", "attack_set", gone.id, name=gone.name)
    return gone


def set_review(actor: Actor, engine: "Engine", attack_item_id: int, status: str, *,
               reviewer: Optional[str] = None, **kwargs: Any) -> Any:
    """`perturb.review.set_review`, for reviewers and admins; in team mode the reviewer
    recorded is the signed-in identity, whatever `reviewer` says."""
    from evalcore.perturb.review import set_review as _set

    _check(engine, actor, "review", "set_review", attack_item_id)
    item = _set(engine, attack_item_id, status, reviewer=actor.attribution(reviewer), **kwargs)
    _record(engine, actor, f"review.{status}", "attack_item", attack_item_id,
            attack_set=item.attack_set_id)
    return item


def edit_attack_item(actor: Actor, engine: "Engine", attack_item_id: int, attacked: str, *,
                     reviewer: Optional[str] = None, **kwargs: Any) -> Any:
    """`perturb.review.edit_attack_item`, for reviewers and admins."""
    from evalcore.perturb.review import edit_attack_item as _edit

    _check(engine, actor, "review", "edit_attack_item")
    item = _edit(engine, attack_item_id, attacked, reviewer=actor.attribution(reviewer),
                 **kwargs)
    _record(engine, actor, "review.edit", "attack_item", attack_item_id,
            attack_set=item.attack_set_id, status=item.status)
    return item


def approve_unflagged(actor: Actor, engine: "Engine", attack_set_id: int, *,
                      reviewer: Optional[str] = None) -> int:
    """`perturb.review.approve_unflagged`, for reviewers and admins."""
    from evalcore.perturb.review import approve_unflagged as _bulk

    _check(engine, actor, "review", "approve_unflagged")
    count = _bulk(engine, attack_set_id, reviewer=actor.attribution(reviewer))
    _record(engine, actor, "review.approve_unflagged", "attack_set", attack_set_id, items=count)
    return count


# ------------------------------------------------------------------ models


def add_model(actor: Actor, engine: "Engine", path: ModelsPath, config: "ModelConfig") -> Any:
    """`providers.registry.add_model`, for admins."""
    from evalcore.providers.registry import add_model as _add

    _check(engine, actor, "models", "add_model")
    added = _add(path, config, editor=actor.label)
    _record(engine, actor, "model.add", "model", added.name, kind=added.kind)
    return added


def update_model(actor: Actor, engine: "Engine", path: ModelsPath, name: str,
                 **changes: Any) -> Any:
    """`providers.registry.update_model`, for admins."""
    from evalcore.providers.registry import update_model as _update

    _check(engine, actor, "models", "update_model")
    updated = _update(path, name, editor=actor.label, **changes)
    _record(engine, actor, "model.update", "model", name, changed=sorted(changes))
    return updated


def remove_model(actor: Actor, engine: "Engine", path: ModelsPath, name: str) -> None:
    """`providers.registry.remove_model`, for admins."""
    from evalcore.providers.registry import remove_model as _remove

    _check(engine, actor, "models", "remove_model")
    _remove(path, name)
    _record(engine, actor, "model.delete", "model", name)


def import_models(actor: Actor, engine: "Engine", path: ModelsPath, toml_file: Path, *,
                  replace: bool = False) -> list[str]:
    """Copy the models of a models.toml into `path` (the database in team mode), for admins."""
    from evalcore.providers.registry import import_models as _import

    _check(engine, actor, "models", "import_models")
    names = _import(path, toml_file, editor=actor.label, replace=replace)
    _record(engine, actor, "model.import", "model", ",".join(names), file=str(toml_file))
    return names


def test_model(actor: Actor, engine: "Engine", config: "ModelConfig",
               send: Optional[Callable[["ModelConfig"], Any]] = None) -> Any:
    """One short test call to `config` (`providers.client.test_connection_sync`, or `send`,
    the page's call on its background loop), for evaluators: it is a paid call, so it is
    checked like a run and on record ('model.test', with its outcome) like one."""
    from evalcore.providers.client import test_connection_sync
    from evalcore.providers.local import local_state, stop_local

    _check(engine, actor, "test_model", "test_model", config.name)
    # the embedded model a test loads here is not the one runs use (the workers load
    # their own): it goes again after the test, unless this process had it already
    loaded_before = config.kind != "local" or local_state()["state"] != "stopped"
    reply = None
    try:
        reply = (send or test_connection_sync)(config)
        return reply
    finally:
        if not loaded_before:
            stop_local()
        _record(engine, actor, "model.test", "model", config.name,
                ok=None if reply is None else bool(reply.ok),
                latency_ms=None if reply is None else round(float(reply.latency_ms)))


test_model.__test__ = False  # type: ignore[attr-defined]  # not a pytest test


# ------------------------------------------------------------------ reading doors


def require_read(actor: Actor, engine: "Engine", door: str) -> None:
    """Refuse a reading door (`roles.ADMIN_READS`: 'users list', 'audit list', 'team
    page') to a role without its permission; a refusal is on record like any other."""
    from evalcore.auth.roles import read_permission

    _check(engine, actor, read_permission(door), f"read.{door.replace(' ', '_')}")


def start_worker(actor: Actor, engine: "Engine", name: str) -> None:
    """Only the worker role (the service account of deploy/) or an admin runs a worker:
    it executes anyone's queued jobs with the server's API keys. The start is on record."""
    _check(engine, actor, "work", "start_worker", name)
    _record(engine, actor, "worker.start", "worker", name)


# ------------------------------------------------------------------ users


def add_user(actor: Actor, engine: "Engine", email: str, role: str, name: str = "") -> Any:
    """`auth.users.add_user`, for admins."""
    from evalcore.auth.users import add_user as _add

    _check(engine, actor, "users", "add_user")
    user = _add(engine, email, role, name)
    _record(engine, actor, "user.add", "user", user.email, role=user.role)
    return user


def set_role(actor: Actor, engine: "Engine", email: str, role: str) -> Any:
    """`auth.users.set_role`, for admins."""
    from evalcore.auth.users import set_role as _set

    _check(engine, actor, "users", "set_role", email)
    user, previous = _set(engine, email, role)
    _record(engine, actor, "user.set_role", "user", user.email, role=user.role,
            previous=previous)
    return user
