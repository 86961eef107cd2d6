"""A job's share of a model's concurrency, kept in step with every other job's.

`SlotGate` bounds this job's calls in flight to a cap that may change while it runs;
`ModelShare` keeps that cap equal to what `store.budget.sync_budget` grants this job,
re-synced every `SYNC_S`. Two runs on one model in two worker processes thus never have
more calls in flight together than the model's `concurrency`.
"""
from __future__ import annotations

import asyncio
import logging
import time
from typing import Any, Optional

from sqlalchemy.engine import Engine

from evalcore.runner.outage import database

log = logging.getLogger(__name__)

SYNC_S = 1.0
"""Seconds between budget syncs: how fast a newcomer gets its share."""


class SlotGate:
    """A semaphore whose size can change: `async with gate:` around one model call."""

    def __init__(self, cap: int = 0) -> None:
        self.cap = cap
        self.in_flight = 0
        self.max_in_flight = 0
        self._changed = asyncio.Condition()

    async def __aenter__(self) -> "SlotGate":
        async with self._changed:
            await self._changed.wait_for(lambda: self.in_flight < self.cap)
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        return self

    async def __aexit__(self, *exc: Any) -> None:
        async with self._changed:
            self.in_flight -= 1
            self._changed.notify()

    async def set_cap(self, cap: int) -> None:
        async with self._changed:
            self.cap = cap
            self._changed.notify_all()


class ModelShare:
    """This job's slots of one model: `async with share:` syncs first, then keeps syncing
    in the background until the block ends, and gives the slots back at the end."""

    def __init__(self, engine: Engine, model: str, holder: str, *, capacity: int,
                 want: Optional[int] = None) -> None:
        self.engine = engine
        self.model = model
        self.holder = holder
        self.capacity = capacity
        self.want = want or capacity
        self.gate = SlotGate()
        self._task: Optional[asyncio.Task] = None
        self._last_ok = time.monotonic()

    async def _sync(self) -> None:
        from evalcore.store.budget import BUDGET_LEASE_S, sync_budget

        try:
            cap = await asyncio.to_thread(sync_budget, self.engine, self.model, self.holder,
                                          capacity=self.capacity, want=self.want,
                                          in_flight=self.gate.in_flight)
            self._last_ok = time.monotonic()
            database(self.engine).ok()
        except Exception as exc:  # noqa: BLE001 - a lost database must not kill the run
            database(self.engine).failed(f"the rate budget of {self.model} was synced", exc)
            if time.monotonic() - self._last_ok < BUDGET_LEASE_S / 2:
                return  # keep the slots a while
            if self.gate.cap:
                log.warning("budget of %s unsynced for %.0f s: pausing its calls", self.model,
                            time.monotonic() - self._last_ok)
            cap = 0  # our row may have expired: others may hold our slots now
        if cap != self.gate.cap:
            await self.gate.set_cap(cap)

    async def _keep(self) -> None:
        while True:
            await asyncio.sleep(SYNC_S)
            await self._sync()

    async def __aenter__(self) -> SlotGate:
        await self._sync()
        self._task = asyncio.create_task(self._keep())
        return self.gate

    async def __aexit__(self, *exc: Any) -> None:
        from evalcore.store.budget import drop_budget

        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
        try:
            await asyncio.to_thread(drop_budget, self.engine, self.model, self.holder)
        except Exception as exc:  # noqa: BLE001 - the row expires by itself
            database(self.engine).failed(f"the slots of {self.model} were given back", exc)
