"""A job whose lease may have run out starts no model call: its shares grant no slot and
its retries wait (the partition test, tests/runner/test_partition.py, shows why on two
hosts; these check the parts on one)."""
from __future__ import annotations

import asyncio
import time

from evalcore.providers.retry import RETRY_GATE, RetryBudget
from evalcore.runner.budget import ModelShare
from evalcore.runner.jobs import JobContext
from evalcore.store.jobs import Fence, claim_job, create_job


def test_a_share_grants_no_slot_while_the_lease_may_have_run_out(engine):
    held = [True]

    async def main() -> list[int]:
        share = ModelShare(engine, "m", "job1:answer", capacity=4, may_call=lambda: held[0])
        caps = []
        async with share as gate:
            caps.append(gate.cap)
            held[0] = False  # no renewal went through for a lease
            await share._sync()
            caps.append(gate.cap)
            held[0] = True  # one went through again: the calls go on
            await share._sync()
            caps.append(gate.cap)
        return caps

    assert asyncio.run(main()) == [4, 0, 4]


def test_a_retry_waits_for_the_gate_its_job_set():
    async def main() -> None:
        door = asyncio.Event()

        async def gate() -> None:
            await door.wait()

        RETRY_GATE.set(gate)
        waiting = asyncio.create_task(RetryBudget(3, 10).sleep(0))
        for _ in range(10):  # the loop runs the retry's sleep(0), then reaches the gate
            await asyncio.sleep(0)
        assert not waiting.done()  # the retry is held there
        door.set()
        await asyncio.wait_for(waiting, 5)

    asyncio.run(main())


def test_the_lease_is_known_held_for_one_lease_after_the_last_renewal(engine):
    job = claim_job(engine, "w", job_id=create_job(engine, "run"))
    ctx = JobContext(engine, job, Fence(int(job.id), int(job.token), lease_s=3.0), "w")
    assert ctx.lease_held()
    ctx.renewed_at = time.monotonic() - 3.0
    assert not ctx.lease_held()
    assert asyncio.run(ctx.renew()) is False  # went through: held again
    assert ctx.lease_held()
