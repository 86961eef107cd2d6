"""A pass of judge calls over a run's stored answers (re-judging, judge analysis), as a job.

`run_pass` sends one call per todo entry within the job's share of the judge model's
concurrency and stores the finished rows every `FLUSH_EVERY` calls or `FLUSH_S` seconds,
fenced by the job's lease (the same transaction renews it and sets the job's progress):
an interrupted pass loses at most the calls in flight, and a takeover never stores a
judgement twice (the unique call unit) nor sends a stored one again (the todo list is
what the database does not hold yet).
"""
from __future__ import annotations

import asyncio
import time
from typing import Any, Awaitable, Callable, Sequence, TypeVar

from evalcore.providers.base import ModelConfig
from evalcore.providers.client import get_client
from evalcore.store import queries

T = TypeVar("T")
FLUSH_EVERY = 20
FLUSH_S = 1.0


async def run_pass(ctx: Any, judge: ModelConfig, todo: Sequence[T],
                   call_one: Callable[[Any, T], Awaitable[dict[str, Any]]], *,
                   already: int = 0, total: int | None = None) -> dict[str, int]:
    """Execute `call_one(client, entry)` for every entry; returns {"stored", "errors"}.

    The job's progress reads `already` + stored of `total` (default `already` + the todo):
    a pass asked in waves gives its whole size, so the total does not jump per wave."""
    total = already + len(todo) if total is None else max(total, already + len(todo))
    counts = {"stored": 0, "errors": 0}
    pending: list[dict[str, Any]] = []
    last = time.monotonic()

    async def store() -> None:
        nonlocal pending, last
        rows, pending = pending, []
        await asyncio.to_thread(queries.record_calls_fenced, ctx.engine, rows, fence=ctx.fence,
                                done=already + counts["stored"], total=total)
        last = time.monotonic()

    client = get_client(judge)
    async with ctx.share(judge, "pass") as slots:
        async def one(entry: T) -> dict[str, Any]:
            async with slots:
                return await call_one(client, entry)

        tasks = [asyncio.create_task(one(entry)) for entry in todo]
        try:
            for finished in asyncio.as_completed(tasks):
                row = await finished
                counts["stored"] += 1
                counts["errors"] += row.get("error") is not None or row.get("extracted_error", False)
                row.pop("extracted_error", None)
                pending.append(row)
                if len(pending) >= FLUSH_EVERY or time.monotonic() - last >= FLUSH_S:
                    await store()
                if ctx.cancelled.is_set():
                    break
        except asyncio.CancelledError:  # the worker stops: keep what is finished
            if pending:
                await store()
            raise
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
        if pending:
            await store()
    return counts
