"""The event loop model calls run on (the CLI's runs, the app's background loop):
uvloop's when it is installed.

Against a fast local server (vLLM, llama.cpp) a run's CPU, not the model, is the limit,
and a good part of a call's CPU is the loop itself: its scheduling and the socket
transport aiohttp reads and writes through. uvloop does that work in C (libuv); the
standard loop is the fallback where uvloop is not installed (it does not build on
Windows), with the same behaviour.
"""
from __future__ import annotations

import asyncio
import gc
from collections.abc import Coroutine, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

T = TypeVar("T")


def new_event_loop() -> asyncio.AbstractEventLoop:
    """A new loop: uvloop's if importable, else asyncio's default."""
    try:
        import uvloop
    except ImportError:
        return asyncio.new_event_loop()
    return uvloop.new_event_loop()


@contextmanager
def frozen_heap() -> Iterator[None]:
    """Leave the objects that exist now (modules, classes, the schema: hundreds of
    thousands, most of them SQLAlchemy's, pydantic's and aiohttp's) out of the cyclic
    garbage collector's passes until the block ends.

    A run allocates a few objects per call, so the collector runs often, and each of its
    older-generation passes would walk that whole import-time heap again: about a quarter
    of a fast run's CPU. Frozen objects are still freed by reference counting; only cycles
    among them wait for the block's end, which returns them to the collector."""
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def run(coro: Coroutine[Any, Any, T]) -> T:
    """`asyncio.run(coro)` on a loop from `new_event_loop`, the heap built before it
    frozen (`frozen_heap`)."""
    with frozen_heap(), asyncio.Runner(loop_factory=new_event_loop) as runner:
        return runner.run(coro)
