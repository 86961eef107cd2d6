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
from collections.abc import Coroutine
from typing import Any, TypeVar

from evalcore.heap import frozen_heap

T = TypeVar("T")


def new_event_loop() -> asyncio.AbstractEventLoop:
    """A new loop: uvloop's if importable, else asyncio's default."""
    try:
        import uvloop
    except ImportError:
        return asyncio.new_event_loop()
    return uvloop.new_event_loop()


def run(coro: Coroutine[Any, Any, T]) -> T:
    """`asyncio.run(coro)` on a loop from `new_event_loop`, the heap built before it
    frozen (`evalcore.heap`: the collector would walk it at every pass of a run)."""
    with frozen_heap(), asyncio.Runner(loop_factory=new_event_loop) as runner:
        return runner.run(coro)
