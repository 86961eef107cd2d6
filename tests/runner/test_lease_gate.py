"""A job whose lease may have run out sends no model call: every attempt waits at the
gate its job sets (the partition test, tests/runner/test_partition.py, shows why on two
hosts; these check the parts on one)."""
from __future__ import annotations

import asyncio
import time

import pytest

from evalcore.providers.base import ChatRequest, ModelConfig
from evalcore.providers.client import ModelClient, close_clients
from evalcore.providers.retry import ATTEMPT_GATE
from evalcore.runner import jobs as runner_jobs
from evalcore.runner.jobs import JobContext, execute_job
from evalcore.store.jobs import Fence, claim_job, create_job, get_job
from tests.fakes.fault_server import FaultServer


def test_no_attempt_is_sent_while_the_gate_is_closed():
    with FaultServer() as server:
        config = ModelConfig(name="fake", kind="openai", base_url=server.openai_url,
                             model="fake")

        async def main() -> tuple[int, bool]:
            reached, door = asyncio.Event(), asyncio.Event()

            async def gate() -> None:
                reached.set()
                await door.wait()

            ATTEMPT_GATE.set(gate)
            client = ModelClient(config)
            try:
                call = asyncio.create_task(client.chat(ChatRequest.user("What is 2 + 3?")))
                await asyncio.wait_for(reached.wait(), 30)
                sent_while_closed = server.stats.requests
                door.set()
                reply = await asyncio.wait_for(call, 30)
            finally:
                await close_clients()
            return sent_while_closed, reply.ok

        assert asyncio.run(main()) == (0, True)
        assert server.stats.requests == 1


def test_a_job_handler_runs_behind_its_lease_gate(engine, monkeypatch):
    async def handler(ctx: JobContext) -> dict:
        return {"gated": ATTEMPT_GATE.get() == ctx.until_lease_held}

    monkeypatch.setitem(runner_jobs.HANDLERS, "variants", handler)
    job = claim_job(engine, "w", job_id=create_job(engine, "variants"))
    assert asyncio.run(execute_job(engine, job, "w")) == "done"
    assert get_job(engine, job.id).result == {"gated": True}
    assert ATTEMPT_GATE.get() is None  # set for the handler's tasks only


def test_the_lease_is_known_held_for_one_lease_after_the_last_renewal(engine):
    job = claim_job(engine, "w", job_id=create_job(engine, "run"))
    ctx = JobContext(engine, job, Fence(int(job.id), int(job.token), lease_s=3.0), "w")
    assert ctx.lease_held()
    ctx.renewed_at = time.monotonic() - 3.0
    assert not ctx.lease_held()

    async def renewed() -> None:
        waiting = asyncio.create_task(ctx.until_lease_held())
        assert await ctx.renew() is False  # went through: held again
        await asyncio.wait_for(waiting, 10)

    asyncio.run(renewed())
    assert ctx.lease_held()


@pytest.fixture(autouse=True)
def _no_gate_left() -> None:
    assert ATTEMPT_GATE.get() is None
