"""A job whose last write meets a lost or locked database waits it out: the job ends as
its handler said, with one line when the database goes and one when it is back (the
error used to leave `execute_job` with a traceback, and in a worker the task's
exception was never retrieved)."""
from __future__ import annotations

import asyncio
import logging
import sqlite3

from sqlalchemy.exc import OperationalError

from evalcore.runner import jobs as runner_jobs
from evalcore.runner import outage
from evalcore.store import jobs


def test_a_job_end_waits_out_a_locked_database(engine, monkeypatch, caplog) -> None:
    async def handler(ctx):  # noqa: ANN001, ANN202
        return {"answer": 42}

    monkeypatch.setitem(runner_jobs.HANDLERS, "rejudge", handler)
    monkeypatch.setattr(outage, "PATIENT_BACKOFF_S", (0.01, 0.02))
    real_finish, tries = jobs.finish_job, []

    def finish_job(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        tries.append(1)
        if len(tries) <= 2:  # SQLite gave up waiting for another writer's lock
            raise OperationalError("UPDATE job", {}, sqlite3.OperationalError(
                "database is locked"))
        return real_finish(*args, **kwargs)

    monkeypatch.setattr(jobs, "finish_job", finish_job)
    job_id = jobs.create_job(engine, "rejudge", params={})
    job = jobs.claim_job(engine, "w-test", job_id=job_id)
    with caplog.at_level(logging.INFO, logger="evalcore.worker"):
        status = asyncio.run(runner_jobs.execute_job(engine, job, "w-test"))
    assert status == "done" and len(tries) == 3
    assert jobs.get_job(engine, job_id).status == "done"
    lines = [r.getMessage() for r in caplog.records]
    assert len([m for m in lines if m.startswith("database unreachable")]) == 1, lines
    assert len([m for m in lines if m.startswith("database back")]) == 1, lines
    assert not any(r.exc_info for r in caplog.records)  # no traceback
