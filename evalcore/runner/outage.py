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

import asyncio
import logging
import threading
import time
from typing import Any, Callable, Optional, TypeVar

from sqlalchemy import exc as sa

from evalcore.runner.disk_full import is_disk_full

T = TypeVar("T")

log = logging.getLogger("evalcore.worker")


def short(exc: BaseException) -> str:
    """`Type: first line` of an error (SQLAlchemy appends the SQL and a link on more lines)."""
    lines = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {lines[0] if lines else ''}"[:300]


def is_outage(exc: BaseException) -> bool:
    """Whether `exc` means the database cannot be reached (not a bug or a bad row, nor a
    full disk, which waiting does not cure: `runner.disk_full`)."""
    if is_disk_full(exc):
        return False
    seen: set[int] = set()
    link: Optional[BaseException] = exc
    while link is not None and id(link) not in seen:  # a lost connection that caused another
        seen.add(id(link))
        if isinstance(link, (sa.OperationalError, sa.InterfaceError, sa.DisconnectionError,
                             sa.TimeoutError, ConnectionError, TimeoutError)):
            return True
        if isinstance(link, sa.DBAPIError) and link.connection_invalidated:
            return True
        link = link.__cause__
    return False


OUTAGES_KEPT = 20
"""Past outages a process remembers (`Outage.windows`), to say why a due time was missed."""


class Outage:
    """The process's view of its database: up, or down since when, with how many retries;
    and the recent outages as wall-clock windows (from the last call that succeeded
    before each to the first after it)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.since: Optional[float] = None
        self.failures = 0
        self.last_ok: Optional[float] = None
        """time.time() of the last call that succeeded (an outage began after it)."""
        self.down_from: Optional[float] = None
        self.windows: list[tuple[float, float]] = []

    def unreachable(self, moment: float) -> Optional[tuple[float, float]]:
        """The window (time.time() seconds) in which this process could not reach the
        database and which holds `moment`; None if it could, or did not try."""
        with self._lock:
            current = [(self.down_from, time.time())] if self.down_from is not None else []
            for start, end in self.windows + current:
                if start <= moment <= end:
                    return start, end
        return None

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
                self.down_from = self.last_ok if self.last_ok is not None else time.time()
            self.failures += 1
        if first:
            log.warning("database unreachable while %s (%s); retrying quietly until it is "
                        "back", what, short(exc))
        else:
            log.debug("database still unreachable while %s (%s)", what, short(exc))

    def ok(self) -> None:
        """A database call succeeded: one line if this ends an outage."""
        self.last_ok = time.time()
        if self.since is None:  # the common case, without the lock
            return
        with self._lock:
            if self.since is None:
                return
            seconds, failures = time.monotonic() - self.since, self.failures
            self.since, self.failures = None, 0
            if self.down_from is not None:
                self.windows = [*self.windows, (self.down_from, self.last_ok)][-OUTAGES_KEPT:]
            self.down_from = None
        log.warning("database back after %.1f s (%d failed tries meanwhile)", seconds, failures)


_BY_DATABASE: dict[str, Outage] = {}
_REGISTRY_LOCK = threading.Lock()


def database(engine: Any) -> Outage:
    """The outage state of `engine`'s database, shared by every loop of this process that
    uses it (a worker, its jobs, their rate budgets)."""
    key = str(getattr(engine, "url", engine))
    with _REGISTRY_LOCK:
        return _BY_DATABASE.setdefault(key, Outage())


PATIENT_BACKOFF_S = (0.5, 5.0)
"""First and longest wait between tries of a write that must not be lost to an outage."""


async def patiently(engine: Any, what: str, write: Callable[..., T], *args: Any,
                    **kwargs: Any) -> T:
    """`write(*args, **kwargs)` in a thread, tried again while the database cannot be
    reached (an outage is waited out, reported once by `database(engine)`); any other
    error is raised. For the writes that end something (a job, an alert delivery): their
    loss would leave a finished thing looking unfinished, so they wait for the database
    rather than fail the job, and the caller's cancellation still stops them."""
    wait, longest = PATIENT_BACKOFF_S
    state = database(engine)
    while True:
        try:
            result = await asyncio.to_thread(write, *args, **kwargs)
        except Exception as exc:  # sorted below: an outage is waited out
            if not is_outage(exc):
                raise
            state.failed(what, exc)
            await asyncio.sleep(wait)
            wait = min(wait * 2, longest)
            continue
        state.ok()
        return result
