"""The Monitoring page (AppTest): it shows what `schedules list --json` prints, each
schedule's last runs with verdicts and alerts, and its buttons act through evalcore
(audited, refused by role)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import timedelta

from tests.conftest import REPO_ROOT
from tests.fakes.stored_runs import seed_dataset, seed_run
from tests.monitor.conftest import add_stability_schedule
from tests.pages.helpers import add_fake_model, run_page, texts

PAGE = str(REPO_ROOT / "pages" / "monitoring.py")


def _cli_list(settings) -> list[dict]:
    env = {**os.environ, "EVALCORE_HOME": str(settings.home), "PYTHONPATH": str(REPO_ROOT)}
    out = subprocess.run([sys.executable, "-m", "evalcore", "schedules", "list", "--json"],
                         cwd=REPO_ROOT, env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def _scheduled(engine, settings):
    from evalcore.monitor.channels import webhook
    from evalcore.store.monitor_tables import ScheduleRun
    from evalcore.store.schedules import update_schedule_run

    add_fake_model(settings)
    ds = seed_dataset(engine, "sums", [f"What is {i} plus {i}?" for i in range(3)])
    good = seed_run(engine, ds, {0: [1], 1: [1], 2: [1]}, 1)
    bad = seed_run(engine, ds, {0: [0], 1: [0], 2: [1]}, 1)
    row = add_stability_schedule(engine, settings, "sums", every_s=300,
                                 channels=[webhook("https://hooks.example.org/T/B/secrettoken")])
    table = ScheduleRun.__table__
    with engine.begin() as conn:
        for k, (run, verdict) in enumerate(((good, "pass"), (bad, "fail"))):
            sr = conn.execute(table.insert().values(
                schedule_id=row.id, due_at=row.next_due_at + timedelta(seconds=300 * k),
                status="queued", checks=[], created_at=row.created_at)
                .returning(table.c.id)).scalar_one()
            update_schedule_run(conn, sr, status="created", run_id=run, verdict=verdict, checks=[
                {"name": "mean_success_rate_min", "value": 1.0 if k == 0 else 0.33,
                 "threshold": 0.5, "passed": k == 0, "detail": ""}])
    return row, good, bad


def test_page_and_cli_show_the_same_schedules(engine, settings, page_env):
    row, good, bad = _scheduled(engine, settings)
    at = run_page(PAGE)
    table = at.dataframe[0].value
    cli = _cli_list(settings)
    assert table["id"].tolist() == [s["id"] for s in cli] == [row.id]
    assert table["every"].tolist() == [s["every"] for s in cli] == ["5m"]
    assert table["next_due"].tolist() == [s["next_due"][:19] for s in cli]
    assert table["runs"].tolist() == [", ".join(map(str, s["runs"])) for s in cli]
    assert cli[0]["runs"] == [good, bad]
    assert table["last verdict"].tolist() == ["fail"]
    shown = "\n".join(texts(at))
    assert "secrettoken" not in shown and "hooks.example.org/***" in shown
    last = at.dataframe[1].value
    assert last["run"].tolist() == [good, bad] and last["verdict"].tolist() == ["pass", "fail"]


def test_pause_button_pauses_and_is_audited(engine, settings, page_env):
    from evalcore.auth.audit import list_events
    from evalcore.store.schedules import get_schedule

    row, _, _ = _scheduled(engine, settings)
    at = run_page(PAGE)
    at.button(key=f"monitoring.pause.{row.id}").click().run()
    assert not at.exception
    assert get_schedule(engine, row.id).paused
    assert "schedule.pause" in [e.action for e in list_events(engine)]
    assert _cli_list(settings)[0]["next_due"] is None
    assert at.dataframe[0].value["next_due"].tolist() == ["paused"]


def test_baseline_button_marks_the_run(engine, settings, page_env):
    from evalcore.store.baselines import baseline_for_run

    _, good, bad = _scheduled(engine, settings)
    at = run_page(PAGE)
    at.number_input(key="monitoring.baseline_run").set_value(good).run()
    at.button(key="monitoring.baseline").click().run()
    assert not at.exception
    assert baseline_for_run(engine, bad) == good
