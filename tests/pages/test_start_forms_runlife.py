"""The start forms (issue 21): one click, one run (each click a new submission key, a
click from a replaced button ignored, the same key never a second run), and numbers out
of their bounds refuse the start and say why instead of using the last valid value."""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.pages.helpers import run_page, values

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "data" / "samples" / "mc_en.jsonl"
MAPPING = {"question": "question", "reference": "answer", "choices": "choices",
           "task_type": "choice"}


@pytest.fixture()
def no_worker(monkeypatch):  # type: ignore[no-untyped-def]
    """Runs stay queued: the tests count them, no model is called."""
    monkeypatch.setenv("EVALCORE_EMBEDDED_WORKER", "0")


def _dataset(engine) -> None:  # type: ignore[no-untyped-def]
    from evalcore.dataset import import_dataset

    import_dataset(engine, SAMPLE, name="mc", mapping=MAPPING)


def _buttons(at, start: str) -> list:  # type: ignore[no-untyped-def]
    """The start button(s) drawn: `start`, or `start.N` after N submissions."""
    import re

    return [b for b in at.button if re.fullmatch(re.escape(start) + r"(\.\d+)?", b.key or "")]


@pytest.mark.parametrize("typed", [0, 1000, -3])
def test_rounds_out_of_bounds_refuse_the_start_and_say_why(page_env, engine, no_worker, typed):
    from evalcore.store import queries

    _dataset(engine)
    at = run_page(str(REPO / "pages" / "stability.py"))
    at.number_input(key="stability.rounds").set_value(typed).run()
    assert not at.exception, [e.value for e in at.exception]
    assert any(f"Rounds N must be from 1 to 100 (it is {typed})" in e
               for e in values(at, "error"))
    assert at.button(key="stability.start").disabled  # a browser cannot click it
    assert queries.list_runs(engine) == []
    at.number_input(key="stability.rounds").set_value(7).run()
    assert not values(at, "error")
    at.button(key="stability.start").click().run()
    assert [r.rounds for r in queries.list_runs(engine)] == [7]


def test_k_above_the_dataset_size_refuses_the_start(page_env, engine, no_worker):
    _dataset(engine)
    at = run_page(str(REPO / "pages" / "stability.py"))
    limit = next(w for w in at.number_input if w.key.startswith("stability.limit"))
    limit.set_value(10_000).run()
    assert any("K must be from 0 to" in e and "(it is 10000)" in e for e in values(at, "error"))
    assert at.button(key="stability.start").disabled


def test_one_click_one_run_and_a_late_second_click_no_second_run(page_env, engine,
                                                                  no_worker):
    from evalcore.store import queries

    _dataset(engine)
    at = run_page(str(REPO / "pages" / "stability.py"))
    at.button(key="stability.start").click().run()
    assert not at.exception, [e.value for e in at.exception]
    first = [r.id for r in queries.list_runs(engine)]
    assert len(first) == 1
    # the clicked button is replaced: a second click still on its way hits nothing
    assert [b.key for b in _buttons(at, "stability.start")] == ["stability.start.1"]
    # the double click's second half landing on the fresh button: the same submission
    at.button(key="stability.start.1").click().run()
    assert [r.id for r in queries.list_runs(engine)] == first
    assert at.session_state["stability.run_id"] == first[0]


def test_a_click_after_an_input_changed_is_a_new_run_at_once(page_env, engine, no_worker):
    from evalcore.store import queries

    _dataset(engine)
    at = run_page(str(REPO / "pages" / "stability.py"))
    at.button(key="stability.start").click().run()
    at.number_input(key="stability.rounds").set_value(2).run()  # a rerun, no click
    assert len(queries.list_runs(engine)) == 1
    at.button(key="stability.start.1").click().run()
    assert sorted(r.rounds for r in queries.list_runs(engine)) == [2, 5]


def test_a_click_after_the_double_click_window_is_a_new_run(page_env, engine, no_worker,
                                                            monkeypatch):
    from evalcore.store import queries
    from pages import _submit

    monkeypatch.setattr(_submit, "DOUBLE_CLICK_S", 0.0)
    _dataset(engine)
    at = run_page(str(REPO / "pages" / "stability.py"))
    at.button(key="stability.start").click().run()
    at.button(key="stability.start.1").click().run()
    assert len(queries.list_runs(engine)) == 2


def test_a_submission_cut_short_is_sent_again_with_its_key(page_env, engine, no_worker,
                                                           monkeypatch):
    """The second click of a double click stops the first script run, perhaps after its
    run was created: the page sends the pending key again and gets that run back."""
    from evalcore.service import runs
    from evalcore.store import queries
    from pages import _submit

    monkeypatch.setattr(_submit, "DOUBLE_CLICK_S", 0.0)
    keys: list[str] = []
    real = runs.create_run

    def cut_short(*args, **kwargs):  # type: ignore[no-untyped-def]
        keys.append(kwargs["submit_key"])
        real(*args, **kwargs)
        if len(keys) == 1:  # created, then the script run is stopped by the next click
            from streamlit.runtime.scriptrunner_utils.exceptions import StopException

            raise StopException()
        return real(*args, **kwargs)

    monkeypatch.setattr(runs, "create_run", cut_short)
    _dataset(engine)
    at = run_page(str(REPO / "pages" / "stability.py"))
    at.button(key="stability.start").click().run()
    assert len(queries.list_runs(engine)) == 1
    at.run()  # the stopped run drew up to the busy button; the next run draws the form
    at.button(key="stability.start").click().run()  # the same button: it was not replaced
    assert keys[0] == keys[1] and len(queries.list_runs(engine)) == 1


def test_the_page_passes_a_new_key_per_submission(page_env, engine, no_worker, monkeypatch):
    """The key reaches the action and differs for the next submission (the action keeps
    one run per key: tests/store/test_store_submissions.py)."""
    from evalcore.service import runs
    from pages import _submit

    monkeypatch.setattr(_submit, "DOUBLE_CLICK_S", 0.0)
    keys: list[str] = []
    real = runs.create_run

    def spy(*args, **kwargs):  # type: ignore[no-untyped-def]
        keys.append(kwargs["submit_key"])
        return real(*args, **kwargs)

    monkeypatch.setattr(runs, "create_run", spy)
    _dataset(engine)
    at = run_page(str(REPO / "pages" / "stability.py"))
    at.button(key="stability.start").click().run()
    at.button(key="stability.start.1").click().run()
    assert len(keys) == 2 and len(set(keys)) == 2 and all(keys)


def _fairness_suite(engine, tmp_path) -> None:  # type: ignore[no-untyped-def]
    from evalcore.perturb.counterfactual import generate_suite, save_suite

    save_suite(engine, generate_suite("occupations", "zh"), "suite-zh")


def _robustness_set(engine, tmp_path) -> None:  # type: ignore[no-untyped-def]
    from tests.pages.test_robustness_page import approved_set

    approved_set(engine, tmp_path)


FORMS = {  # page, set-up, the start button, a number input and an out-of-range value
    "stability": ("stability.py", _dataset, "stability.start", "stability.rounds", 101,
                  "Rounds N must be from 1 to 100"),
    "robustness": ("robustness.py", _robustness_set, "robustness.start", "robustness.rounds",
                   0, "Rounds N must be from 1 to 100"),
    "fairness": ("fairness.py", _fairness_suite, "fairness.start", "fairness.samples", 0,
                 "Samples must be from 1 to 100"),
    "fairness-temperature": ("fairness.py", _fairness_suite, "fairness.start",
                             "fairness.temperature", 2.5, "Temperature must be from 0 to 2"),
    "attacks": ("attacks.py", _dataset, "attacks.generate", "attacks.seed", -1,
                "Seed must be at least 0"),
}


@pytest.mark.parametrize("form", list(FORMS))
def test_every_start_form_refuses_out_of_range_numbers_and_rotates_its_key(
        page_env, engine, no_worker, tmp_path, form):
    from evalcore.store import jobs, queries

    page, setup, start, number, bad, why = FORMS[form]
    setup(engine, tmp_path) if setup is not _dataset else setup(engine)
    at = run_page(str(REPO / "pages" / page))
    good = at.number_input(key=number).value
    at.number_input(key=number).set_value(bad).run()
    assert not at.exception, [e.value for e in at.exception]
    assert any(why in e for e in values(at, "error")), values(at, "error")
    assert at.button(key=start).disabled
    at.number_input(key=number).set_value(good).run()
    at.button(key=start).click().run()
    assert not at.exception, [e.value for e in at.exception]
    made = len(queries.list_runs(engine)) + len(jobs.list_jobs(engine, kind="attack"))
    assert made == 1
    assert [b.key for b in _buttons(at, start)] == [f"{start}.1"]


def test_a_queued_generation_says_the_worker_is_busy(page_env, engine, no_worker):
    from evalcore.store import jobs

    _dataset(engine)
    busy = jobs.create_job(engine, "rejudge", label="busy")
    assert jobs.claim_job(engine, "w1", job_id=busy, lease_s=600) is not None
    at = run_page(str(REPO / "pages" / "attacks.py"))
    at.button(key="attacks.generate").click().run()
    assert not at.exception, [e.value for e in at.exception]
    queued = jobs.list_jobs(engine, kind="attack")[0]
    assert any(f"waiting: worker busy with 1 job; job #{queued.id} starts" in c
               for c in values(at, "caption")), values(at, "caption")


def test_rejudge_numbers_out_of_bounds_are_refused(page_env, engine, no_worker):
    from evalcore.store import jobs
    from tests.pages.helpers import add_fake_model
    from tests.pages.test_stability_page import stored_run

    stored_run(engine)
    add_fake_model(page_env, name="judge")
    at = run_page(str(REPO / "pages" / "stability.py"))
    at.selectbox(key="stability.rejudge_model").select("judge")
    at.number_input(key="stability.rejudge_sample").set_value(1000)
    at.button(key="stability.rejudge_go").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert any("K must be from 1 to 500 (it is 1000)" in e for e in values(at, "error"))
    assert jobs.list_jobs(engine, kind="rejudge") == []
