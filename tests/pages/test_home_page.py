"""Home: the steps with what exists, and the one-click demo on the local model."""
from __future__ import annotations

from tests.pages.helpers import values


def test_steps_show_what_exists_and_the_demo_queues_a_local_run(app, engine, monkeypatch):
    from evalcore.store import jobs, queries

    monkeypatch.setenv("EVALCORE_EMBEDDED_WORKER", "0")  # the run stays queued here
    at = app.run()  # Home is the default page (its links need the router)
    assert not at.exception, [e.value for e in at.exception]
    assert any("no datasets" in v for v in values(at, "markdown"))
    at.button(key="home.demo").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert [t.value for t in at.title] == ["Stability"]  # the demo run is shown there
    run = queries.list_runs(engine)[0]
    assert (run.kind, run.model, run.rounds, run.total) == ("stability", "local", 5, 60)
    assert [(j.kind, j.status) for j in jobs.list_jobs(engine)] == [("run", "queued")]
    at.switch_page("pages/home.py").run()
    assert any(v.endswith("*1 dataset*") for v in values(at, "markdown"))
    assert any("1 run in all" in v for v in values(at, "markdown"))


def test_demo_says_what_it_asks_and_its_measured_time(app, engine, monkeypatch):
    """The caption names the sample and the time the bench measured, not a guess."""
    from evalcore.demo import DEMO_SECONDS

    monkeypatch.setenv("EVALCORE_EMBEDDED_WORKER", "0")
    at = app.run()
    assert not at.exception, [e.value for e in at.exception]
    caption = " ".join(values(at, "caption"))
    assert "12 short English product reviews" in caption and "60 calls" in caption
    assert f"took {DEMO_SECONDS:.0f} s on a 2-core machine" in caption
    assert "half a minute" not in caption


def test_demo_sample_is_short_english_sentiment(engine):
    """The demo imports as an English sentiment set (one-word answers the 135M model can
    give in a few tokens), half positive, half negative, not Chinese maths."""
    from evalcore.dataset import import_dataset, load_questions
    from evalcore.demo import DEMO_FILE

    ds = import_dataset(engine, DEMO_FILE, name="demo")
    assert (ds.format, ds.task_type, ds.language, ds.item_count) == (
        "flipkart", "sentiment", "en", 12)
    questions = load_questions(engine, ds.id)
    assert sorted(q.reference for q in questions) == ["negative"] * 6 + ["positive"] * 6
    assert max(len(q.question) for q in questions) < 60


def test_fairness_counts_add_up_with_the_bias_benchmarks(app, engine):
    """A CrowS-Pairs import is a fairness suite (as the Fairness page lists it), not a
    dataset beside "1 fairness suite"."""
    from pathlib import Path

    from evalcore import actions
    from evalcore.auth import local_actor
    from evalcore.dataset import import_dataset
    from evalcore.perturb.counterfactual import generate_suite

    repo = Path(__file__).resolve().parents[2]
    import_dataset(engine, repo / "data" / "samples" / "crows_pairs_en.csv", name="crows")
    actions.save_suite(local_actor(), engine, generate_suite("age", "en"), "fair-age")
    at = app.run()
    assert not at.exception, [e.value for e in at.exception]
    lines = values(at, "markdown")
    assert any(v.endswith("*no datasets*") for v in lines), lines
    assert any("*2 fairness suites (1 CrowS-Pairs, 1 counterfactual), no runs yet*" in v
               for v in lines), lines
