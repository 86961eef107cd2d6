"""A job's share of a model's concurrency, kept in step with every other job's.

`SlotGate` bounds this job's calls in flight to a cap that may change while it runs;
`ModelShare` keeps that cap equal to what `store.model_share.sync_share` grants this job.
Two runs on one model in two worker processes thus never have more calls in flight
together than the model's `concurrency`.

Slots left idle are the cost of sharing, so a holder syncs every `SYNC_S`, every
`CATCH_UP_S` while it has less than its fair share (others are giving slots back), and at
once when it has given slots back itself (its calls in flight fell to a lowered cap) or
wants fewer (the run's last calls): the others then grow into them within `CATCH_UP_S`.
"""
from __future__ import annotations

import asyncio
import logging
import time
import weakref
from typing import Any, Optional

from sqlalchemy.engine import Engine

from evalcore.runner.outage import database
from evalcore.store.model_share import BUDGET_LEASE_S, drop_share, sync_share

log = logging.getLogger(__name__)

SYNC_S = 0.5
"""Seconds between budget syncs while a holder has its fair share."""
CATCH_UP_S = 0.1
"""Seconds between syncs while a holder waits for slots that others are giving back."""
GIVE_BACK_S = 0.02
"""A sync to give slots back waits this long, so that calls ending together make one."""
_LIVE: "weakref.WeakSet[ModelShare]" = weakref.WeakSet()
"""The shares held in this process (`live_shares`: what a hung worker's dump shows)."""


def live_shares() -> list[str]:
    """One line per share held in this process: its gate and its last sync (a worker's
    state dump, so that a run waiting for slots says so)."""
    return sorted(share.describe() for share in list(_LIVE))


class SlotGate:
    """A semaphore whose size can change: `async with gate:` around one model call."""

    def __init__(self, cap: int = 0) -> None:
        self.cap = cap
        self.in_flight = 0
        self.max_in_flight = 0
        self._changed = asyncio.Condition()
        self._waiting = 0
        """Calls waiting for a slot: while there are any, a newcomer queues behind them."""
        self.on_exit: Optional[Any] = None
        """Called after a call leaves (the share uses it to give back slots at once)."""

    async def __aenter__(self) -> "SlotGate":
        # A free slot and no one queued: taken at once (one loop thread, no await between
        # the check and the count), the condition's lock only when a call has to wait.
        if self.in_flight >= self.cap or self._waiting:
            async with self._changed:
                self._waiting += 1
                try:
                    await self._changed.wait_for(lambda: self.in_flight < self.cap)
                finally:
                    self._waiting -= 1
                self._enter()
        else:
            self._enter()
        return self

    def _enter(self) -> None:
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)

    async def __aexit__(self, *exc: Any) -> None:
        self.in_flight -= 1
        if self._waiting:
            async with self._changed:
                self._changed.notify()
        if self.on_exit is not None:
            self.on_exit()

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
        self.gate.on_exit = self._check_held
        self._task: Optional[asyncio.Task] = None
        self._last_ok = time.monotonic()
        self._held = 0
        """Slots on record for us after the last sync (our grant, or more while calls
        beyond a lowered grant were still in flight)."""
        self._short = False
        """Whether the last grant was below our fair share."""
        self._wake = asyncio.Event()
        self._syncing: Optional[asyncio.Future] = None
        """The last sync's thread: the slots are given back only after it wrote its row."""
        self._sync_started = 0.0

    def describe(self) -> str:
        keeper = ("not started" if self._task is None else "dead" if self._task.done()
                  else "alive")
        running = ("" if self._syncing is None or self._syncing.done() else
                   f", a sync running for {time.monotonic() - self._sync_started:.1f} s")
        return (f"{self.holder} on {self.model}: cap {self.gate.cap}, in flight "
                f"{self.gate.in_flight}, want {self.want}, held {self._held}, short "
                f"{self._short}, last sync ok {time.monotonic() - self._last_ok:.1f} s ago"
                f"{running}, syncing {keeper}")

    def _check_held(self) -> None:
        """Sync soon when fewer slots than we hold on record would do now."""
        if max(min(self.gate.cap, self.want), self.gate.in_flight) < self._held:
            self._wake.set()

    def want_at_most(self, calls: int) -> None:
        """The job has only `calls` left to have in flight (the tail of a run): record the
        smaller claim so the others grow into the rest."""
        if calls < self.want:
            self.want = max(calls, 0)
            self._check_held()

    async def _sync(self) -> None:
        try:
            in_flight = self.gate.in_flight
            self._sync_started = time.monotonic()
            self._syncing = asyncio.ensure_future(asyncio.to_thread(
                sync_share, self.engine, self.model, self.holder, capacity=self.capacity,
                want=self.want, in_flight=in_flight))
            grant = await asyncio.shield(self._syncing)  # its thread outlives a cancel
            cap, self._short = grant.allowed, grant.allowed < grant.share
            self._held = max(cap, in_flight)
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
            try:
                await asyncio.wait_for(self._wake.wait(), CATCH_UP_S if self._short else SYNC_S)
                await asyncio.sleep(GIVE_BACK_S)
            except asyncio.TimeoutError:
                pass
            self._wake.clear()
            await self._sync()

    async def __aenter__(self) -> SlotGate:
        _LIVE.add(self)
        await self._sync()
        self._task = asyncio.create_task(self._keep())
        return self.gate

    async def __aexit__(self, *exc: Any) -> None:
        _LIVE.discard(self)
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
        if self._syncing is not None:  # else its row, written after ours is dropped,
            await asyncio.gather(self._syncing, return_exceptions=True)  # would hold slots
        try:
            await asyncio.to_thread(drop_share, self.engine, self.model, self.holder)
        except Exception as exc:  # noqa: BLE001 - the row expires by itself
            database(self.engine).failed(f"the slots of {self.model} were given back", exc)
