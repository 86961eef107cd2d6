"""ProgressPump: the last figure is stored when the work ends, even when the periodic
send of that figure was cut short by the end (an import ended at "0 / 7")."""
from __future__ import annotations

import asyncio

from evalcore.runner.progress import ProgressPump


class _SlowCtx:
    """A job context whose progress write takes a while (the database is busy)."""

    on_progress = None

    def __init__(self) -> None:
        self.stored: list[tuple[int, int]] = []

    async def progress(self, done: int, total: int) -> bool:
        await asyncio.sleep(0.2)
        self.stored.append((done, total))
        return False


def test_a_periodic_send_cut_short_by_the_end_is_sent_again() -> None:
    ctx = _SlowCtx()

    async def work() -> None:
        async with ProgressPump(ctx, every_s=0.01) as pump:  # type: ignore[arg-type]
            pump(7, 7)
            await asyncio.sleep(0.05)  # the pump is now inside its (slow) send of 7 / 7

    asyncio.run(work())
    assert ctx.stored == [(7, 7)]


def test_nothing_is_sent_twice_once_stored() -> None:
    ctx = _SlowCtx()

    async def work() -> None:
        async with ProgressPump(ctx, every_s=0.01) as pump:  # type: ignore[arg-type]
            pump(3, 7)
            await asyncio.sleep(0.3)  # the periodic send of 3 / 7 completes

    asyncio.run(work())
    assert ctx.stored == [(3, 7)]
