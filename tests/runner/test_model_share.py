"""Jobs sharing one model's slots give back what they no longer use at once, not at their
next periodic sync: the periodic sync is set to 30 s here, so only the give-back path can
move slots from one holder to the other within the test."""
from __future__ import annotations

import asyncio

import pytest

from evalcore.runner import model_share
from evalcore.runner.model_share import ModelShare
from tests.runner.conftest import until


async def _hold(gate, release: asyncio.Event) -> None:  # noqa: ANN001
    async with gate:
        await release.wait()


@pytest.fixture()
def slow_periodic_sync(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(model_share, "SYNC_S", 30.0)


def test_slots_given_back_reach_the_waiting_holder_without_a_periodic_sync(
        engine, slow_periodic_sync):
    async def main() -> None:
        first = ModelShare(engine, "m", "job1:answer", capacity=8)
        second = ModelShare(engine, "m", "job2:answer", capacity=8)
        async with first as gate1:
            releases = [asyncio.Event() for _ in range(8)]
            calls = [asyncio.create_task(_hold(gate1, r)) for r in releases]
            assert await until(lambda: gate1.in_flight == 8)
            async with second as gate2:
                assert gate2.cap == 0  # every slot is in use by the first holder
                await first._sync()  # its periodic sync: its share is 4 now
                assert gate1.cap == 4
                for release in releases[:4]:
                    release.set()  # four calls end: the first holder is down to its share
                assert await until(lambda: gate2.cap == 4), gate2.cap
                for release in releases[4:]:
                    release.set()
                await asyncio.gather(*calls)

    asyncio.run(main())


def test_the_tail_of_a_run_hands_its_unwanted_slots_to_the_others(engine, slow_periodic_sync):
    async def main() -> None:
        first = ModelShare(engine, "m", "job1:answer", capacity=8)
        second = ModelShare(engine, "m", "job2:answer", capacity=8)
        async with first as gate1, second as gate2:
            assert (gate1.cap, gate2.cap) == (8, 0)
            first.want_at_most(2)  # two calls left to make: six slots go to the other
            assert await until(lambda: gate2.cap == 6), gate2.cap
            assert gate1.cap == 2  # its own sync lowered its cap to what it still wants

    asyncio.run(main())
