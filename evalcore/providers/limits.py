"""How many calls a model may have in flight, and how many it may start per minute.

`AdaptiveLimiter` is AIMD (as TCP congestion control), tuned for providers that cap the
calls they serve at once and answer 429 above the cap. The limit starts at the configured
`ModelConfig.concurrency`.

Decrease, by the overshoot: a 429 means the provider already serves its cap, so the
calls we have in flight are at least one too many. The first 429 of a burst sets the
limit to the calls in flight minus one; every further 429 of the same burst (a call that
started before the burst's first cut) takes one more slot off: after a burst the limit
sits at what the provider admitted. A burst never cuts below half the limit it started
from (the "multiplicative" bound, so a flood of 429s from a rate limit rather than a
concurrency cap halves the limit per burst, as AIMD does). Halving on the first 429
instead, as plain AIMD does, left a provider that admits 40 of our 50 calls running at
25 for most of a run (the limit climbs back by one per round).

Increase, slowly near a known cap: every success adds `1/limit` (about one slot per
round of answers) while calls are waiting for a slot (a limit nobody waits for is not
what holds a run back, so it does not grow: RFC 7661's "application-limited"). A 429
again within one slot of the limit that last overloaded (the ceiling) means the cap has not moved: each
such repeat halves the growth rate (up to `MAX_PROBE_SLOWDOWN`), so the limit probes the
cap less and less often instead of costing a rejected call every round. Growing past the
ceiling without a 429 means the cap rose: the growth rate is reset.

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
"""One burst of 429s cuts the limit to no less than this share of where it started."""
MAX_PROBE_SLOWDOWN = 16
"""A cap hit again and again is probed at most this many times less often than once a round."""
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
        """Bursts of 429s (each lowers the limit once or more)."""
        self.ceiling: float | None = None
        """The limit when the last burst of 429s began: where the provider's cap seems to be."""
        self.slowdown = 1
        """Growth is divided by this: doubled each time the same ceiling is hit again."""
        self._burst_floor = MIN_LIMIT
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
        """A 429 for the call holding `permit` (still in flight). Returns True if a new burst began.

        A new burst (the call started after the last one began) sets the limit to the
        calls in flight minus one; a 429 of the current burst takes one more slot off;
        neither goes below half the limit the burst started from (see the module doc).
        """
        echo = permit is not None and permit.started <= self._last_decrease
        old = self.limit
        if echo:
            self.limit = max(self._burst_floor, old - 1.0)
            log.debug("model %s: 429 in the same burst: concurrency %.1f -> %.1f",
                      self.name, old, self.limit)
            return False
        if self.ceiling is not None and abs(old - self.ceiling) <= 1.0:
            self.slowdown = min(MAX_PROBE_SLOWDOWN, self.slowdown * 2)  # same cap again
        else:
            self.slowdown = 1  # a cap never seen, or first contact: probe at the normal pace
        self.ceiling = old
        self._burst_floor = max(MIN_LIMIT, old * DECREASE_FACTOR)
        in_flight = float(self.in_flight) if permit is not None else old
        self.limit = max(self._burst_floor, min(old, in_flight) - 1.0)
        self._last_decrease = self._clock()
        self.decreases += 1
        log.debug("model %s overloaded: concurrency %.1f -> %.1f (probing 1/%d as fast)",
                  self.name, old, self.limit, self.slowdown)
        return True

    def on_success(self) -> None:
        """A success: while calls wait for a slot, grow the limit by 1/(limit x slowdown)."""
        if self.limit >= self.max_limit or not self._waiters:
            return
        self.limit = min(self.max_limit, self.limit + 1.0 / (self.limit * self.slowdown))
        if self.ceiling is not None and self.limit > self.ceiling + 1.0:
            self.slowdown = 1  # grown past the old cap without a 429: the cap rose
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
