"""The stored baseline moves the gate's relative checks (CLI `gate` and the trend use it by
default, with a mark per change); who may change it and schedules; the CLI's one-line
errors; `schedules list --json` says id, every, next_due and runs."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from evalcore.auth.identity import Actor
from evalcore.auth.roles import PermissionDenied
from tests.conftest import REPO_ROOT, cli_here
from tests.fakes.stored_runs import seed_dataset, seed_run
from tests.monitor.conftest import add_stability_schedule, needs
from tests.pages.helpers import add_fake_model

GATE = "[absolute]\nmean_success_rate_min = 0.1\n[relative]\nmax_regression = 0.10\n"
QUESTIONS = [f"What is {i} plus {i}?" for i in range(4)]
VIEWER = Actor(email="", name="vic", role="viewer")
EVALUATOR = Actor(email="", name="eve", role="evaluator")
REVIEWER = Actor(email="", name="rita", role="reviewer")


def cli_process(settings, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "EVALCORE_HOME": str(settings.home), "PYTHONPATH": str(REPO_ROOT)
           + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.run([sys.executable, "-m", "evalcore", *args], cwd=REPO_ROOT, env=env,
                          capture_output=True, text=True, timeout=120)


@pytest.fixture()
def three_runs(engine):
    """Runs of one dataset and model: all right, half right, a quarter right."""
    ds = seed_dataset(engine, "sums", QUESTIONS)
    good = seed_run(engine, ds, {0: [1], 1: [1], 2: [1], 3: [1]}, 1)
    half = seed_run(engine, ds, {0: [1], 1: [1], 2: [0], 3: [0]}, 1)
    low = seed_run(engine, ds, {0: [1], 1: [0], 2: [0], 3: [0]}, 1)
    return good, half, low


def _regression(out: str) -> str:
    return next(line for line in out.splitlines() if "regression:mean_success_rate" in line)


def test_the_baseline_mark_moves_the_gates_relative_checks(engine, settings, three_runs,
                                                           tmp_path):
    from evalcore.monitor.actions import set_baseline
    from evalcore.report.trend import trend

    good, half, low = three_runs
    gate = tmp_path / "gate.toml"
    gate.write_text(GATE)
    set_baseline(REVIEWER, engine, good)
    before = cli_here(settings, "gate", "--run", str(low), "--config", str(gate))
    set_baseline(REVIEWER, engine, half)
    after = cli_here(settings, "gate", "--run", str(low), "--config", str(gate))
    assert f"baseline: run {good}" in before.stdout
    assert "vs baseline 1:" in _regression(before.stdout)
    assert f"baseline: run {half}" in after.stdout
    assert "vs baseline 0.5:" in _regression(after.stdout)
    assert before.returncode == after.returncode == 1  # 0.25 is worse than both
    result = trend(engine, "sums", "mean_success_rate")
    assert [p["run_id"] for p in result["series"]["fake"] if p["baseline"]] == [half]
    assert [m["run_id"] for m in result["baseline_marks"]] == [good, half]
    shown = cli_here(settings, "baseline", "show", "sums", "fake", "--json")
    info = json.loads(shown.stdout)
    assert info["run_id"] == half and [h["run_id"] for h in info["history"]] == [good, half]
    assert [h["set_by"] for h in info["history"]] == ["rita", "rita"]


def test_only_reviewers_and_admins_set_the_baseline_and_it_is_audited(engine, three_runs):
    from evalcore.auth.audit import list_events
    from evalcore.monitor.actions import set_baseline

    good, _, _ = three_runs
    with pytest.raises(PermissionDenied, match="role reviewer or higher"):
        set_baseline(EVALUATOR, engine, good)
    set_baseline(REVIEWER, engine, good)
    actions = [(e.action, e.actor) for e in list_events(engine)]
    assert ("denied.set_baseline", "eve") in actions and ("baseline.set", "rita") in actions


def test_viewers_cannot_touch_schedules_evaluators_can(engine, settings, three_runs):
    from evalcore.auth.audit import list_events
    from evalcore.monitor.actions import add_schedule, delete_schedule, pause_schedule

    add_fake_model(settings)
    params = {"dataset": "sums", "model": "fake", "rounds": 1}
    with pytest.raises(PermissionDenied, match="add, pause, resume or delete schedules"):
        add_schedule(VIEWER, engine, "stability", params, models_path=settings.models_path,
                     every_s=60)
    row = add_schedule(EVALUATOR, engine, "stability", params,
                       models_path=settings.models_path, every_s=60)
    with pytest.raises(PermissionDenied):
        pause_schedule(VIEWER, engine, row.id)
    pause_schedule(EVALUATOR, engine, row.id)
    delete_schedule(EVALUATOR, engine, row.id)
    assert sorted(e.action for e in list_events(engine) if e.actor == "eve") == [
        "schedule.add", "schedule.delete", "schedule.pause"]
    assert ("denied.pause_schedule", "vic") in [(e.action, e.actor) for e in list_events(engine)]


def test_cli_add_list_pause_delete(engine, settings, three_runs):
    add_fake_model(settings)
    added = cli_here(settings, "schedules", "add", "stability", "--every", "10m", "--dataset", "sums",
                "--model", "fake", "--webhook", "https://hooks.example.org/T0/B0/s3cr3t-token",
                "--webhook-shape", "slack")
    assert added.returncode == 0, added.stderr
    listed = json.loads(cli_here(settings, "schedules", "list", "--json").stdout)
    assert [(s["id"], s["every"], s["runs"], s["paused"]) for s in listed] == [
        (1, "10m", [], False)]
    assert listed[0]["next_due"] and "s3cr3t" not in json.dumps(listed)
    assert listed[0]["channels"][0].startswith("webhook slack https://hooks.example.org/***")
    assert cli_here(settings, "schedules", "pause", "1").returncode == 0
    assert json.loads(cli_here(settings, "schedules", "list", "--json").stdout)[0]["paused"]
    assert "schedule 1 deleted" in cli_here(settings, "schedules", "delete", "1").stdout
    assert "no schedules yet" in cli_here(settings, "schedules", "list").stdout


@pytest.mark.parametrize("args,message", [
    (("--every", "5w", "--dataset", "sums"), "period '5w' is not N followed by s, m, h or d"),
    (("--every", "5m"), "needs --dataset NAME"),
    (("--every", "5m", "--dataset", "nope"), "nope"),
    (("--every", "5m", "--dataset", "sums", "--webhook", "ftp://x"), "http:// or https://"),
    (("--every", "5m", "--dataset", "sums", "--gate", "missing.toml"), "missing.toml not found"),
])
def test_cli_schedule_errors_are_one_line(engine, settings, three_runs, args, message):
    """The first case in a real process (what only a process shows: nothing else on
    stderr, no traceback, the exit code); the others through `cli.main` in this one."""
    add_fake_model(settings)
    run = cli_process if args[1] == "5w" else cli_here
    proc = run(settings, "schedules", "add", "stability", "--model", "fake", *args)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.startswith("error: ") and message in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_schedule_list_names_the_runs_it_made(engine, settings, three_runs):
    from evalcore.monitor.view import monitoring
    from evalcore.store import schedules
    from evalcore.store.monitor_tables import ScheduleRun
    from evalcore.store.schedules import update_schedule_run
    SCHEDULE_RUN = ScheduleRun.__table__

    add_fake_model(settings)
    good, half, _ = three_runs
    row = add_stability_schedule(engine, settings, "sums", every_s=60)
    with engine.begin() as conn:
        for k, run in enumerate((good, half)):
            sr = conn.execute(SCHEDULE_RUN.insert().values(
                schedule_id=row.id, due_at=row.next_due_at + schedules.timedelta(seconds=60 * k),
                status="queued", checks=[], created_at=row.created_at)
                .returning(SCHEDULE_RUN.c.id)).scalar_one()
            update_schedule_run(conn, sr, status="created", run_id=run, verdict="pass")
    assert monitoring(engine)[0]["runs"] == [good, half]
    out = cli_here(settings, "schedules", "list").stdout
    assert "runs   2  last pass" in out


def test_cli_edit_changes_period_and_channels_audited(engine, settings, three_runs):
    from evalcore.auth.audit import list_events

    add_fake_model(settings)
    assert cli_here(settings, "schedules", "add", "stability", "--every", "1h", "--dataset", "sums",
               "--model", "fake", "--email", "a@example.org").returncode == 0
    edited = cli_here(settings, "schedules", "edit", "1", "--every", "5m", "--webhook",
                 "https://hooks.example.org/x/secret-path-123", "--rounds", "3")
    assert edited.returncode == 0, edited.stderr and "every 5m" in edited.stdout
    info = json.loads(cli_here(settings, "schedules", "list", "--json").stdout)[0]
    assert info["every"] == "5m" and info["params"]["rounds"] == 3
    assert [c.split()[0] for c in info["channels"]] == ["webhook"]
    event = [e for e in list_events(engine) if e.action == "schedule.edit"][0]
    assert event.detail["changed"] == ["channels", "cron", "every_s", "params"]
    assert cli_here(settings, "schedules", "edit", "1", "--no-alerts").returncode == 0
    assert json.loads(cli_here(settings, "schedules", "list", "--json").stdout)[0]["channels"] == []


def test_cli_cron_schedules(engine, settings, three_runs):
    needs("cronsim")
    add_fake_model(settings)
    added = cli_here(settings, "schedules", "add", "stability", "--cron", "0 6 * * *", "--dataset",
                "sums", "--model", "fake")
    assert added.returncode == 0, added.stderr
    info = json.loads(cli_here(settings, "schedules", "list", "--json").stdout)[0]
    assert info["every"] == "cron 0 6 * * *" and info["next_due"][11:19] == "06:00:00"
    bad = cli_here(settings, "schedules", "edit", "1", "--cron", "99 * * * *")
    assert bad.returncode == 2 and "five fields" in bad.stderr


def test_trend_figure_draws_each_baseline_change(engine, three_runs):
    from evalcore.monitor.actions import set_baseline
    from evalcore.report.trend import trend, trend_figure

    good, half, _ = three_runs
    set_baseline(REVIEWER, engine, good)
    set_baseline(REVIEWER, engine, half)
    fig = trend_figure(trend(engine, "sums", "mean_success_rate"))
    notes = [a.text for a in fig.layout.annotations]
    assert notes == [f"baseline: run {good}", f"baseline: run {half}"]
    assert len(fig.layout.shapes) == 2


def test_compare_one_run_uses_the_stored_baseline(engine, settings, three_runs):
    from evalcore.monitor.actions import set_baseline

    good, _, low = three_runs
    alone = cli_here(settings, "compare", str(low))
    assert alone.returncode == 2 and "no stored baseline" in alone.stderr
    set_baseline(REVIEWER, engine, good)
    out = json.loads(cli_here(settings, "compare", str(low), "--json").stdout)
    assert [r["run"]["id"] for r in out["runs"]] == [good, low]
