"""Attack-set actions: generate, import, delete, and review (approve, reject, edit). See `evalcore.actions`."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional, Union

from evalcore.actions._core import _check, _once, _record
from evalcore.auth.identity import Actor
from evalcore.store.db import transaction

if TYPE_CHECKING:
    from sqlalchemy.engine import Connection, Engine



def queue_attack(actor: Actor, engine: "Engine", *, submit_key: Optional[str] = None,
                 **kwargs: Any) -> int:
    """`runner.attack.create_attack_job` (a worker generates the set), for evaluators
    and above; once per `submit_key`."""
    from evalcore.runner.attack import create_attack_job

    _check(engine, actor, "attack", "generate_attack_set")
    kwargs["created_by"] = actor.attribution(kwargs.get("created_by"))

    def new(conn: "Connection") -> int:
        job_id = create_attack_job(conn, **kwargs)
        _record(conn, actor, "attack_set.generate", "job", job_id,
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

    def new(conn: "Connection") -> int:
        job_id = create_import_job(conn, data, **kwargs)
        _record(conn, actor, "attack_set.import", "job", job_id,
                filename=kwargs.get("filename"), level=kwargs.get("level"))
        return job_id

    return _once(engine, submit_key, "job", new)


def delete_attack_set(actor: Actor, engine: "Engine", id_or_name: Union[str, int]) -> Any:
    """`perturb.sets.delete_attack_set`, for admins."""
    from evalcore.perturb.sets import delete_attack_set as _delete

    _check(engine, actor, "delete", "delete_attack_set")
    with transaction(engine) as conn:
        gone = _delete(conn, id_or_name)
        _record(conn, actor, "attack_set.delete", "attack_set", gone.id, name=gone.name)
    return gone


def set_review(actor: Actor, engine: "Engine", attack_item_id: int, status: str, *,
               reviewer: Optional[str] = None, **kwargs: Any) -> Any:
    """`perturb.review.set_review`, for reviewers and admins; in team mode the reviewer
    recorded is the signed-in identity, whatever `reviewer` says."""
    from evalcore.perturb.review import set_review as _set

    _check(engine, actor, "review", "set_review", attack_item_id)
    with transaction(engine) as conn:
        item = _set(conn, attack_item_id, status, reviewer=actor.attribution(reviewer),
                    **kwargs)
        _record(conn, actor, f"review.{status}", "attack_item", attack_item_id,
                attack_set=item.attack_set_id)
    return item


def edit_attack_item(actor: Actor, engine: "Engine", attack_item_id: int, attacked: str, *,
                     reviewer: Optional[str] = None, **kwargs: Any) -> Any:
    """`perturb.review.edit_attack_item`, for reviewers and admins."""
    from evalcore.perturb.review import edit_attack_item as _edit

    _check(engine, actor, "review", "edit_attack_item")
    with transaction(engine) as conn:
        item = _edit(conn, attack_item_id, attacked, reviewer=actor.attribution(reviewer),
                     **kwargs)
        _record(conn, actor, "review.edit", "attack_item", attack_item_id,
                attack_set=item.attack_set_id, status=item.status)
    return item


def approve_unflagged(actor: Actor, engine: "Engine", attack_set_id: int, *,
                      reviewer: Optional[str] = None) -> int:
    """`perturb.review.approve_unflagged`, for reviewers and admins."""
    from evalcore.perturb.review import approve_unflagged as _bulk

    _check(engine, actor, "review", "approve_unflagged")
    with transaction(engine) as conn:
        count = _bulk(conn, attack_set_id, reviewer=actor.attribution(reviewer))
        _record(conn, actor, "review.approve_unflagged", "attack_set", attack_set_id,
                items=count)
    return count
