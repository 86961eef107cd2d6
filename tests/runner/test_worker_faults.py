"""Faults around the engine, in-process: a job whose code raises is failed with its error
and the worker goes on; a worker whose database is unreachable says so and keeps trying."""
from __future__ import annotations

import asyncio
import logging
import time

import pytest

from evalcore.runner import jobs as runner_jobs
from evalcore.runner.worker import Worker
from evalcore.store import jobs


def test_a_raising_job_is_failed_and_the_worker_carries_on(engine, monkeypatch):
    async def boom(ctx):  # noqa: ANN001, ANN202
        raise ValueError("the attack engine broke on item 3")

    async def fine(ctx):  # noqa: ANN001, ANN202
        return {"ok": True}

    monkeypatch.setitem(runner_jobs.HANDLERS, "rejudge", boom)
    monkeypatch.setitem(runner_jobs.HANDLERS, "judge_analysis", fine)
    bad = jobs.create_job(engine, "rejudge")
    good = jobs.create_job(engine, "judge_analysis")

    async def main() -> int:
        return await Worker(engine, jobs=1, poll_s=0.05).run(once=True)

    assert asyncio.run(main()) == 2
    failed = jobs.get_job(engine, bad)
    assert failed.status == "failed" and failed.error == ("ValueError: the attack engine "
                                                          "broke on item 3")
    assert jobs.get_job(engine, good).status == "done"
    assert jobs.claim_job(engine, "w2") is None  # failed is not claimed again


def test_a_worker_without_its_database_logs_and_keeps_trying(caplog):
    from evalcore.runner.outage import database
    from evalcore.store.db import make_engine
    from tests.fakes.postgres import free_port

    dead = make_engine(f"postgresql+psycopg://nobody@127.0.0.1:{free_port()}/none",
                       migrate=False)
    worker = Worker(dead, jobs=1, poll_s=0.05, name="lonely")

    async def main() -> None:
        task = asyncio.create_task(worker.run())
        deadline = time.monotonic() + 30  # a loaded machine polls slowly
        while database(dead).failures < 2 and time.monotonic() < deadline:
            await asyncio.sleep(0.05)  # until it has tried twice
        worker.stop.set()
        await asyncio.wait_for(task, 10)

    with caplog.at_level(logging.WARNING, logger="evalcore.worker"):
        asyncio.run(main())
    said = [r.getMessage() for r in caplog.records if "database unreachable" in r.getMessage()]
    assert len(said) == 1 and "lonely" in said[0], said  # once, however many tries (issue 23)
    assert database(dead).failures >= 2 and database(dead).down  # it kept trying
    dead.dispose()


@pytest.fixture(autouse=True)
def _handlers():  # noqa: ANN202 - the real handlers are registered on import
    import evalcore.runner.job_types  # noqa: F401

    yield


def test_an_outage_is_said_twice_and_other_errors_each_time(caplog):
    from sqlalchemy.exc import IntegrityError, OperationalError

    from evalcore.runner.outage import Outage

    lost = OperationalError("SELECT 1", {}, Exception("connection refused\nmore\nlines"))
    state = Outage()
    with caplog.at_level(logging.DEBUG, logger="evalcore.worker"):
        for _ in range(50):
            state.failed("storing calls", lost)
        state.failed("storing calls", IntegrityError("INSERT", {}, Exception("duplicate")))
        state.ok()
        state.ok()
    said = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(said) == 3 and all("\n" not in line for line in said), said
    assert said[0].startswith("database unreachable while storing calls")
    assert "IntegrityError" in said[1]  # not an outage: said every time
    assert said[2].startswith("database back after") and "(50 failed tries" in said[2]
    assert not state.down
