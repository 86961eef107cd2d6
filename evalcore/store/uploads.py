"""Files handed in for a job, kept in the database until the job is done.

A page's upload lives in the app's memory and a CLI's path on its own machine; a worker
may run anywhere, so the bytes go through the database (the truth about every job).
"""
from __future__ import annotations

import hashlib
from typing import Any, Optional

from sqlalchemy.engine import Engine

from evalcore.errors import EvalcoreError
from evalcore.store.db import session_scope
from evalcore.store.tables import Upload


def save_upload(engine: Engine, data: bytes, filename: str, created_by: str = "") -> int:
    """Store the bytes of `filename`; returns the upload id."""
    row = Upload(filename=filename, sha256=hashlib.sha256(data).hexdigest(), size=len(data),
                 data=data, created_by=created_by)
    with session_scope(engine) as session:
        session.add(row)
        session.flush()
        return int(row.id)


def load_upload(engine: Engine, upload_id: int) -> tuple[str, bytes]:
    """(file name, bytes) of an upload."""
    with session_scope(engine, write=False) as session:
        row = session.get(Upload, upload_id)
        if row is None:
            raise EvalcoreError(f"upload {upload_id} is gone (its job finished or was "
                                "deleted): hand the file in again")
        return row.filename, bytes(row.data)


def delete_upload(engine: Engine, upload_id: int, session: Optional[Any] = None) -> None:
    """Drop an upload (no error if it is already gone); inside `session` when given, so a
    job's last write and the deletion commit together."""
    if session is not None:
        row = session.get(Upload, upload_id)
        if row is not None:
            session.delete(row)
        return
    with session_scope(engine) as own:
        delete_upload(engine, upload_id, own)
