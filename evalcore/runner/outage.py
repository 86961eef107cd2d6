"""One voice for a lost database: a line when it goes away, a line when it is back.

A worker with jobs in hand touches the database from several loops (claiming, renewing
leases, storing calls every 0.25 s, syncing rate budgets every second); each used to log
SQLAlchemy's multi-line text on every failed try, ~100 times in a 20 s outage. They now
report here: the first failure is one line naming what failed, later ones are counted
(DEBUG), and the first success after them is one line with the time down and the count.
Errors that are not a lost connection are still logged each time, on one line. One state
per database (`database(engine)`), so two databases in one process do not mix.
"""
from __future__ import annotations

import logging
import threading
import time
from typing import Any, Optional

from sqlalchemy import exc as sa

log = logging.getLogger("evalcore.worker")


def short(exc: BaseException) -> str:
    """`Type: first line` of an error (SQLAlchemy appends the SQL and a link on more lines)."""
    lines = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {lines[0] if lines else ''}"[:300]


def is_outage(exc: BaseException) -> bool:
    """Whether `exc` means the database cannot be reached (not a bug or a bad row)."""
    if isinstance(exc, (sa.OperationalError, sa.InterfaceError, sa.DisconnectionError,
                        sa.TimeoutError, ConnectionError, TimeoutError)):
        return True
    return isinstance(exc, sa.DBAPIError) and bool(exc.connection_invalidated)


class Outage:
    """The process's view of its database: up, or down since when, with how many retries."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.since: Optional[float] = None
        self.failures = 0

    @property
    def down(self) -> bool:
        return self.since is not None

    def failed(self, what: str, exc: BaseException) -> None:
        """A database call for `what` failed: one line if this starts an outage (or is not
        an outage at all), else only counted."""
        if not is_outage(exc):
            log.warning("%s failed: %s", what, short(exc))
            return
        with self._lock:
            first = self.since is None
            if first:
                self.since, self.failures = time.monotonic(), 0
            self.failures += 1
        if first:
            log.warning("database unreachable while %s (%s); retrying quietly until it is "
                        "back", what, short(exc))
        else:
            log.debug("database still unreachable while %s (%s)", what, short(exc))

    def ok(self) -> None:
        """A database call succeeded: one line if this ends an outage."""
        if self.since is None:  # the common case, without the lock
            return
        with self._lock:
            if self.since is None:
                return
            seconds, failures = time.monotonic() - self.since, self.failures
            self.since, self.failures = None, 0
        log.warning("database back after %.1f s (%d failed tries meanwhile)", seconds, failures)


_BY_DATABASE: dict[str, Outage] = {}
_REGISTRY_LOCK = threading.Lock()


def database(engine: Any) -> Outage:
    """The outage state of `engine`'s database, shared by every loop of this process that
    uses it (a worker, its jobs, their rate budgets)."""
    key = str(getattr(engine, "url", engine))
    with _REGISTRY_LOCK:
        return _BY_DATABASE.setdefault(key, Outage())
