"""Idempotency keys of start form submissions: one submission creates one run or job.

A double click on "Start run" sends the same form twice; the page passes the same key
both times and the second call gets the first one's run back instead of a new run. The
key is inserted first (unique), the object created, then its id stored: a second call
with the key finds the row, and waits briefly if the first is still creating. A failed
creation deletes its row, so the same submission may be tried again.
"""
from __future__ import annotations

import time
from typing import Callable, Optional

from sqlalchemy import delete, select, update
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError

from evalcore.errors import RunError
from evalcore.store.db import reader
from evalcore.store.tables import Submission, utcnow

WAIT_S = 30.0
"""How long a second call waits for a first one still creating the object."""


def _claim(engine: Engine, key: str, object_type: str) -> bool:
    """True if this call inserted the key (it creates the object), False if it existed."""
    try:
        with engine.begin() as conn:
            conn.execute(Submission.__table__.insert().values(
                key=key, object_type=object_type, object_id=None, created_at=utcnow()))
        return True
    except IntegrityError:
        return False


def _created(engine: Engine, key: str) -> tuple[bool, Optional[int]]:
    """(row exists, object id or None while being created)."""
    with reader(engine).connect() as conn:
        row = conn.execute(select(Submission.object_id).where(Submission.key == key)
                           ).one_or_none()
    return (row is not None, None if row is None else row[0])


def once(engine: Engine, key: Optional[str], object_type: str, make: Callable[[], int]) -> int:
    """`make()` (which creates a run or a job and returns its id) at most once per `key`:
    a later call with the same key returns the first call's id. No key: always `make()`."""
    if not key:
        return make()
    deadline = time.monotonic() + WAIT_S
    while not _claim(engine, key, object_type):
        exists, object_id = _created(engine, key)
        if object_id is not None:
            return int(object_id)
        if exists and time.monotonic() > deadline:
            raise RunError(f"submission {key} is still being created elsewhere; look for "
                           "it on the Results page before starting it again")
        time.sleep(0.05)  # being created by another call, or deleted after it failed
    try:
        object_id = int(make())
    except BaseException:
        with engine.begin() as conn:
            conn.execute(delete(Submission).where(Submission.key == key))
        raise
    with engine.begin() as conn:
        conn.execute(update(Submission).where(Submission.key == key)
                     .values(object_id=object_id))
    return object_id
