"""A full disk under the database: told apart from an outage, and said in one line.

An outage is waited out (the database comes back by itself); a full disk does not go
away by waiting, and every retry would pay for more calls that cannot be stored. So a
run whose calls cannot be stored for lack of space stops: its job is given back to the
queue, the error names the database file, the free space there and about how much more
the run needs, and the CLI exits with code 3. Calls stored before are never paid again
on resume; the calls lost are at most those that were in flight (`runner.run`).
"""
from __future__ import annotations

import errno
import os
import shutil
from typing import Any, Optional

from evalcore.errors import RunError

SQLITE_FULL = 13
"""sqlite3's result code for "database or disk is full"."""
POSTGRES_DISK_FULL = "53100"
"""PostgreSQL's SQLSTATE disk_full."""
OVERHEAD = 2
"""Bytes written per byte of a call: the row, then the same page again when the WAL is
checkpointed into the file."""
RESERVE_BYTES = 1024 * 1024
"""Space kept free for the small writes that end a run (its progress, giving its job
back): a disk filled to the last byte refuses those too."""


def lacks_room(engine: Any, batch_bytes: float) -> bool:
    """Whether storing `batch_bytes` more in a SQLite file could fill its disk: the batch
    (twice: log, then file), the log's checkpoint into the file (up to the log's size)
    and the reserve must fit. A server database (PostgreSQL) reports a full disk itself."""
    path, free = where(engine)
    if free is None:
        return False
    try:
        log = os.path.getsize(path + "-wal")
    except OSError:
        log = 0
    return free < batch_bytes * OVERHEAD + log + RESERVE_BYTES


class DiskFull(RunError):
    """The database's disk is full; the run was given back to the queue."""

    exit_code = 3


def is_disk_full(exc: BaseException) -> bool:
    """Whether `exc` (a driver's error, possibly wrapped by SQLAlchemy) means no space."""
    if isinstance(exc, DiskFull):
        return True
    inner = getattr(exc, "orig", None) or exc
    if isinstance(inner, OSError) and inner.errno == errno.ENOSPC:
        return True
    if getattr(inner, "sqlite_errorcode", None) == SQLITE_FULL:
        return True
    if getattr(inner, "sqlstate", None) == POSTGRES_DISK_FULL:
        return True
    return "database or disk is full" in str(inner)


def _size(count: float) -> str:
    for unit in ("bytes", "KB", "MB", "GB"):
        if count < 1024 or unit == "GB":
            return f"{count:.0f} {unit}" if unit == "bytes" else f"{count:.1f} {unit}"
        count /= 1024
    return f"{count:.1f} GB"


def where(engine: Any) -> tuple[str, Optional[int]]:
    """(the database's place as a user names it, free bytes there if it is a local file)."""
    url = getattr(engine, "url", None)
    if url is not None and url.get_backend_name() == "sqlite" and url.database:
        path = os.path.abspath(url.database)
        try:
            return path, shutil.disk_usage(os.path.dirname(path)).free
        except OSError:
            return path, None
    name = url.render_as_string(hide_password=True) if url is not None else str(engine)
    return f"the database server's disk ({name})", None


def disk_full_error(engine: Any, run_id: Optional[int], *, calls_left: int = 0,
                    bytes_per_call: float = 0.0) -> DiskFull:
    """The one-line error of a run stopped by a full disk (or one about to be): the path,
    its free space, the space the run still needs (about), and how to go on."""
    path, free = where(engine)
    free_text = f"{_size(free)} free" if free is not None else "no space left"
    need = calls_left * bytes_per_call * OVERHEAD
    need_text = (f"; about {_size(need)} more needed for the {calls_left} calls left"
                 if need else "")
    run = f"run {run_id}" if run_id is not None else "the job"
    resume = (f"`python -m evalcore runs resume {run_id}`" if run_id is not None
              else "the job again")
    return DiskFull(f"disk full: {run} cannot store its calls in {path} ({free_text}"
                    f"{need_text}); it was given back to the queue: free space there, then "
                    f"{resume} (calls already stored are not paid again)")
