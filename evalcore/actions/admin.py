"""Admin actions: the model list, reading doors, workers and users. See `evalcore.actions`."""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Optional

from evalcore.actions._core import ModelsPath, _check, _record
from evalcore.auth.identity import Actor
from evalcore.auth.roles import read_permission
from evalcore.auth.users import add_user as _add_user, set_role as _set
from evalcore.model_store import ModelsInDatabase
from evalcore.providers.catalog import provider_for
from evalcore.providers.client import test_connection_sync
from evalcore.providers.registry import (add_model as _add_model, import_models as _import,
                                         remove_model as _remove, update_model as _update)
from evalcore.store.db import transaction

if TYPE_CHECKING:
    from sqlalchemy.engine import Connection, Engine

    from evalcore.providers.base import ModelConfig


def _models_in(path: ModelsPath, conn: "Connection") -> ModelsPath:
    """The model list `path`, written in `conn`'s transaction when it is the database's
    (team mode: the change and its audit event commit together). A models.toml is
    written before the audit event commits: a failed write records nothing."""
    return path.within(conn) if isinstance(path, ModelsInDatabase) else path


def add_model(actor: Actor, engine: "Engine", path: ModelsPath, config: "ModelConfig") -> Any:
    """`providers.registry.add_model`, for admins."""
    _check(engine, actor, "models", "add_model")
    with transaction(engine) as conn:
        added = _add_model(_models_in(path, conn), config, editor=actor.label)
        _record(conn, actor, "model.add", "model", added.name, kind=added.kind)
    return added


def update_model(actor: Actor, engine: "Engine", path: ModelsPath, name: str,
                 **changes: Any) -> Any:
    """`providers.registry.update_model`, for admins."""
    _check(engine, actor, "models", "update_model")
    with transaction(engine) as conn:
        updated = _update(_models_in(path, conn), name, editor=actor.label, **changes)
        _record(conn, actor, "model.update", "model", name, changed=sorted(changes))
    return updated


def remove_model(actor: Actor, engine: "Engine", path: ModelsPath, name: str) -> None:
    """`providers.registry.remove_model`, for admins."""
    _check(engine, actor, "models", "remove_model")
    with transaction(engine) as conn:
        _remove(_models_in(path, conn), name)
        _record(conn, actor, "model.delete", "model", name)


def import_models(actor: Actor, engine: "Engine", path: ModelsPath, toml_file: Path, *,
                  replace: bool = False) -> list[str]:
    """Copy the models of a models.toml into `path` (the database in team mode), for admins."""
    _check(engine, actor, "models", "import_models")
    with transaction(engine) as conn:
        names = _import(_models_in(path, conn), toml_file, editor=actor.label, replace=replace)
        _record(conn, actor, "model.import", "model", ",".join(names), file=str(toml_file))
    return names


def test_model(actor: Actor, engine: "Engine", config: "ModelConfig",
               send: Optional[Callable[["ModelConfig"], Any]] = None) -> Any:
    """One short test call to `config` (`providers.client.test_connection_sync`, or `send`,
    the page's call on its background loop), for evaluators: it is a paid call, so it is
    checked like a run and on record ('model.test', with its outcome) like one."""
    _check(engine, actor, "test_model", "test_model", config.name)
    # a model a test loads here (the embedded one) is not the one runs use (the workers
    # load their own): it goes again after the test, unless this process had it already
    provider = provider_for(config)
    loaded_before = provider.loaded()
    reply = None
    try:
        reply = (send or test_connection_sync)(config)
        return reply
    finally:
        if not loaded_before:
            provider.unload()
        _record(engine, actor, "model.test", "model", config.name,
                ok=None if reply is None else bool(reply.ok),
                latency_ms=None if reply is None else round(float(reply.latency_ms)))


test_model.__test__ = False  # type: ignore[attr-defined]  # not a pytest test


# ------------------------------------------------------------------ reading doors


def require_read(actor: Actor, engine: "Engine", door: str) -> None:
    """Refuse a reading door (`roles.ADMIN_READS`: 'users list', 'audit list', 'team
    page') to a role without its permission; a refusal is on record like any other."""
    _check(engine, actor, read_permission(door), f"read.{door.replace(' ', '_')}")


def start_worker(actor: Actor, engine: "Engine", name: str) -> None:
    """Only the worker role (the service account of deploy/) or an admin runs a worker:
    it executes anyone's queued jobs with the server's API keys. The start is on record."""
    _check(engine, actor, "work", "start_worker", name)
    _record(engine, actor, "worker.start", "worker", name)


# ------------------------------------------------------------------ users


def add_user(actor: Actor, engine: "Engine", email: str, role: str, name: str = "") -> Any:
    """`auth.users.add_user`, for admins."""
    _check(engine, actor, "users", "add_user")
    with transaction(engine) as conn:
        user = _add_user(conn, email, role, name)
        _record(conn, actor, "user.add", "user", user.email, role=user.role)
    return user


def set_role(actor: Actor, engine: "Engine", email: str, role: str) -> Any:
    """`auth.users.set_role`, for admins."""
    _check(engine, actor, "users", "set_role", email)
    with transaction(engine) as conn:
        user, previous = _set(conn, email, role)
        _record(conn, actor, "user.set_role", "user", user.email, role=user.role,
                previous=previous)
    return user
