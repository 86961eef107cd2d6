"""`SlotGate`: never more calls inside than its cap, a newcomer queues behind calls already
waiting, and a raised cap lets the waiting in."""
from __future__ import annotations

import asyncio

from evalcore.runner.model_share import SlotGate


def test_the_cap_bounds_calls_and_the_waiting_go_first() -> None:
    async def main() -> list[str]:
        gate = SlotGate(cap=1)
        order: list[str] = []
        release = asyncio.Event()

        async def call(name: str) -> None:
            async with gate:
                order.append(name)
                assert gate.in_flight <= gate.cap
                await release.wait()

        first = asyncio.create_task(call("first"))
        await asyncio.sleep(0)
        waiting = asyncio.create_task(call("waiting"))
        await asyncio.sleep(0)
        assert order == ["first"] and gate.in_flight == 1
        release.set()
        await first  # its slot frees; a newcomer arriving now queues behind "waiting"
        newcomer = asyncio.create_task(call("newcomer"))
        await asyncio.gather(waiting, newcomer)
        assert gate.in_flight == 0 and gate.max_in_flight == 1
        return order

    assert asyncio.run(main()) == ["first", "waiting", "newcomer"]


def test_a_raised_cap_lets_the_waiting_in_and_a_cancelled_waiter_leaves_no_trace() -> None:
    async def main() -> None:
        gate = SlotGate(cap=0)
        inside = asyncio.Event()
        hold = asyncio.Event()

        async def call() -> None:
            async with gate:
                inside.set()
                await hold.wait()

        gone = asyncio.create_task(call())
        await asyncio.sleep(0)
        gone.cancel()
        await asyncio.gather(gone, return_exceptions=True)
        assert gate._waiting == 0  # a later call takes a free slot at once
        task = asyncio.create_task(call())
        await asyncio.sleep(0)
        assert not inside.is_set()
        await gate.set_cap(2)
        await asyncio.wait_for(inside.wait(), 1)
        async with gate:  # a free slot and no one waiting: in at once
            assert gate.in_flight == 2
        hold.set()
        await task
        assert gate.in_flight == 0

    asyncio.run(main())
