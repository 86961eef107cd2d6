"""The cyclic garbage collector around a process's long-lived heap.

A command imports hundreds of thousands of objects (SQLAlchemy's, pydantic's, aiohttp's,
the schema) that live as long as the process and are never garbage. A run then allocates
a few objects per call, so the collector runs often, and each of its older-generation
passes would walk that whole heap again (docs/speed.md has what that cost). So the
collector is paused while the modules load, and the heap that exists when work starts is
frozen (`gc.freeze`: left out of every pass; still freed by reference counting) until
the work ends, when it is returned to the collector.
"""
from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_lock = threading.Lock()
_depth = 0


@contextmanager
def frozen_heap() -> Iterator[None]:
    """Freeze the objects that exist now for the block; nested blocks freeze what was
    made since, and the outermost one's end unfreezes everything (so cycles among the
    frozen objects are collected again, as a process calling this repeatedly needs)."""
    global _depth
    with _lock:
        _depth += 1
        gc.freeze()
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0:
                gc.unfreeze()


@contextmanager
def collector_paused() -> Iterator[None]:
    """No collection in the block (modules being imported: nothing there is garbage)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
