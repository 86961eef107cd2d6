"""A schedule's default gate compares each run with the stored baseline: a model whose
healthy baseline sits below the stability example's absolute thresholds (success 0.70)
was alerted as FAILED every period. Before a baseline is set the verdict is "not
measured" (no alert), and every verdict other than a pass carries its reason."""
from __future__ import annotations

from evalcore.monitor import channels
from evalcore.store import schedules
from tests.fakes.receivers import WebhookReceiver
from tests.monitor.conftest import add_stability_schedule
from tests.monitor.test_schedule_jobs import drain, due_now
from tests.runner.conftest import add_model


def _next_period(engine) -> None:
    due_now(engine)
    drain(engine)  # creates the run, then executes it
    drain(engine)
    schedules.enqueue_checks(engine)
    drain(engine)  # gate and alerts


def test_the_default_schedule_gate_is_relative_to_the_baseline(engine, settings, dataset,
                                                               server) -> None:
    from evalcore.auth.identity import Actor
    from evalcore.monitor.actions import set_baseline
    from evalcore.report.run_figures import run_figures

    with WebhookReceiver() as hook:
        add_model(settings, server)  # right on half the questions, every time
        sched = add_stability_schedule(engine, settings, dataset, every_s=3600,
                                       channels=[channels.webhook(hook.url)])
        _next_period(engine)
        first = schedules.schedule_runs(engine, sched.id)[0]
        assert run_figures(engine, first.run_id)["metrics"]["mean_success_rate"] < 0.70
        assert first.verdict == "not measured" and "no baseline" in first.reason
        set_baseline(Actor(email="", name="rita", role="reviewer"), engine, first.run_id)
        _next_period(engine)
        second = schedules.schedule_runs(engine, sched.id)[1]
        assert second.baseline_id == first.run_id
        assert second.verdict == "pass", (second.reason, second.checks)
        assert all(c["name"].startswith("regression:") for c in second.checks)
        assert hook.bodies == []  # a healthy model is never alerted


def test_a_failed_gate_says_why_in_the_reason(engine, settings, dataset, server) -> None:
    add_model(settings, server)
    sched = add_stability_schedule(engine, settings, dataset, every_s=3600,
                                   gate="[absolute]\nmean_success_rate_min = 0.9\n")
    _next_period(engine)
    row = schedules.schedule_runs(engine, sched.id)[0]
    assert row.verdict == "fail"
    assert row.reason.startswith("mean_success_rate_min 0.") and "< 0.9" in row.reason
