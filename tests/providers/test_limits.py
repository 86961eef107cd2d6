"""AIMD limiter and rate limiter, offline with a fake clock."""

from __future__ import annotations

import asyncio

import pytest

from evalcore.providers.limits import AdaptiveLimiter, Permit, RateLimiter


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_overload_halves_once_per_round_then_grows_back():
    clock = Clock()
    lim = AdaptiveLimiter(8, clock=clock)
    old = [Permit(clock.now) for _ in range(4)]  # calls in flight before the overload
    clock.now = 1.0
    assert lim.on_overload(old[0]) is True
    assert lim.limit == 4
    # echoes from calls started before the cut do not cut again
    assert [lim.on_overload(p) for p in old[1:]] == [False, False, False]
    assert lim.limit == 4
    clock.now = 2.0
    assert lim.on_overload(Permit(1.5)) is True  # a new round of overload
    assert lim.limit == 2
    for _ in range(200):
        lim.on_success()
    assert lim.limit == 8  # additive increase back to, and not past, the maximum


def test_additive_increase_is_about_one_per_round():
    lim = AdaptiveLimiter(10)
    lim.limit = 4.0
    for _ in range(4):
        lim.on_success()
    assert 4.8 < lim.limit < 5.1


def test_never_below_one():
    clock = Clock()
    lim = AdaptiveLimiter(3, clock=clock)
    for step in range(10):
        clock.now = float(step + 1)
        lim.on_overload(Permit(clock.now - 0.5))
    assert lim.limit == 1.0 and lim.effective == 1


def test_rejects_zero():
    with pytest.raises(ValueError):
        AdaptiveLimiter(0)


def test_acquire_respects_effective_limit():
    async def main() -> tuple[int, int]:
        lim = AdaptiveLimiter(6)
        lim.limit = 2.0
        peak = 0

        async def work() -> None:
            nonlocal peak
            async with lim.slot():
                peak = max(peak, lim.in_flight)
                await asyncio.sleep(0.001)

        await asyncio.gather(*(work() for _ in range(20)))
        return peak, lim.in_flight

    peak, left = asyncio.run(main())
    assert peak == 2 and left == 0


def test_rate_limiter_zero_is_unlimited_and_positive_counts():
    async def main() -> int:
        none = RateLimiter(0)
        for _ in range(1000):
            async with none:
                pass
        limited = RateLimiter(60)  # 10 per 10 s window
        done = 0

        async def one() -> None:
            nonlocal done
            async with limited:
                done += 1

        tasks = [asyncio.ensure_future(one()) for _ in range(30)]
        await asyncio.sleep(0.05)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        return done

    assert asyncio.run(main()) == 10


def test_cancelled_waiters_do_not_leak_or_block_slots():
    async def main() -> tuple[bool, bool, int, int]:
        lim = AdaptiveLimiter(1)
        await lim.acquire()
        waiters = [asyncio.ensure_future(lim.acquire()) for _ in range(4)]
        await asyncio.sleep(0)
        waiters[0].cancel()  # cancelled while queued
        await asyncio.sleep(0)
        lim.release()  # hands the slot to waiters[1] ...
        waiters[1].cancel()  # ... which is cancelled before it runs: the slot must move on
        for _ in range(3):
            await asyncio.sleep(0)
        second_got_it = waiters[2].done() and not waiters[2].cancelled()
        third_waits = not waiters[3].done()
        lim.release()
        await asyncio.gather(*waiters, return_exceptions=True)
        lim.release()
        return second_got_it, third_waits, lim.in_flight, len(lim._waiters)

    assert asyncio.run(main()) == (True, True, 0, 0)


def test_overload_again_near_the_ceiling_steps_down_one_instead_of_halving():
    clock = Clock()
    lim = AdaptiveLimiter(50, clock=clock)
    clock.now = 1.0
    lim.on_overload(Permit(0.5))  # first overload: no ceiling yet, halve
    assert (lim.limit, lim.ceiling) == (25, 50)
    lim.limit = 11.0  # grown back near a provider cap of 10 ...
    lim.ceiling = 12.0
    for _ in range(6):  # ... with half a round of successes since the cut
        lim.on_success()
    before = lim.limit
    clock.now = 2.0
    assert lim.on_overload(Permit(1.5)) is True
    assert lim.limit == before - 1 and lim.ceiling == before


def test_fast_repeat_overload_still_halves_so_a_dropping_cap_is_followed():
    clock = Clock()
    lim = AdaptiveLimiter(20, clock=clock)
    lim.limit, lim.ceiling = 10.0, 10.5
    for _ in range(5):
        lim.on_success()
    clock.now = 1.0
    lim.on_overload(Permit(0.5))  # near the ceiling after successes: one step
    stepped = lim.limit
    clock.now = 2.0
    lim.on_overload(Permit(1.5))  # again at once, no successes: the cap fell, halve
    assert lim.limit == stepped * 0.5
