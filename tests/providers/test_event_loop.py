"""`event_loop.run` freezes the heap built before the run and returns it to the collector
after, also when the run fails."""
from __future__ import annotations

import gc
import weakref

import pytest

from evalcore.providers import event_loop


class _Node:
    def __init__(self) -> None:
        self.me = self  # a cycle: only the collector frees it


def test_the_heap_is_frozen_during_a_run_and_collected_again_after() -> None:
    async def frozen() -> int:
        return gc.get_freeze_count()

    gc.disable()  # the cycle must still exist when the run freezes the heap
    try:
        node = _Node()
        alive = weakref.ref(node)
        del node
        assert event_loop.run(frozen()) > 0
    finally:
        gc.enable()
    assert gc.get_freeze_count() == 0
    gc.collect()
    assert alive() is None  # back with the collector: the cycle from before the run is freed


def test_a_failed_run_unfreezes_too() -> None:
    async def fail() -> None:
        raise RuntimeError("the run failed")

    with pytest.raises(RuntimeError):
        event_loop.run(fail())
    assert gc.get_freeze_count() == 0
