"""Idempotency keys of start form submissions: one submission creates one run or job.

A double click on "Start run" sends the same form twice; the page passes the same key
both times and the second call gets the first one's run back instead of a new run. The
key row (unique), the object and its id are written in one transaction: a second call
with the key either finds the committed row, or waits on the unique key until the first
transaction ends (PostgreSQL; SQLite's `BEGIN IMMEDIATE` serialises the two outright) and
then finds it. A failed creation rolls its key back with everything else, so the same
submission may be tried again.
"""
from __future__ import annotations

from typing import Callable, Optional

from sqlalchemy import select, update
from sqlalchemy.engine import Connection
from sqlalchemy.exc import IntegrityError

from evalcore.store.db import Bind, transaction
from evalcore.store.tables import Submission
from evalcore.store.types import utcnow

SUBMISSION = Submission.__table__


def _created(conn: Connection, key: str) -> Optional[int]:
    """The id of the object made for `key`, None if the key is not stored (committed)."""
    found = conn.execute(select(SUBMISSION.c.object_id).where(SUBMISSION.c.key == key)
                         ).scalar_one_or_none()
    return None if found is None else int(found)


def once(bind: Bind, key: Optional[str], object_type: str,
         make: Callable[[Connection], int]) -> int:
    """`make(conn)` (which creates a run or a job in `conn`'s transaction and returns its
    id) at most once per `key`: a later call with the same key returns the first call's
    id. No key: always `make(conn)`. The key is stored in the same transaction."""
    with transaction(bind) as conn:
        if not key:
            return int(make(conn))
        object_id = _created(conn, key)
        if object_id is not None:
            return object_id
        try:
            with conn.begin_nested():
                conn.execute(SUBMISSION.insert().values(
                    key=key, object_type=object_type, object_id=None, created_at=utcnow()))
        except IntegrityError:  # a concurrent first call committed it meanwhile
            object_id = _created(conn, key)
            if object_id is None:
                raise
            return object_id
        object_id = int(make(conn))
        conn.execute(update(SUBMISSION).where(SUBMISSION.c.key == key)
                     .values(object_id=object_id))
        return object_id
