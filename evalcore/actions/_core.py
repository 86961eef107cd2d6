"""What every action shares: the permission check with its audit of refusals, the audit
record, the once-per-submission guard."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Optional

from evalcore.auth import audit
from evalcore.auth.identity import Actor
from evalcore.auth.roles import PermissionDenied, require
from evalcore.store.db import Bind
from evalcore.store.submissions import once

if TYPE_CHECKING:
    from sqlalchemy.engine import Connection, Engine


ModelsPath = Any  # a models.toml path or the database's model registry (evalcore.model_store)


def _record(engine: Bind, actor: Actor, action: str, object_type: str, object_id: Any,
            **detail: Any) -> None:
    audit.record(engine, actor, action, object_type, object_id,
                 {k: v for k, v in detail.items() if v is not None})


def _check(engine: Bind, actor: Actor, permission: str, action: str,
           object_id: Any = "") -> None:
    """`require`, and a refused attempt is kept in the audit log too ('denied.<action>')."""
    try:
        require(actor, permission)
    except PermissionDenied:
        _record(engine, actor, f"denied.{action}", "", object_id, permission=permission)
        raise

def _once(engine: "Engine", submit_key: Optional[str], object_type: str,
          make: Callable[["Connection"], int]) -> int:
    """`make(conn)` once per submission key, the key in the same transaction
    (`store.submissions.once`)."""
    return once(engine, submit_key, object_type, make)
