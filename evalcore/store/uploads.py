"""Files handed in for a job, kept in the database until the job is done.

A page's upload lives in the app's memory and a CLI's path on its own machine; a worker
may run anywhere, so the bytes go through the database (the truth about every job).
"""
from __future__ import annotations

from sqlalchemy import insert
from sqlalchemy.engine import Connection

from evalcore.errors import EvalcoreError
from evalcore.store.db import Bind, session_scope
from evalcore.store.tables import Upload

UPLOAD = Upload.__table__


def save_upload(conn: Connection, data: bytes, filename: str) -> int:
    """Store the bytes of `filename` in the caller's transaction (commit it with the job
    that reads them); returns the upload id."""
    return int(conn.execute(insert(UPLOAD).values(filename=filename, data=data))
               .inserted_primary_key[0])


def load_upload(conn: Bind, upload_id: int) -> tuple[str, bytes]:
    """(file name, bytes) of an upload."""
    with session_scope(conn, write=False) as session:
        row = session.get(Upload, upload_id)
        if row is None:
            raise EvalcoreError(f"upload {upload_id} is gone (its job finished or was "
                                "cancelled): hand the file in again")
        return row.filename, bytes(row.data)


def delete_upload(conn: Bind, upload_id: int) -> None:
    """Drop an upload (no error if it is already gone)."""
    with session_scope(conn) as session:
        row = session.get(Upload, upload_id)
        if row is not None:
            session.delete(row)
