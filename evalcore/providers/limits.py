"""How many calls a model may have in flight, and how many it may start per minute.

`AdaptiveLimiter` is AIMD (as TCP congestion control): the limit starts at the configured
`ModelConfig.concurrency`; a 429 halves it (never below 1), at most once per "round"
(429s from calls that started before the last cut are echoes of the same overload and
do not cut again); every success adds `1/limit`, so the limit climbs back by about one
per round of successes until it reaches the configured maximum. A provider whose real
cap is below our setting thus costs some time and retries, never answers.

Halving on every probe would leave a provider with a fixed cap a quarter idle (the
sawtooth between cap/2 and cap). So the limiter remembers the limit that last
overloaded (the ceiling): an overload again near that ceiling, after at least half a
round of successes, means the cap has not moved, and the limit steps just below it
(minus one) instead of halving. An overload that comes fast, or far from the ceiling,
still halves, so a cap that drops is followed quickly.

`RateLimiter` wraps `aiolimiter.AsyncLimiter` (a leaky bucket) for `ModelConfig.rpm`.
Only this module and `retry.py` wait or count on the provider path.
"""

from __future__ import annotations

import asyncio
import collections
import logging
import time
from collections.abc import Callable
from typing import Self

log = logging.getLogger(__name__)

MIN_LIMIT = 1.0
"""The limit never falls below one call in flight."""
DECREASE_FACTOR = 0.5
"""Multiplicative decrease on overload (a 429)."""
NEAR_CEILING = 0.8
"""An overload at or above this share of the last overloading limit is 'near the ceiling'."""
RATE_WINDOW = 10.0
"""Seconds over which the requests-per-minute budget is spread."""


class Permit:
    """One slot held by a call; remembers when it started so old 429s cut only once."""

    __slots__ = ("started",)

    def __init__(self, started: float) -> None:
        self.started = started


class AdaptiveLimiter:
    """AIMD concurrency limit for one model on one event loop.

    Use `async with limiter.slot() as permit:` around one HTTP attempt and report its
    outcome with `on_overload(permit)` (a 429) or `on_success()`.
    """

    def __init__(
        self, max_limit: int, *, name: str = "", clock: Callable[[], float] = time.monotonic
    ) -> None:
        if max_limit < 1:
            raise ValueError(f"max_limit must be >= 1, got {max_limit}")
        self.name = name
        self.max_limit = float(max_limit)
        self.limit = float(max_limit)
        self.in_flight = 0
        self.max_in_flight = 0
        self.decreases = 0
        self.ceiling: float | None = None
        """The limit at the last overload: where the provider's cap seems to be."""
        self._successes_since_cut = 0
        self._last_decrease = float("-inf")
        self._clock = clock
        self._waiters: collections.deque[asyncio.Future[None]] = collections.deque()

    @property
    def effective(self) -> int:
        """Whole calls allowed in flight now."""
        return max(int(MIN_LIMIT), int(self.limit))

    async def acquire(self) -> Permit:
        """Wait (first come, first served) for a free slot."""
        while self.in_flight >= self.effective:
            waiter = asyncio.get_running_loop().create_future()
            self._waiters.append(waiter)
            try:
                await waiter
            except asyncio.CancelledError:
                self._forget(waiter)
                self._wake()  # a slot we were handed, or our place in line, goes to the next
                raise
            self._forget(waiter)
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        return Permit(self._clock())

    def release(self) -> None:
        """Give the slot back (synchronous, so a cancelled call cannot leak its slot)."""
        self.in_flight -= 1
        self._wake()

    def _forget(self, waiter: asyncio.Future[None]) -> None:
        try:
            self._waiters.remove(waiter)
        except ValueError:
            pass

    def _wake(self) -> None:
        """Hand free slots to the oldest waiters (woken ones not yet running count as taken)."""
        free = self.effective - self.in_flight
        for waiter in self._waiters:
            if free <= 0:
                break
            if waiter.cancelled():
                continue
            if not waiter.done():
                waiter.set_result(None)
            free -= 1

    def slot(self) -> _Slot:
        """`async with limiter.slot() as permit:` holds one slot for one attempt."""
        return _Slot(self)

    def on_overload(self, permit: Permit | None = None) -> bool:
        """A 429: cut the limit unless this call started before the last cut. Returns True if cut.

        Near the remembered ceiling, after half a round of successes, the cut is one
        slot (the cap has not moved); otherwise the limit halves.
        """
        if permit is not None and permit.started <= self._last_decrease:
            return False
        old = self.limit
        settled = (self.ceiling is not None and old >= self.ceiling * NEAR_CEILING
                   and self._successes_since_cut >= old / 2)
        self.limit = max(MIN_LIMIT, old - 1.0 if settled else old * DECREASE_FACTOR)
        self.ceiling = old
        self._successes_since_cut = 0
        self._last_decrease = self._clock()
        self.decreases += 1
        log.debug("model %s overloaded: concurrency %.1f -> %.1f", self.name, old, self.limit)
        return True

    def on_success(self) -> None:
        """A success: grow the limit by 1/limit (about +1 per round), up to the maximum."""
        self._successes_since_cut += 1
        if self.limit < self.max_limit:
            self.limit = min(self.max_limit, self.limit + 1.0 / self.limit)
            self._wake()


class _Slot:
    def __init__(self, limiter: AdaptiveLimiter) -> None:
        self._limiter = limiter

    async def __aenter__(self) -> Permit:
        return await self._limiter.acquire()

    async def __aexit__(self, *exc: object) -> None:
        self._limiter.release()


class RateLimiter:
    """At most `rpm` call starts per minute (0 = no limit), via `aiolimiter.AsyncLimiter`."""

    def __init__(self, rpm: int) -> None:
        self.rpm = rpm
        self._limiter = None
        if rpm > 0:
            from aiolimiter import AsyncLimiter

            # The same average rate over a 10 s window: bursts of rpm/6, not a whole
            # minute's worth at once (providers often enforce sub-minute windows too).
            window = RATE_WINDOW if rpm * RATE_WINDOW >= 60.0 else 60.0
            self._limiter = AsyncLimiter(rpm * window / 60.0, window)

    async def __aenter__(self) -> Self:
        if self._limiter is not None:
            await self._limiter.acquire()
        return self

    async def __aexit__(self, *exc: object) -> None:
        return None
