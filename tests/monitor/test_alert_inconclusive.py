"""A schedule whose gate cannot tell whether the run regressed alerts in words: the
verdict "inconclusive", the figure that moved within the noise, and the questions that
would tell; never a plain FAILED with a threshold (it neither passed nor failed)."""
from __future__ import annotations

from sqlalchemy import update

from evalcore.monitor import alerts, channels
from evalcore.store import baselines, schedules
from evalcore.store.monitor_tables import ScheduleRun
from tests.cli.test_cli_gate_inconclusive import GATE, K, _planted
from tests.fakes.receivers import WebhookReceiver
from tests.fakes.stored_runs import seed_dataset, seed_run
from tests.monitor.conftest import add_stability_schedule
from tests.monitor.test_schedule_jobs import drain, due_now
from tests.runner.conftest import add_model


def test_an_inconclusive_gate_reaches_the_schedules_alert_in_words(
        engine, settings, server, allow_outbound, monkeypatch) -> None:
    monkeypatch.setattr(alerts, "BACKOFF_BASE_S", 0.01)
    base, run = _planted(12, 1, shift=0)
    run[0], run[1] = [0] * K, [0] * K  # two questions of twelve lost: too small to tell
    ds = seed_dataset(engine, "inconclusive-alert", [f"q{i}?" for i in base])
    add_model(settings, server)  # the schedule's model ("fake"), never called here
    a = seed_run(engine, ds, base, K)
    b = seed_run(engine, ds, run, K)
    baselines.set_baseline(engine, a, set_by="rita")
    with WebhookReceiver() as hook:
        allow_outbound(hook.port)
        sched = add_stability_schedule(engine, settings, "inconclusive-alert", every_s=3600,
                                       gate=GATE, channels=[channels.webhook(hook.url)])
        due_now(engine)
        row = schedules.schedule_runs(engine, sched.id)[0]
        with engine.begin() as conn:  # this due time's run is the planted one
            conn.execute(update(ScheduleRun).where(ScheduleRun.id == row.id)
                         .values(run_id=b, status="created"))
        drain(engine)  # the create step finds its run made
        schedules.enqueue_checks(engine)
        drain(engine)  # gate and alert
        row = schedules.schedule_runs(engine, sched.id)[0]
        assert row.verdict == "inconclusive", (row.reason, row.checks)
        assert len(hook.bodies) == 1, hook.bodies
        body = hook.bodies[0]
    text = body["text"]
    assert body["event"] == "gate_inconclusive" and body["verdict"] == "inconclusive"
    assert "gate INCONCLUSIVE" in text.splitlines()[0]
    assert "the run is too small to tell whether it regressed" in text
    assert "mean_success_rate moved from" in text and "questions would tell" in text
    assert body["failed_checks"] == []  # not listed as a broken threshold
    assert [c["name"] for c in body["inconclusive_checks"]] == ["regression:mean_success_rate"]
