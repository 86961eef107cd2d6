"""The Monitoring page (AppTest): it shows what `schedules list --json` prints, each
schedule's last runs with verdicts and alerts, and its buttons act through evalcore
(audited, refused by role)."""
from __future__ import annotations

import json
from datetime import timedelta

from tests.conftest import REPO_ROOT, cli_here
from tests.fakes.stored_runs import seed_dataset, seed_run
from tests.monitor.conftest import add_stability_schedule
from tests.pages.helpers import add_fake_model, run_page, texts

PAGE = str(REPO_ROOT / "pages" / "monitoring.py")


def _cli_list(settings) -> list[dict]:
    """`python -m evalcore schedules list --json` on the test's home, in this process (the
    claim is the same data on both sides, not the process)."""
    listed = cli_here(settings, "schedules", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    return json.loads(listed.stdout)


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
    assert table["next due (UTC)"].tolist() == [s["next_due"][:19].replace("T", " ")
                                                for s in cli]
    assert table["runs"].tolist() == [", ".join(map(str, s["runs"])) for s in cli]
    assert cli[0]["runs"] == [good, bad]
    assert table["last"].tolist() == ["fail"]
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
    assert at.dataframe[0].value["next due (UTC)"].tolist() == ["paused"]


def test_baseline_button_marks_the_run(engine, settings, page_env):
    from evalcore.store.baselines import baseline_for_run

    _, good, bad = _scheduled(engine, settings)
    at = run_page(PAGE)
    at.selectbox(key="monitoring.baseline_run").set_value(good).run()
    at.button(key="monitoring.baseline").click().run()
    assert not at.exception
    assert baseline_for_run(engine, bad) == good


def test_a_robustness_schedule_is_added_with_its_attack_sets(engine, settings, page_env):
    """Walked in a browser: the form offered datasets for every kind, so a robustness
    schedule always failed with "needs --attack-set ID (repeatable)" (a CLI flag on a
    page). The target follows the kind: attack sets here, suites for fairness."""
    from evalcore.perturb.generate import create_attack_set, generate_attack_items
    from evalcore.perturb.review import approve_unflagged
    from evalcore.perturb.sets import list_attack_sets
    from evalcore.store.schedules import list_schedules

    add_fake_model(settings)
    ds = seed_dataset(engine, "sums", [f"What is {i} plus {i}?" for i in range(3)])
    set_id = create_attack_set(engine, dataset=ds, level="char", seed=1,
                               params={"similarity": False})
    generate_attack_items(engine, set_id)
    assert approve_unflagged(engine, set_id, reviewer="tester")
    attack = list_attack_sets(engine)[0]
    at = run_page(PAGE)
    at.selectbox(key="monitoring.kind").set_value("robustness").run()
    assert at.multiselect(key="monitoring.attack_sets").options  # no dataset picker
    assert not [s for s in at.selectbox if s.key.startswith("monitoring.dataset")]
    at.button(key="FormSubmitter:monitoring.add-Add schedule").click().run()
    assert "pick at least one attack set" in " ".join(e.value for e in at.error)
    at.multiselect(key="monitoring.attack_sets").set_value([int(attack.id)])
    at.button(key="FormSubmitter:monitoring.add-Add schedule").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    [row] = list_schedules(engine)
    assert row.kind == "robustness" and row.params["attack_set_ids"] == [int(attack.id)]
    assert "attack set" in " ".join(e.label for e in at.expander)


def test_a_stability_schedule_takes_first_k_items(engine, settings, page_env):
    from evalcore.store.schedules import list_schedules

    add_fake_model(settings)
    seed_dataset(engine, "sums", [f"What is {i} plus {i}?" for i in range(3)])
    at = run_page(PAGE)
    at.number_input(key="monitoring.limit").set_value(2)
    at.button(key="FormSubmitter:monitoring.add-Add schedule").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert list_schedules(engine)[0].params["limit"] == 2


def test_the_baseline_in_force_is_shown_and_not_marked_twice(engine, settings, page_env):
    """Walked in a browser: the page never showed which run was the baseline, and marking
    the same run again stored a second history row (a doubled mark on the trend)."""
    from evalcore.auth.identity import Actor
    from evalcore.monitor.actions import set_baseline
    from evalcore.store.baselines import baseline_history

    add_fake_model(settings)
    ds = seed_dataset(engine, "sums", [f"What is {i} plus {i}?" for i in range(3)])
    good = seed_run(engine, ds, {0: [1], 1: [1], 2: [1]}, 1)
    admin = Actor(email="", name="tester", role="admin")
    set_baseline(admin, engine, good)
    set_baseline(admin, engine, good)  # the same run again: nothing new
    assert [b.run_id for b in baseline_history(engine, ds)] == [good]
    at = run_page(PAGE)
    table = next(df.value for df in at.dataframe if "changes" in df.value.columns)
    assert table[["dataset", "model", "run_id", "changes"]].values.tolist() == \
        [["sums", "fake", good, 1]]
    assert at.selectbox(key="monitoring.baseline_run").value == good
    assert f"Run {good} is the baseline of its dataset and model." in \
        " ".join(c.value for c in at.caption)
    assert not [b for b in at.button if b.key == "monitoring.baseline"]


def test_schedules_refresh_while_one_is_active():
    """The schedules part is a fragment re-read every REFRESH_S while a schedule is active
    (new runs, verdicts and alerts showed only after a reload); none when all are paused."""
    from pages.monitoring import REFRESH_S, refresh_every

    assert refresh_every([{"paused": True}, {"paused": False}]) == REFRESH_S
    assert refresh_every([{"paused": True}]) is None and refresh_every([]) is None


def test_due_times_show_their_runs_status_and_verdict(engine, settings, page_env):
    """Walked on the local model: a due time's row said `created` (the due time made its
    run) whatever the run did. It shows the run's status as store.run_state derives it
    (its job's: here running, though the run row says done) beside the gate's verdict."""
    from sqlalchemy import update

    from evalcore.store.jobs import create_job
    from evalcore.store.monitor_tables import ScheduleRun
    from evalcore.store.schedules import update_schedule_run
    from evalcore.store.tables import Job, Run, utcnow

    row, _, _ = _scheduled(engine, settings)
    ds = seed_dataset(engine, "sums2", ["What is 9 plus 9?"])
    pending = seed_run(engine, ds, {0: [1]}, 1)
    job = create_job(engine, "run", run_id=pending)  # the job owns the run's status
    with engine.begin() as conn:
        conn.execute(update(Job).where(Job.id == job).values(  # held by a live worker
            status="running", owner="w@elsewhere", token=1, attempts=1,
            lease_expires_at=utcnow() + timedelta(hours=1)))
    table = ScheduleRun.__table__
    with engine.begin() as conn:
        sr = conn.execute(table.insert().values(
            schedule_id=row.id, due_at=row.next_due_at + timedelta(seconds=900),
            status="queued", checks=[], created_at=row.created_at)
            .returning(table.c.id)).scalar_one()
        update_schedule_run(conn, sr, status="created", run_id=pending)
        assert conn.execute(Run.__table__.select().where(Run.__table__.c.id == pending)) \
            .one().status == "done"
    at = run_page(PAGE)
    assert not at.exception, [e.value for e in at.exception]
    assert at.dataframe[0].value["last"].tolist() == ["running"]
    last = at.dataframe[1].value
    assert "status" not in last.columns
    assert last["run status"].tolist() == ["done", "done", "running"]
    assert last["verdict"].tolist() == ["pass", "fail", ""]
    cli = _cli_list(settings)[0]["last"]
    assert [r["run_status"] for r in cli] == ["done", "done", "running"]


def test_the_sidebar_model_line_follows_the_schedules_refresh(engine, settings, page_env,
                                                               monkeypatch):
    """Walked on the local model: on an open Monitoring page the sidebar's local-model line
    kept "not loaded" while scheduled runs loaded the model (it was re-read only while a
    worker was loading it at the page's first draw). On Monitoring with an active
    schedule it is now re-read as often as the schedules; elsewhere, or all paused, not."""
    from streamlit.testing.v1 import AppTest

    from evalcore.store.schedules import set_paused
    from pages._local_model import sidebar_every

    assert sidebar_every("monitoring", False, True) == 10.0
    assert sidebar_every("monitoring", False, False) is None
    assert sidebar_every("results", False, True) is None
    assert sidebar_every("results", True, False) == 2.0
    monkeypatch.syspath_prepend(str(REPO_ROOT))
    script = ("import streamlit as st\nfrom pages._local_model import sidebar_refresh\n"
              "st.write(repr(sidebar_refresh('monitoring')), repr(sidebar_refresh('results')))")
    row, _, _ = _scheduled(engine, settings)
    at = AppTest.from_string(script, default_timeout=30).run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.markdown[0].value == "10.0 None"
    set_paused(engine, int(row.id), True)
    assert AppTest.from_string(script, default_timeout=30).run().markdown[0].value == \
        "None None"


def test_the_form_offers_the_gate_and_defaults_to_the_baseline(engine, settings, page_env):
    """The CLI has `schedules add --gate`; the form had no gate choice."""
    from evalcore.store.schedules import list_schedules

    add_fake_model(settings)
    seed_dataset(engine, "sums", [f"What is {i} plus {i}?" for i in range(3)])
    at = run_page(PAGE)
    at.button(key="FormSubmitter:monitoring.add-Add schedule").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert list_schedules(engine)[0].gate == {}  # compared with the baseline
    at.radio(key="monitoring.gate").set_value("custom")
    at.text_area(key="monitoring.gate_text.stability").set_value(
        "[absolute]\nmean_success_rate_min = 0.4\n")
    at.button(key="FormSubmitter:monitoring.add-Add schedule").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert list_schedules(engine)[1].gate == {"absolute": {"mean_success_rate_min": 0.4}}
    at.radio(key="monitoring.gate").set_value("default")
    at.button(key="FormSubmitter:monitoring.add-Add schedule").click().run()
    assert list_schedules(engine)[2].gate["absolute"]["mean_success_rate_min"] == 0.70
