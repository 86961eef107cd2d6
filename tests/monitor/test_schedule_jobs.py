"""The schedule jobs: a job taken over after its worker died finds the run the dead one
made (no second run); a failed run is alerted once as 'run_failed'; the schedule's run
is started by the schedule on behalf of its creator (audited)."""
from __future__ import annotations

from datetime import timedelta

from sqlalchemy import func, select, update

from evalcore.monitor import channels
from evalcore.providers.client import run_closing_clients
from evalcore.runner.worker import Worker
from evalcore.store import schedules
from evalcore.store.jobs import create_job, list_jobs
from evalcore.store.monitor_tables import Schedule, ScheduleRun
from evalcore.store.tables import Run, utcnow
from tests.fakes.fault_server import FaultConfig, FaultServer
from tests.fakes.receivers import WebhookReceiver
from tests.monitor.conftest import add_stability_schedule
from tests.runner.conftest import add_model


def drain(engine) -> None:  # noqa: ANN001
    run_closing_clients(Worker(engine, jobs=2, poll_s=0.02).run(once=True))


def due_now(engine) -> None:  # noqa: ANN001
    with engine.begin() as conn:
        conn.execute(update(Schedule).values(next_due_at=utcnow() - timedelta(seconds=1)))
    assert schedules.enqueue_due(engine)


def test_a_taken_over_create_job_finds_the_run_already_made(engine, settings, dataset, server):
    from evalcore.monitor.runs import run_name, schedule_actor, start_scheduled_run

    add_model(settings, server)
    sched = add_stability_schedule(engine, settings, dataset, every_s=3600)
    due_now(engine)
    row = schedules.schedule_runs(engine, sched.id)[0]
    # the first worker made the run, then died before linking it to the due time
    made = start_scheduled_run(engine, "stability", sched.params,
                               name=run_name(sched.id, row.id, schedules.as_utc(row.due_at)),
                               actor=schedule_actor("tester", sched.id),
                               models_path=settings.models_path)
    drain(engine)
    row = schedules.get_schedule_run(engine, row.id)
    assert (row.status, row.run_id) == ("created", made)
    with engine.connect() as conn:
        assert conn.execute(select(func.count()).select_from(Run)).scalar() == 1


def test_a_failed_run_is_alerted_once_as_run_failed(engine, settings, dataset, allow_outbound):
    from evalcore.auth.audit import list_events
    from evalcore.store.alerts import deliveries

    with FaultServer(FaultConfig(error_rate=1.0)) as server, WebhookReceiver() as hook:
        allow_outbound(hook.port)
        add_model(settings, server, max_attempts=1)
        sched = add_stability_schedule(engine, settings, dataset, every_s=3600,
                                       channels=[channels.webhook(hook.url)])
        due_now(engine)
        drain(engine)
        drain(engine)
        schedules.enqueue_checks(engine)
        drain(engine)
        schedules.enqueue_checks(engine)  # nothing left to check: no second job
        drain(engine)
    row = schedules.schedule_runs(engine, sched.id)[0]
    assert row.verdict == "run failed"
    assert [b["event"] for b in hook.bodies] == ["run_failed"]
    assert "error:" in hook.bodies[0]["text"]
    assert [d["status"] for d in deliveries(engine, run_id=row.run_id)] == ["sent"]
    assert len(list_jobs(engine, kind="schedule")) == 2  # create and check, once each
    starts = [e for e in list_events(engine) if e.action == "run.start"]
    assert [e.actor for e in starts] == [f"schedule {sched.id} (tester)"]


def test_a_due_time_row_is_never_inserted_twice(engine, settings, dataset, server):
    """The unique key, not only the code path, guards a due time."""
    import pytest
    from sqlalchemy.exc import IntegrityError

    add_model(settings, server)
    sched = add_stability_schedule(engine, settings, dataset, every_s=3600)
    due_now(engine)
    row = schedules.schedule_runs(engine, sched.id)[0]
    with pytest.raises(IntegrityError):
        with engine.begin() as conn:
            conn.execute(ScheduleRun.__table__.insert().values(
                schedule_id=sched.id, due_at=row.due_at, status="queued", checks=[],
                created_at=utcnow()))
            create_job(engine, "schedule", params={}, conn=conn)
    assert len(list_jobs(engine, kind="schedule")) == 1


def test_a_run_that_cannot_be_created_is_recorded_and_alerted_once(engine, settings, dataset,
                                                                   server, allow_outbound):
    from evalcore.providers.registry import remove_model

    with WebhookReceiver() as hook:
        allow_outbound(hook.port)
        add_model(settings, server)
        sched = add_stability_schedule(engine, settings, dataset, every_s=3600,
                                       channels=[channels.webhook(hook.url)])
        remove_model(settings.models_path, "fake")  # the model went away since
        due_now(engine)
        drain(engine)
    row = schedules.schedule_runs(engine, sched.id)[0]
    assert (row.status, row.verdict, row.run_id) == ("skipped", "run failed", None)
    assert "could not be created" in row.reason and "fake" in row.reason
    assert len(hook.bodies) == 1 and hook.bodies[0]["event"] == "run_failed"
    assert "fake" in hook.bodies[0]["text"]
