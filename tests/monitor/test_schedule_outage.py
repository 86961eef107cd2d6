"""PostgreSQL cut at due times and in the middle of an alert's delivery (a loopback proxy
drops every connection for OUTAGE_S): the worker says one line when the database goes
and one when it is back, with no traceback and no "Task exception was never retrieved";
the delivery is stored as sent once the database is back (it used to crash
`finish_delivery`, then `finish_job`); the due times missed say the database could not be
reached (they said "no worker was running" while the worker ran) and the first of them
is run when it came back."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from datetime import datetime, timedelta

import pytest
from sqlalchemy import update
from sqlalchemy.engine import make_url

from evalcore.monitor import channels
from evalcore.store import schedules
from evalcore.store.alerts import deliveries
from evalcore.store.monitor_tables import Schedule
from evalcore.store.types import utcnow
from evalcore.store.workers import live_workers
from tests.conftest import REPO_ROOT
from tests.fakes.fault_server import FaultConfig, FaultServer
from tests.fakes.receivers import WebhookReceiver
from tests.fakes.tcp_proxy import TcpProxy
from tests.monitor.conftest import add_stability_schedule
from tests.runner.conftest import add_model, tagged_dataset
from tests.runner.test_workers import wait_for
from tests.runner.test_worker_outage import pg_db  # noqa: F401 - the fixture

pytestmark = [pytest.mark.integration, pytest.mark.postgres, pytest.mark.serial]
OUTAGE_S = 4.0
"""Four due times of a 1 s schedule, and the whole of the receiver's DELAY_S."""
DELAY_S = 2.0
"""The receiver answers the alert's POST this long after it arrived: inside the outage."""


def _rows(engine, schedule_id: int) -> list:  # noqa: ANN001
    return schedules.schedule_runs(engine, schedule_id)


def _made_up(engine, schedule_id: int, back: datetime) -> bool:  # noqa: ANN001
    """A due time missed in the outage was skipped saying why, and a run was made after
    it (the first missed due time, late, or the next one when the previous due time's
    run, cut by the outage, was still being made)."""
    rows = _rows(engine, schedule_id)
    return (any("database could not be reached" in (r.reason or "") for r in rows
                if r.status == "skipped")
            and any(r.run_id is not None and schedules.as_utc(r.created_at) >= back
                    for r in rows))


def test_an_outage_at_due_times_and_in_a_delivery(pg_db: str, settings) -> None:  # noqa: F811
    from evalcore.store.db import make_engine

    engine = make_engine(pg_db)
    port = int(make_url(pg_db).port)
    with FaultServer(FaultConfig(error_rate=1.0)) as server, \
            WebhookReceiver(delay=DELAY_S) as hook, TcpProxy("127.0.0.1", port) as proxy:
        add_model(settings, server, concurrency=2, max_attempts=1)  # every run fails: alert
        name = tagged_dataset(engine, "due", 2)
        sched = add_stability_schedule(engine, settings, name, every_s=1,
                                       channels=[channels.webhook(hook.url)])
        with engine.begin() as conn:  # due times start once the worker runs
            conn.execute(update(Schedule).values(paused=True))
        env = {**os.environ, "EVALCORE_HOME": str(settings.home),
               "EVALCORE_MODELS": str(settings.models_path), "PYTHONPATH": str(REPO_ROOT),
               "EVALCORE_DB_URL": pg_db.replace(f":{port}/", f":{proxy.port}/"),
               "EVALCORE_LEASE_S": "30",  # the outage stays inside the lease
               "EVALCORE_OUTBOUND_ALLOW": f"127.0.0.1:{hook.port}"}  # the local receiver
        worker = subprocess.Popen([sys.executable, "-m", "evalcore", "worker", "--name",
                                   "w-outage"], cwd=REPO_ROOT, env=env, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True)
        try:
            wait_for(lambda: [w.name for w in live_workers(engine)] == ["w-outage"], 60,
                     "the worker to start")
            with engine.begin() as conn:
                conn.execute(update(Schedule).values(
                    paused=False, next_due_at=utcnow() + timedelta(seconds=1)))
            wait_for(lambda: hook.requests >= 1 or worker.poll() is not None, 90,
                     "the first alert to reach the receiver")
            proxy.down()  # the POST is in flight; its answer comes in the outage
            time.sleep(OUTAGE_S)
            proxy.up()
            back = utcnow()
            wait_for(lambda: _made_up(engine, sched.id, back), 60,
                     "a missed due time recorded and one run late",
                     lambda: "\n".join(f"{r.due_at} {r.status} {r.reason}"
                                       for r in _rows(engine, sched.id)))
            first = min(deliveries(engine, schedule_id=sched.id), key=lambda d: d["run_id"])
            wait_for(lambda: next(d for d in deliveries(engine, schedule_id=sched.id)
                                  if d["run_id"] == first["run_id"])["status"] == "sent",
                     60, "the delivery cut by the outage to be stored")
        finally:
            with engine.begin() as conn:
                conn.execute(update(Schedule).values(paused=True))
            worker.send_signal(signal.SIGTERM)
            try:
                _, err = worker.communicate(timeout=60)
            except subprocess.TimeoutExpired:
                worker.kill()
                _, err = worker.communicate()
    lines = err.splitlines()
    assert len([line for line in lines if "database unreachable" in line]) == 1, err
    assert len([line for line in lines if "database back after" in line]) == 1, err
    for marker in ("Traceback", "never retrieved", "[SQL:", "Background on this error"):
        assert marker not in err, err
    reasons = [r.reason or "" for r in _rows(engine, sched.id)]
    assert not any(reason == schedules.NO_WORKER for reason in reasons), reasons
    sent = [d for d in deliveries(engine, schedule_id=sched.id) if d["run_id"] == first["run_id"]]
    assert [(d["status"], d["attempts"]) for d in sent] == [("sent", 1)]
    engine.dispose()
