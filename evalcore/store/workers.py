"""Workers' heartbeats: which workers are alive and what the local model does in each.

A worker writes its row every `HEARTBEAT_S` seconds (`beat`) and deletes it when it stops
(`forget`); a row older than `ALIVE_S` belongs to a worker that died. The sidebar and the
Models page read `live_workers` to say where the embedded model is loaded: the worker's
process is where runs call it, so that is the copy that matters.
"""
from __future__ import annotations

import os
import socket
from datetime import datetime, timedelta, timezone
from typing import Any, Optional

from sqlalchemy import delete, select
from sqlalchemy.engine import Engine

from evalcore.store.db import Bind, reading
from evalcore.store.tables import Worker
from evalcore.store.types import utcnow

WORKER = Worker.__table__

HEARTBEAT_S = 3.0
"""Seconds between a worker's heartbeats."""
ALIVE_S = 4 * HEARTBEAT_S
"""A worker whose last heartbeat is older than this is taken for dead."""


def beat(engine: Engine, name: str, state: dict[str, Any], *,
         started_at: Optional[datetime] = None) -> None:
    """Insert or refresh `name`'s row with `state` (JSON) and the time now."""
    now = utcnow()
    values = {"host": socket.gethostname(), "pid": os.getpid(), "heartbeat_at": now,
              "state": state}
    with engine.begin() as conn:
        updated = conn.execute(WORKER.update().where(
            WORKER.c.name == name).values(**values)).rowcount
        if not updated:
            conn.execute(WORKER.insert().values(
                name=name, started_at=started_at or now, **values))


def forget(engine: Engine, name: str) -> None:
    """Remove a stopping worker's row (it no longer serves anything)."""
    with engine.begin() as conn:
        conn.execute(delete(WORKER).where(WORKER.c.name == name))


def _aware(moment: datetime) -> datetime:
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)


def live_workers(conn: Bind, *, alive_s: float = ALIVE_S) -> list[Any]:
    """Workers that beat within `alive_s` seconds, by name."""
    since = utcnow() - timedelta(seconds=alive_s)
    with reading(conn) as tx:
        rows = tx.execute(select(WORKER).order_by(WORKER.c.name)).all()
    return [w for w in rows if _aware(w.heartbeat_at) >= since]
