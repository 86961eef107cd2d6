"""Due times become jobs exactly once: periods and cron, racing workers, a run still going
when the next is due (skipped and recorded), missed due times, pause and resume."""
from __future__ import annotations

import threading
from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import given, settings as hsettings, strategies as st
from sqlalchemy import select, update

from evalcore.store import schedules
from evalcore.store.jobs import list_jobs
from evalcore.store.monitor_tables import ScheduleRun
from evalcore.store.tables import Run
from tests.monitor.conftest import add_stability_schedule, needs
from tests.runner.conftest import add_model

T0 = datetime(2026, 11, 26, 12, 0, 0, tzinfo=timezone.utc)


@pytest.mark.parametrize("text,seconds", [("10s", 10), ("5m", 300), ("1h", 3600),
                                          ("1d", 86400), ("45", 45)])
def test_periods_parse(text, seconds):
    assert schedules.parse_every(text) == seconds
    assert schedules.every_label(seconds, None) in (text, f"{seconds}s")


@pytest.mark.parametrize("bad", ["", "0s", "-5m", "5w", "1.5h", "m"])
def test_bad_periods_say_how_to_write_one(bad):
    with pytest.raises(schedules.ScheduleError, match="10s, 5m, 1h, 1d"):
        schedules.parse_every(bad)


@given(step=st.integers(1, 10 ** 6), offset=st.integers(0, 10 ** 7))
@hsettings(max_examples=200, deadline=None)
def test_next_due_lies_on_the_grid_and_after(step, offset):
    after = T0 + timedelta(seconds=offset)
    nxt = schedules.following(step, None, after, T0)
    assert nxt > after and nxt - after <= timedelta(seconds=step)
    assert (nxt - T0).total_seconds() % step == 0


def test_cron_next_time_and_bad_expression():
    needs("cronsim")
    assert schedules.following(None, "0 6 * * *", T0) == T0.replace(day=27, hour=6)
    with pytest.raises(schedules.ScheduleError, match="five fields"):
        schedules.check_cron("61 * * * *")


def _rows(engine, schedule_id):
    return schedules.schedule_runs(engine, schedule_id)


def test_racing_workers_make_one_job_per_due_time(store_url, settings, tmp_path):
    """Eight threads tick at the same moments: each due time has one row and one job."""
    from evalcore.store.db import make_engine
    from tests.runner.conftest import import_qa, QUESTIONS

    engine = make_engine(store_url)
    settings.models_path.parent.mkdir(parents=True, exist_ok=True)
    add_model(settings, type("S", (), {"openai_url": "http://127.0.0.1:9/v1"})())
    name = import_qa(engine, tmp_path, QUESTIONS)
    sched = add_stability_schedule(engine, settings, name, every_s=10, start=T0)
    made: list[int] = []
    lock = threading.Lock()
    for tick in range(5):
        now = T0 + timedelta(seconds=10 * tick + 1)
        barrier = threading.Barrier(8)

        def race(now=now, barrier=barrier) -> None:
            barrier.wait()
            jobs = schedules.enqueue_due(engine, now)
            with lock:
                made.extend(jobs)

        threads = [threading.Thread(target=race) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        with engine.begin() as conn:  # the run of each due time ends before the next
            conn.execute(update(ScheduleRun).values(status="created"))
    rows = _rows(engine, sched.id)
    assert [r.due_at.astimezone(timezone.utc) for r in rows] == [
        T0 + timedelta(seconds=10 * k) for k in range(5)]
    assert len(made) == 5 == len(set(made))
    assert len(list_jobs(engine, kind="schedule")) == 5
    engine.dispose()


def test_a_run_still_going_is_not_doubled(engine, settings, dataset, server):
    add_model(settings, server)
    sched = add_stability_schedule(engine, settings, dataset, every_s=10, start=T0)
    assert len(schedules.enqueue_due(engine, T0 + timedelta(seconds=1))) == 1
    # its run exists and is running when the next due time comes
    run_id = _make_run(engine)
    with engine.begin() as conn:
        conn.execute(update(ScheduleRun).values(status="created", run_id=run_id))
        conn.execute(update(Run).where(Run.id == run_id).values(status="running"))
    assert schedules.enqueue_due(engine, T0 + timedelta(seconds=11)) == []
    rows = _rows(engine, sched.id)
    assert [r.status for r in rows] == ["created", "skipped"]
    assert f"run {run_id}" in rows[1].reason and "still running" in rows[1].reason
    with engine.begin() as conn:
        conn.execute(update(Run).where(Run.id == run_id).values(status="done"))
    assert len(schedules.enqueue_due(engine, T0 + timedelta(seconds=21))) == 1


def test_a_due_time_whose_run_creation_failed_does_not_block_the_schedule(engine, settings,
                                                                         dataset, server):
    """The job making a due time's run failed (a database lost in the middle of it): the
    next due time is not skipped as 'still being created' for ever; the stuck row says
    what happened."""
    from evalcore.store.tables import Job

    add_model(settings, server)
    sched = add_stability_schedule(engine, settings, dataset, every_s=10, start=T0)
    [job_id] = schedules.enqueue_due(engine, T0 + timedelta(seconds=1))
    assert schedules.enqueue_due(engine, T0 + timedelta(seconds=11)) == []  # still making it
    with engine.begin() as conn:
        conn.execute(update(Job).where(Job.id == job_id).values(
            status="failed", error="PendingRollbackError: connection lost"))
    assert len(schedules.enqueue_due(engine, T0 + timedelta(seconds=21))) == 1
    rows = _rows(engine, sched.id)
    assert [r.status for r in rows] == ["skipped", "skipped", "queued"]
    assert "never created" in rows[0].reason and "connection lost" in rows[0].reason
    assert "still being created" in rows[1].reason


def _make_run(engine) -> int:
    from evalcore.store import queries

    return int(queries.create_run(engine, kind="stability", rounds=1, config={}).id)


def test_missed_due_times_are_recorded_and_the_next_is_in_the_future(engine, settings, dataset,
                                                                     server):
    add_model(settings, server)
    sched = add_stability_schedule(engine, settings, dataset, every_s=10, start=T0)
    now = T0 + timedelta(seconds=35)  # no worker for 35 s: due times 0, 10, 20, 30
    assert len(schedules.enqueue_due(engine, now)) == 1
    rows = _rows(engine, sched.id)
    assert [r.status for r in rows] == ["queued", "skipped", "skipped", "skipped"]
    assert all("no worker" in r.reason for r in rows[1:])
    nxt = schedules.get_schedule(engine, sched.id).next_due_at
    assert schedules.as_utc(nxt) == T0 + timedelta(seconds=40)


def test_paused_schedules_make_nothing_and_resume_from_now(engine, settings, dataset, server):
    from evalcore.auth.identity import Actor
    from evalcore.monitor.actions import pause_schedule

    add_model(settings, server)
    sched = add_stability_schedule(engine, settings, dataset, every_s=10, start=T0)
    admin = Actor(email="", name="tester", role="admin")
    pause_schedule(admin, engine, sched.id)
    assert schedules.enqueue_due(engine, T0 + timedelta(seconds=100)) == []
    row = pause_schedule(admin, engine, sched.id, paused=False)
    assert schedules.as_utc(row.next_due_at) > datetime.now(timezone.utc)
    with engine.connect() as conn:
        assert conn.execute(select(ScheduleRun.id)).all() == []


def test_due_times_missed_in_an_outage_say_so_and_the_first_runs_late(engine, settings,
                                                                       dataset, server):
    """The worker that handles the gap could not reach the database from T0+5 s to
    T0+27 s: due times 10 and 20 fell in it. The first missed one runs, late, saying why;
    the next is skipped saying the database could not be reached (it used to say that
    no worker was running, while the worker ran); 30, after the outage, is a plain miss."""
    add_model(settings, server)
    sched = add_stability_schedule(engine, settings, dataset, every_s=10,
                                   start=T0 + timedelta(seconds=10))
    down = (T0 + timedelta(seconds=5), T0 + timedelta(seconds=27))

    def unreachable(when: datetime):  # noqa: ANN202
        return down if down[0] <= when <= down[1] else None

    assert len(schedules.enqueue_due(engine, T0 + timedelta(seconds=35),
                                     unreachable=unreachable)) == 1
    rows = _rows(engine, sched.id)
    assert [r.status for r in rows] == ["queued", "skipped", "skipped"]
    assert rows[0].reason.startswith("late: the database could not be reached")
    assert "12:00:05 to 12:00:27 UTC" in rows[1].reason
    assert "database could not be reached" in rows[1].reason
    assert rows[2].reason == schedules.NO_WORKER


def test_due_times_a_running_worker_reached_late_do_not_say_no_worker_ran(engine, settings,
                                                                          dataset, server):
    """A worker running since T0+25 on a busy machine ticks at T0+35: due time 30 was
    missed while it ran (late, not absent); 20, before it started, is no worker's."""
    add_model(settings, server)
    sched = add_stability_schedule(engine, settings, dataset, every_s=10,
                                   start=T0 + timedelta(seconds=10))
    assert len(schedules.enqueue_due(engine, T0 + timedelta(seconds=35),
                                     running_since=T0 + timedelta(seconds=25))) == 1
    rows = _rows(engine, sched.id)
    assert [r.status for r in rows] == ["queued", "skipped", "skipped"]
    assert rows[0].reason is None
    assert rows[1].reason == schedules.NO_WORKER  # due 20: before the worker started
    assert rows[2].reason == schedules.LATE_WORKER  # due 30: it ran, but late
