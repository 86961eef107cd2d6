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


def waiting(lim: AdaptiveLimiter, n: int = 1) -> asyncio.AbstractEventLoop:
    """Make `n` calls wait for a slot (growth needs someone waiting); returns the loop to close."""
    loop = asyncio.new_event_loop()
    for _ in range(n):
        fut = loop.create_future()
        fut.set_result(None)  # already handed a slot: _wake skips it, the queue is not empty
        lim._waiters.append(fut)
    return loop


def burst(lim: AdaptiveLimiter, clock: Clock, in_flight: int, rejected: int) -> list[bool]:
    """`in_flight` calls started at clock.now; `rejected` of them come back 429 a moment later
    (each releases its slot after reporting, as the client does)."""
    permits = [Permit(clock.now) for _ in range(in_flight)]
    lim.in_flight = in_flight
    clock.now += 0.01
    cuts = []
    for permit in permits[:rejected]:
        cuts.append(lim.on_overload(permit))
        lim.in_flight -= 1
    return cuts


def test_a_burst_of_429s_cuts_by_the_overshoot_to_what_the_provider_admitted():
    clock = Clock()
    lim = AdaptiveLimiter(50, clock=clock)
    cuts = burst(lim, clock, in_flight=50, rejected=10)  # the provider admits 40
    assert cuts == [True] + [False] * 9  # one burst: one decrease, the rest are its echoes
    assert lim.limit == 40 and lim.decreases == 1 and lim.ceiling == 50


def test_a_burst_never_cuts_below_half():
    clock = Clock()
    lim = AdaptiveLimiter(50, clock=clock)
    burst(lim, clock, in_flight=50, rejected=45)  # a rate limit: nearly everything is 429
    assert lim.limit == 25
    clock.now += 1
    burst(lim, clock, in_flight=25, rejected=25)  # the next burst halves again
    assert lim.limit == 12.5 and lim.decreases == 2


def test_a_429_with_few_calls_in_flight_cuts_to_them():
    clock = Clock()
    lim = AdaptiveLimiter(20, clock=clock)
    lim.in_flight = 14  # the provider is full although we send fewer than our limit
    clock.now = 1.0
    assert lim.on_overload(Permit(0.5)) is True
    assert lim.limit == 13


def test_growth_about_one_per_round_only_while_calls_wait():
    lim = AdaptiveLimiter(10)
    lim.limit = 4.0
    for _ in range(4):
        lim.on_success()
    assert lim.limit == 4.0  # nobody waits for a slot: the limit is not what holds us back
    loop = waiting(lim)
    for _ in range(4):
        lim.on_success()
    assert 4.8 < lim.limit < 5.1
    for _ in range(200):
        lim.on_success()
    assert lim.limit == 10  # and not past the maximum
    loop.close()


def test_a_cap_hit_again_is_probed_less_often_until_the_cap_rises():
    clock = Clock()
    lim = AdaptiveLimiter(50, clock=clock)
    loop = waiting(lim)
    burst(lim, clock, in_flight=50, rejected=10)
    rounds_between_probes = []
    for _ in range(5):
        successes = 0
        while lim.effective <= 40:  # grow until one more call than the cap is in flight
            lim.on_success()
            successes += 1
        rounds_between_probes.append(round(successes / 40))
        clock.now += 1
        burst(lim, clock, in_flight=41, rejected=1)
        assert lim.limit == 40
    assert rounds_between_probes == [1, 1, 2, 4, 8]
    for _ in range(10_000):  # the provider lifted its cap: growth past the ceiling
        lim.on_success()
        if lim.limit > 43:
            break
    assert lim.slowdown == 1 and lim.limit > 43
    loop.close()


def test_never_below_one():
    clock = Clock()
    lim = AdaptiveLimiter(3, clock=clock)
    for step in range(10):
        clock.now = float(step + 1)
        burst(lim, clock, in_flight=lim.effective, rejected=lim.effective)
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
