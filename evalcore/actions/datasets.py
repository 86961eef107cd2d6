"""Dataset actions: import (with the importer stamped), save a suite, delete. See `evalcore.actions`."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Optional, Union

from evalcore.actions._core import _check, _record
from evalcore.actions.runs import delete_run
from evalcore.auth.identity import Actor
from evalcore.dataset import dataset_users, delete_dataset as _delete
from evalcore.errors import DatasetError
from evalcore.store.datasets import stamp_creator
from evalcore.store.db import Bind, transaction

if TYPE_CHECKING:
    from sqlalchemy.engine import Connection, Engine



def _imported_by(conn: "Connection", actor: Actor, dataset: Any) -> Any:
    """Stamp the importer on the new dataset row (and the returned record)."""
    who = actor.attribution()
    stamp_creator(conn, int(dataset.id), who)
    dataset.created_by = who
    return dataset


def _import(actor: Actor, engine: "Engine", action: str, make: Callable[[Bind], Any], *,
            suite: bool = False) -> Any:
    """Check the import permission, create the dataset with `make(conn)`, stamp the
    importer on it and record the import (with its file, or as a generated suite): one
    transaction."""
    _check(engine, actor, "import", action)
    with transaction(engine) as conn:
        dataset = _imported_by(conn, actor, make(conn))
        where = {"suite": True} if suite else {"file": dataset.source_file}
        _record(conn, actor, "dataset.import", "dataset", dataset.id, name=dataset.name,
                items=dataset.item_count, **where)
    return dataset


def import_dataset(actor: Actor, engine: "Engine", source: Any, **kwargs: Any) -> Any:
    """`evalcore.dataset.import_dataset`, for evaluators and above."""
    from evalcore.dataset import import_dataset as _import_file

    return _import(actor, engine, "import_dataset", lambda conn: _import_file(conn, source, **kwargs))


def store_parsed(actor: Actor, engine: "Engine", parsed: Any, **kwargs: Any) -> Any:
    """`evalcore.dataset.store_parsed` (the Datasets page's import), for evaluators and above."""
    from evalcore.dataset import store_parsed as _store

    return _import(actor, engine, "store_parsed", lambda conn: _store(conn, parsed, **kwargs))


def save_suite(actor: Actor, engine: "Engine", parsed: Any, name: Optional[str] = None,
               **kwargs: Any) -> Any:
    """`perturb.counterfactual.save_suite` (a generated fairness suite becomes a dataset),
    for evaluators and above."""
    from evalcore.perturb.counterfactual import save_suite as _save

    return _import(actor, engine, "save_suite", lambda conn: _save(conn, parsed, name, **kwargs),
                   suite=True)


def delete_dataset(actor: Actor, engine: "Engine", name_or_id: Union[str, int]) -> Any:
    """`evalcore.dataset.delete_dataset`, for admins."""
    _check(engine, actor, "delete", "delete_dataset", name_or_id)
    with transaction(engine) as conn:
        dataset = _delete(conn, name_or_id)
        _record(conn, actor, "dataset.delete", "dataset", dataset.id, name=dataset.name)
    return dataset


def delete_dataset_and_runs(actor: Actor, engine: "Engine", name_or_id: Union[str, int]
                            ) -> tuple[Any, list[int]]:
    """Delete the runs that use a dataset (each one as `delete_run`), then the dataset:
    the way out of "used by 3 runs", for admins. Returns (dataset, deleted run ids). One
    transaction: a failure half-way deletes no run."""
    _check(engine, actor, "delete", "delete_dataset_and_runs", name_or_id)
    users = dataset_users(engine, name_or_id)
    if users["attack_sets"]:  # refuse before any run is gone
        shown = ", ".join(f"#{i} {n}" for i, n in users["attack_sets"][:10])
        raise DatasetError(f"dataset {name_or_id!r} has attack set(s) {shown}; delete them "
                           "first (Attacks page)")
    run_ids = users["runs"]
    with transaction(engine) as conn:
        for run_id in run_ids:
            delete_run(actor, conn, run_id)
        return delete_dataset(actor, conn, name_or_id), run_ids
