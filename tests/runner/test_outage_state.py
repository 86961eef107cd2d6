"""A process remembers when it could not reach its database (`runner.outage.Outage`), so
a due time missed then is recorded as missed for that reason, not for want of a worker."""
from __future__ import annotations

import time

from sqlalchemy.exc import OperationalError

from evalcore.runner.disk_full import is_disk_full
from evalcore.runner.outage import Outage, is_outage


def _lost() -> OperationalError:
    return OperationalError("SELECT 1", {}, ConnectionRefusedError("connection refused"))


def test_an_outage_window_runs_from_the_last_success_to_the_first_after_it() -> None:
    state = Outage()
    state.ok()
    before = time.time()
    state.failed("looking for jobs", _lost())
    during = time.time()
    assert state.unreachable(during) is not None  # still down: the window is open
    state.ok()
    after = time.time()
    start, end = state.unreachable(during)
    assert start <= before <= during <= end <= after
    assert state.unreachable(after + 1) is None  # up again


def test_a_full_disk_is_not_an_outage() -> None:
    import sqlite3

    full = OperationalError("INSERT", {}, sqlite3.OperationalError("database or disk is full"))
    locked = OperationalError("INSERT", {}, sqlite3.OperationalError("database is locked"))
    assert is_disk_full(full) and not is_outage(full)  # waiting does not free space
    assert is_outage(locked) and not is_disk_full(locked)  # a lock is waited out


def test_an_error_caused_by_a_lost_connection_is_an_outage() -> None:
    """SQLAlchemy's PendingRollbackError (a transaction used after its connection was cut)
    is raised from the connection's error: the job is given back, not failed."""
    from sqlalchemy import exc as sa

    lost = sa.OperationalError("SELECT 1", {}, ConnectionError("server closed the connection"))
    try:
        try:
            raise lost
        except sa.OperationalError as cut:
            raise sa.PendingRollbackError("Can't reconnect until invalid transaction is "
                                          "rolled back") from cut
    except sa.PendingRollbackError as pending:
        assert is_outage(pending)
    assert not is_outage(sa.PendingRollbackError("a bug: no connection was lost"))
    assert not is_outage(ValueError("bad row"))
