"""The Stability page under AppTest: empty database, a finished run's results, starting a run."""
from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests.pages.helpers import add_fake_model, run_page, values, wait_finished, wait_jobs

REPO = Path(__file__).resolve().parents[2]
PAGE = str(REPO / "pages" / "stability.py")
SAMPLE = REPO / "data" / "samples" / "mc_en.jsonl"
MAPPING = {"question": "question", "reference": "answer", "choices": "choices",
           "task_type": "choice"}
ROUNDS = 3
PATTERN = {0: [1, 1, 1], 1: [1, 0, 1], 2: [0, 0, 0], 3: [1, 0, 0]}
"""Verdicts per item position for the stored run: 3/3, 2/3, 0/3, 1/3 right."""


def open_page() -> AppTest:
    return run_page(PAGE)


def stored_run(engine, pattern: dict = PATTERN) -> int:
    """A finished stability run written straight to the store (no model server needed);
    a None verdict is a call that failed after its retries."""
    from evalcore.dataset import import_dataset, load_items
    from evalcore.store import queries
    from evalcore.store.tables import utcnow

    dataset = import_dataset(engine, SAMPLE, name="mc", mapping=MAPPING)
    items = load_items(engine, dataset.id, limit=len(pattern))
    start = utcnow() - timedelta(seconds=30)
    calls = len(items) * ROUNDS
    run = queries.create_run(engine, kind="stability", dataset_id=dataset.id, model="fake",
                             judge="rules", rounds=ROUNDS, status="done", total=calls,
                             done=calls, started_at=start, finished_at=utcnow(),
                             config={"item_ids": [i.id for i in items]})
    queries.record_calls(engine, [
        {"run_id": run.id, "item_id": item.id, "round": r + 1, "stage": "answer",
         "model": "fake", "prompt": item.question,
         "answer": None if v is None else f"=cmd answer {pos}.{r + 1}",
         "correct": bool(v), "score": float(bool(v)), "reason": f"reason {pos}.{r + 1}",
         "error": "HTTP 500 (gave up after 6 attempts)" if v is None else None}
        for pos, item in enumerate(items) for r, v in enumerate(pattern[pos])])
    return int(run.id)


def test_page_loads_with_an_empty_database(page_env):
    at = open_page()
    infos = values(at, "info")
    assert any("No datasets yet" in t for t in infos)
    assert any("No stability runs yet" in t for t in infos)
    assert not at.get("plotly_chart")


def test_finished_run_shows_cards_figures_table_and_drilldown(page_env, engine):
    run_id = stored_run(engine)
    at = open_page()
    assert at.session_state["stability.run_id"] == run_id
    cards = "".join(t for t in values(at, "markdown") if "right</div>" in t)
    for j in range(ROUNDS, -1, -1):  # every bin from N down to 0, in that order
        assert f"{j}/{ROUNDS} right" in cards
    positions = [cards.index(f"{j}/{ROUNDS} right") for j in range(ROUNDS, -1, -1)]
    assert positions == sorted(positions)
    assert "#1a9850" in cards and "#d73027" in cards  # 3/3 green, 0/3 and 1/3 red
    assert len(at.get("plotly_chart")) == 4

    tables = [df.value for df in at.dataframe]
    questions = next(t for t in tables if "ci_width" in t.columns)
    assert list(questions["correct_count"]) == [0, 1, 2, 3]  # lowest success rate first
    at.selectbox(key="stability.sort").select("ci_width").run()
    assert not at.exception
    questions = next(df.value for df in at.dataframe if "ci_width" in df.value.columns)
    assert questions["ci_width"].is_monotonic_decreasing

    # one numbering: the first question is Q1 in the table and the drill-down, not 0
    assert sorted(questions["Q"]) == ["Q1", "Q2", "Q3", "Q4"]
    assert questions.set_index("Q").loc["Q1", "correct_count"] == 3  # PATTERN[0]: 3/3
    drill = at.selectbox(key="stability.question")
    assert all(o.startswith("Q") for o in drill.options)
    best_item = questions.sort_values("correct_count")["item"].iloc[-1]  # the 3/3 item
    drill.select(best_item).run()
    head = next(m for m in values(at, "markdown") if m.startswith("**Question Q1**"))
    # Q1's answer is Mercury, the second option, named as the prompt named it and as its
    # answers are grouped (first-day walk: "choice 0..3" in the prompt, 'B' and
    # "reference: 3 (option D)" on the page)
    assert head.endswith("reference: `choice 1`"), head
    groups = next(df.value for df in at.dataframe if "example" in df.value.columns)
    assert set(groups["answer"]) <= {"choice 1", "no answer"}, groups
    rounds = next(df.value for df in at.dataframe if "verdict" in df.value.columns)
    assert list(rounds["round"]) == [1, 2, 3]
    assert list(rounds["verdict"]) == ["right", "right", "right"]
    assert all(a.startswith("=cmd answer") for a in rounds["answer"])
    labels = [b.proto.label for b in at.get("download_button")]
    assert labels == ["CSV (中文表头)", "CSV (English headers)", "JSON"]
    assert not at.exception


def test_starting_a_run_through_the_widgets_creates_and_runs_it(page_env, engine, runner_clients):
    from evalcore.dataset import import_dataset
    from evalcore.store import queries
    from tests.fakes.fault_server import FaultConfig, FaultServer

    import_dataset(engine, SAMPLE, name="mc", mapping=MAPPING)
    with FaultServer(FaultConfig(latency=0.01)) as server:
        add_fake_model(page_env, server.openai_url)
        at = open_page()
        at.selectbox(key="stability.model").select("fake")
        previews = [c.value for c in at.code if "planet" in str(c.value).lower()]
        assert previews, "the prompt preview shows the first item"
        at.number_input(key="stability.rounds").set_value(2)
        limit = next(w for w in at.number_input if w.key.startswith("stability.limit"))
        limit.set_value(3)
        at.button(key="stability.start").click().run()
        assert not at.exception, [e.value for e in at.exception]
        run_id = at.session_state["stability.run_id"]
        run = queries.get_run(engine, run_id)
        assert (run.kind, run.model, run.rounds, run.judge, run.total) == (
            "stability", "fake", 2, "rules", 6)
        run = wait_finished(engine, run_id)
        assert run.status == "done", run.error
        assert server.stats.requests >= 6
    at.run()  # the finished run now shows its results
    assert not at.exception
    assert any("ci_width" in df.value.columns for df in at.dataframe)


def test_cancel_button_requests_cancellation(page_env, engine, runner_clients):
    from evalcore.dataset import import_dataset
    from evalcore.store import queries
    from tests.fakes.fault_server import FaultConfig, FaultServer

    import_dataset(engine, SAMPLE, name="mc", mapping=MAPPING)
    with FaultServer(FaultConfig(latency=0.5)) as server:
        add_fake_model(page_env, server.openai_url, "slow", concurrency=1)
        at = open_page()
        at.selectbox(key="stability.model").select("slow")
        at.number_input(key="stability.rounds").set_value(20)
        at.button(key="stability.start").click().run()
        run_id = at.session_state["stability.run_id"]
        at.button(key="stability.cancel").click().run()
        assert not at.exception
        assert queries.get_run(engine, run_id).model == "slow"
        assert queries.get_run(engine, run_id).cancel_requested
        run = wait_finished(engine, run_id)
        assert run.status == "cancelled"
        assert run.done < run.total


def test_rejudging_a_sample_from_the_page_stores_it_and_shows_the_reliability(
        page_env, engine, runner_clients):
    from evalcore.runner.rejudge import REJUDGE_PREFIX
    from evalcore.store import queries
    from tests.fakes.fault_server import FaultConfig, FaultServer

    run_id = stored_run(engine)
    with FaultServer(FaultConfig()) as server:  # answers the verdict schema with score 0
        add_fake_model(page_env, server.openai_url, "judge", concurrency=4)
        at = open_page()
        assert not any("Judge reliability" in t for t in values(at, "caption"))
        # preselected (a rules run: the model a new run would use), no "choose first" error
        assert at.selectbox(key="stability.rejudge_model").value == "local"
        at.selectbox(key="stability.rejudge_model").select("judge")
        at.number_input(key="stability.rejudge_sample").set_value(5)
        at.number_input(key="stability.rejudge_passes").set_value(2)
        at.button(key="stability.rejudge_go").click().run()
        assert not at.exception, [e.value for e in at.exception]
        jobs = wait_jobs(engine)  # the app's embedded worker executes the queued pass
        assert [(j.kind, j.status) for j in jobs] == [("rejudge", "done")]
        assert server.stats.requests == 10
        at.run()
    stages = [c.stage for c in queries.iter_calls(engine, run_id, stage_prefix=REJUDGE_PREFIX)]
    job_id = jobs[0].id
    assert sorted(stages) == [f"rejudge1:{job_id}"] * 5 + [f"rejudge2:{job_id}"] * 5
    # the fake judge gives one reason and score 0 to every answer: flagged on the page
    warning = next(t for t in values(at, "warning") if "Judge reliability" in t)
    assert "5 answers re-judged 2 times; 0 of 10 judgements failed; flip rate 0.000" in warning
    assert "DEGENERATE JUDGE" in warning and "one verdict for all 10 judgements: wrong" in warning
    assert "Cohen's kappa n/a (every judgement in passes 1 and 2 is wrong" in warning
    table = next(df.value for df in at.dataframe if "degenerate" in df.value.columns)
    assert "one reason for all 10 judgements" in table["degenerate"].iloc[0]
    detail = next(df.value for df in at.dataframe if "run verdict" in df.value.columns)
    assert set(detail["Q"]) <= {"Q1", "Q2", "Q3", "Q4"}  # positions, not database ids


def test_a_new_run_starts_on_the_local_model_then_on_the_last_one_used(page_env, engine):
    """Never the alphabetically first model (it may be a judge that cannot answer)."""
    from evalcore.providers.registry import load_models

    from evalcore.dataset import import_dataset
    from evalcore.store import queries

    add_fake_model(page_env, name="aaa-judge")
    add_fake_model(page_env, name="fake")
    assert "local" in load_models(page_env.models_path)
    run_id = stored_run(engine)  # its model is "fake"
    queries.delete_run(engine, run_id)
    import_dataset(engine, SAMPLE, name="mc2", mapping=MAPPING, allow_duplicate=True)
    assert open_page().selectbox(key="stability.model").value == "local"
    stored_run_again = queries.create_run(engine, kind="stability", model="fake", rounds=1)
    assert stored_run_again.model == "fake"
    at = open_page()
    assert at.selectbox(key="stability.model").value == "fake"


def test_errored_rounds_are_shown_and_the_seed_rule_is_a_toggle(page_env, engine):
    stored_run(engine, {**PATTERN, 0: [1, 1, None]})  # item 0: 2 right, 1 failed call
    at = open_page()
    assert not at.exception
    warning = " ".join(values(at, "warning"))
    assert "1 rounds in 1 questions have no verdict" in warning and "left out" in warning
    cards = "".join(t for t in values(at, "markdown") if "right</div>" in t)
    assert "incomplete" in cards
    table = next(df.value for df in at.dataframe if "ci_width" in df.value.columns)
    row = table.set_index("item").loc[0]
    assert (row["answered"], row["errored"], row["success_rate"]) == (2, 1, 1.0)

    at.toggle(key="stability.errors_as_wrong").set_value(True).run()
    assert not at.exception
    assert "count as wrong answers" in " ".join(values(at, "warning"))
    table = next(df.value for df in at.dataframe if "ci_width" in df.value.columns)
    assert table.set_index("item").loc[0, "success_rate"] == pytest.approx(2 / 3)


def test_more_than_20_rounds_show_class_cards_and_the_full_table(page_env, engine):
    from tests.fakes.stored_runs import seed_dataset, seed_run

    n = 25
    ds = seed_dataset(engine, "many-rounds", ["a?", "b?", "c?"])
    seed_run(engine, ds, {0: [1] * n, 1: [1] * 20 + [0] * 5, 2: [0] * n}, n)
    at = open_page()
    cards = "".join(t for t in values(at, "markdown") if "right</div>" in t)
    assert "perfect (N of N): 25-25 right" in cards and "high (>= 80%): 20-24 right" in cards
    assert f"0/{n} right" not in cards  # no card per bin
    bins = next(df.value for df in at.dataframe if list(df.value.columns)[:2] == ["correct",
                                                                                   "count"])
    assert len(bins) == n + 1 and bins["count"].sum() == 3


def test_start_form_shows_the_cost_estimate(page_env, engine):
    from evalcore.dataset import import_dataset
    from evalcore.providers.base import ModelConfig
    from evalcore.providers.registry import add_model

    import_dataset(engine, SAMPLE, name="mc", mapping=MAPPING)
    add_fake_model(page_env)
    at = open_page()
    assert any("no cost estimate: set price_in" in c for c in values(at, "caption"))
    add_model(page_env.models_path, ModelConfig(name="priced", base_url="http://127.0.0.1:9/v1",
                                                model="p", price_in=1.0, price_out=2.0),
              )
    at = open_page()
    at.selectbox(key="stability.model").select("priced").run()
    assert any("estimated cost" in c for c in values(at, "caption"))
    assert not at.exception


def test_start_form_defaults_to_20_items_on_the_local_model_and_says_how_long(page_env, engine,
                                                                               tmp_path):
    """A 60-question set on the local model: K = 20 by default (was 0 = all, one click =
    every item) and "100 calls, about 50 s on local" before the button (default speed:
    1 s a call, 2 in flight)."""
    from evalcore.dataset import import_dataset

    rows = ["Summary,Sentiment,Label"] + [f"review number {i},positive,1" for i in range(60)]
    path = tmp_path / "reviews.csv"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    import_dataset(engine, path, name="reviews")
    at = open_page()
    limit = next(w for w in at.number_input if w.key.startswith("stability.limit"))
    assert limit.value == 20
    assert any("100 calls, about 50 s on local" in v for v in values(at, "markdown"))
    limit.set_value(0).run()
    assert any("300 calls, about 2 m 30 s on local" in v for v in values(at, "markdown"))


def test_classes_are_written_under_their_chart(page_env, engine):
    """3/3, 2/3, 0/3, 1/3 right: the classes as text (a browser reads them, not the SVG)."""
    stored_run(engine)
    at = open_page()
    assert ("1 perfect (100%), 0 high (>= 80%), 1 unstable (50-80%), 1 severe (0-50%), "
            "1 failed (0%)") in values(at, "caption")


def test_rejudge_numbers_queue_nothing_and_the_form_says_calls_and_time(page_env, engine):
    """First-day walk: the re-judge inputs sat in an st.form, so Enter in a number field
    submitted it (3 passes queued for one intended), and the form gave no calls/time
    estimate. Typing K and J now queues nothing; the line follows them."""
    from evalcore.store import jobs, queries

    run_id = stored_run(engine)
    answers = queries.get_run(engine, run_id).done
    at = open_page()
    assert not at.get("form")
    at.number_input(key="stability.rejudge_sample").set_value(2).run()
    at.number_input(key="stability.rejudge_passes").set_value(4).run()
    assert not at.exception, [e.value for e in at.exception]
    assert not jobs.list_jobs(engine)
    lines = [v for v in values(at, "markdown") if "Re-judging: " in v]
    assert len(lines) == 1 and f"{min(2, answers) * 4} calls, about" in lines[0], lines
    assert "on local" in lines[0]
