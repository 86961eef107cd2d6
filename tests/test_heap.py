"""`evalcore.heap`: the heap frozen for a block of work (a command, a run on
`event_loop.run`) is returned to the collector when the outermost block ends, also when
the work fails; the collector is paused only inside `collector_paused`."""
from __future__ import annotations

import gc
import weakref

import pytest

from evalcore.heap import collector_paused, frozen_heap
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


def test_only_the_outermost_block_unfreezes() -> None:
    with frozen_heap():
        outer = gc.get_freeze_count()
        made_since = [[] for _ in range(10)]  # tracked objects the inner block freezes
        with frozen_heap():
            assert gc.get_freeze_count() >= outer + len(made_since)
        # the inner end unfroze nothing (frozen objects freed meanwhile only leave the count)
        assert gc.get_freeze_count() >= outer + len(made_since)
    assert gc.get_freeze_count() == 0


def test_the_collector_is_paused_only_inside_the_block() -> None:
    assert gc.isenabled()
    with collector_paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()  # paused already: the block leaves it so
    try:
        with collector_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()
