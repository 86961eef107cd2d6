"""A due time's run is made under the job's fence: a worker paused (cut off, stopped)
between "is the run made?" and "make it" makes none once its job was taken over."""
from __future__ import annotations

import threading

import pytest
from sqlalchemy import func, select

from evalcore.monitor import jobs as monitor_jobs
from evalcore.runner.jobs import JobContext
from evalcore.store import schedules
from evalcore.store.jobs import Fence, LeaseLost, claim_job, expire_lease
from evalcore.store.tables import Run
from tests.monitor.conftest import add_stability_schedule
from tests.monitor.test_schedule_jobs import drain, due_now
from tests.runner.conftest import add_model

TAKEOVER_WAIT_S = 2.0
"""How long the paused worker lets the takeover run before it goes on: the takeover
finishes well within it when nothing holds it back (the old code), and must wait for the
paused worker's transaction when it is fenced (it then finishes after)."""


def test_a_paused_worker_makes_no_second_run_for_a_due_time(engine, settings, dataset,
                                                            server, monkeypatch):
    add_model(settings, server)
    sched = add_stability_schedule(engine, settings, dataset, every_s=3600)
    due_now(engine)
    row = schedules.schedule_runs(engine, sched.id)[0]
    job = claim_job(engine, "paused", kinds=["schedule"])
    ctx = JobContext(engine, job, Fence(int(job.id), int(job.token)), "paused")
    real = schedules.scheduled_run_named
    takeover = threading.Thread(target=lambda: (expire_lease(engine, job.id), drain(engine)))

    def pause_here(bind, name: str):
        """The paused worker has looked for the run (none yet); meanwhile its lease runs
        out and another worker takes the job over and makes the run."""
        found = real(bind, name)
        if not takeover.is_alive() and takeover.ident is None:
            takeover.start()
            takeover.join(TAKEOVER_WAIT_S)
        return found

    monkeypatch.setattr(schedules, "scheduled_run_named", pause_here)
    try:
        monitor_jobs._create(ctx, int(row.id))
    except LeaseLost:
        pass  # the old code's last write: refused, but the run was made before it
    finally:
        takeover.join(60)
    with engine.connect() as conn:
        runs = conn.execute(select(func.count()).select_from(Run)).scalar()
    row = schedules.get_schedule_run(engine, row.id)
    assert runs == 1, f"{runs} runs made for one due time"
    assert row.status == "created" and row.run_id is not None


@pytest.fixture(autouse=True)
def _short_lease(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EVALCORE_LEASE_S", "2")
