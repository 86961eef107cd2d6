"""The Results page under AppTest: empty database, the run list and filters, a run's
details, cancel and resume, exports, and two stability runs compared."""
from __future__ import annotations

import time
from datetime import timedelta
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests.fakes.stored_runs import scipy_paired_p, seed_dataset, seed_run
from tests.pages.helpers import add_fake_model, run_page, values

REPO = Path(__file__).resolve().parents[2]
PAGE = str(REPO / "pages" / "results.py")
QUESTIONS = [f"What is {i} times 3?" for i in range(6)]
A = {0: [1, 1, 1], 1: [1, 0, None], 2: [0, 0, 0], 3: [1, 1, 0], 4: [0, 0, 1]}
B = {0: [1, 1, 1], 1: [1, 1, 1], 2: [0, 1, 0], 3: [0, 0, 0], 4: [1, 1, 1]}


def open_page(tab: str = "Runs") -> AppTest:
    """The page with `tab` open (tabs are lazy: only the open one runs)."""
    return run_page(PAGE, {"results.tab": tab})


def table_with(at: AppTest, column: str):
    return next(df.value for df in at.dataframe if column in df.value.columns)


def test_empty_database(page_env):
    at = open_page()
    assert [t.value for t in at.title] == ["Results"]
    assert any("No runs yet" in t for t in values(at, "info"))
    assert not at.dataframe and not at.get("plotly_chart")
    at = open_page("Compare")
    assert any("two stability runs" in t for t in values(at, "info"))
    assert not any("No runs yet" in t for t in values(at, "info"))  # the Runs tab did not run
    for tab in ("Leaderboard", "Trend", "Trust report", "Work queue"):
        assert not open_page(tab).exception


def test_runs_are_listed_filtered_and_detailed(page_env, engine):
    ds = seed_dataset(engine, "times", QUESTIONS)
    run_a = seed_run(engine, ds, A, 3, model="m-a", name="baseline")
    run_b = seed_run(engine, ds, B, 3, model="m-b")
    fair = seed_run(engine, ds, {0: [1]}, 1, kind="fairness", model="m-a")
    at = open_page()
    runs = table_with(at, "stale")
    assert list(runs["id"]) == [fair, run_b, run_a]
    assert set(runs["dataset"]) == {"times"}

    at.multiselect(key="results.filter.kind").select("stability").run()
    at.multiselect(key="results.filter.model").select("m-a").run()
    assert list(table_with(at, "stale")["id"]) == [run_a]
    assert at.selectbox(key="results.pick").value == run_a
    assert not at.exception
    shown = " ".join(values(at, "markdown") + values(at, "caption"))
    assert "m-a" in shown and "times" in shown
    assert "FAKE_API_KEY" in str([j.proto.body for j in at.json])  # env var name, not a key
    metrics = {m.label: m.value for m in at.metric}
    assert metrics[f"Done of {len(A) * 3}"] == f"{sum(len(v) for v in A.values())}"
    assert metrics["Errors"] == "1"
    assert metrics["Tokens"] == f"{sum(len(v) for v in A.values()) * 8:,}"
    labels = [b.proto.label for b in at.get("download_button")]
    assert labels[:4] == ["Raw calls CSV", "Stability CSV (中文表头)",
                          "Stability CSV (English headers)", "Stability JSON"]
    calls = table_with(at, "attempts")
    assert len(calls) == sum(len(v) for v in A.values())
    at.toggle(key="results.errors_only").set_value(True).run()
    errors = table_with(at, "attempts")
    assert list(zip(errors["item_idx"], errors["round"])) == [(1, 3)]
    assert not _has(at, "results.cancel")  # nor to cancel
    assert not _has(at, "results.resume")  # a done run has nothing to resume

    at.multiselect(key="results.filter.model").unselect("m-a").run()
    at.multiselect(key="results.filter.kind").unselect("stability").select("fairness").run()
    assert at.selectbox(key="results.pick").value == fair
    assert "Raw calls CSV" in [b.proto.label for b in at.get("download_button")]
    assert "Stability JSON" not in [b.proto.label for b in at.get("download_button")]
    assert any("on the Fairness page" in c for c in values(at, "caption"))
    assert not at.exception


def _has(at: AppTest, key: str) -> bool:
    return any(getattr(w, "key", None) == key for w in at.button)


def test_cancel_button_sets_cancel_requested(page_env, engine):
    from evalcore.store import queries
    from evalcore.store.tables import utcnow

    ds = seed_dataset(engine, "times", QUESTIONS)
    run_id = seed_run(engine, ds, {0: [1], 1: [0]}, 3, status="running")
    queries.update_run(engine, run_id, heartbeat_at=utcnow())
    at = open_page()
    assert not _has(at, "results.resume")
    at.button(key="results.cancel").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert queries.get_run(engine, run_id).cancel_requested


def test_resume_is_refused_with_the_reason_when_the_run_came_back_to_life(page_env, engine,
                                                                          monkeypatch):
    from evalcore.store import jobs, queries
    from evalcore.store.tables import utcnow

    monkeypatch.setenv("EVALCORE_EMBEDDED_WORKER", "0")  # no worker in this process
    ds = seed_dataset(engine, "times", QUESTIONS)
    run_id = seed_run(engine, ds, {0: [1]}, 3, status="running")
    job_id = jobs.create_job(engine, "run", run_id=run_id)
    jobs.claim_job(engine, "dead@host:1", job_id=job_id, lease_s=0.01)  # its worker died
    queries.update_run(engine, run_id, heartbeat_at=utcnow() - timedelta(minutes=5))
    time.sleep(0.05)
    at = open_page()
    assert any("no worker has shown a sign of life" in w for w in values(at, "warning"))
    assert not _has(at, "results.cancel")
    assert jobs.claim_job(engine, "other@host:1", job_id=job_id) is not None  # a worker took it
    queries.update_run(engine, run_id, heartbeat_at=utcnow())
    at.button(key="results.resume").click().run()
    assert not at.exception
    assert any("Cannot resume" in e and "another process" in e for e in values(at, "error"))
    assert queries.get_run(engine, run_id).status == "running"


def test_resume_finishes_a_cancelled_run(page_env, engine):
    from evalcore.dataset import get_dataset
    from evalcore.providers.client import close_clients
    from evalcore.runner.background import get_runner
    from evalcore.runner.plan import RunSpec
    from evalcore.runner.start import cancel_run, store_run
    from evalcore.store import queries
    from tests.fakes.fault_server import FaultConfig, FaultServer

    ds = seed_dataset(engine, "times", QUESTIONS)
    with FaultServer(FaultConfig(latency=0.01)) as server:
        add_fake_model(page_env, server.openai_url)
        run_id = store_run(engine, RunSpec(dataset=get_dataset(engine, ds).name, model="fake",
                                            rounds=2, limit=3), page_env.models_path)
        cancel_run(engine, run_id)  # still queued: cancelled at once
        assert queries.get_run(engine, run_id).status == "cancelled"
        at = open_page()
        at.button(key="results.resume").click().run()
        assert not at.exception, [e.value for e in at.exception]
        deadline = time.monotonic() + 60
        # the run starts as 'cancelled' (finished): wait for 'done', not just any end state
        while queries.get_run(engine, run_id).status not in ("done", "failed"):
            assert time.monotonic() < deadline, "resumed run did not finish"
            time.sleep(0.1)
        get_runner().call(close_clients(), timeout=10)
        assert server.stats.requests >= 6
    run = queries.get_run(engine, run_id)
    assert (run.status, run.done, run.total) == ("done", 6, 6), run.error


def test_compare_runs_side_by_side(page_env, engine):

    ds = seed_dataset(engine, "times", QUESTIONS)
    run_a = seed_run(engine, ds, A, 3, model="m-a")
    run_b = seed_run(engine, ds, B, 3, model="m-b")
    at = open_page("Compare")
    assert at.multiselect(key="results.compare_runs").value == [run_a, run_b]
    # each run names its dataset: walked, the picker said "#2 · local · N=2" for runs of
    # different datasets, and the comparison then found no item in common
    assert all(" on times · N=3 · " in o for o in at.multiselect(key="results.compare_runs").options)
    rate = {pos: sum(1 for v in row if v == 1) / sum(1 for v in row if v is not None)
            for pos, row in A.items()}  # over the answered rounds (failure policy exclude)
    rate_b = {pos: sum(row) / 3 for pos, row in B.items()}
    table = table_with(at, "shared_accuracy")
    assert list(table["run_id"]) == [run_a, run_b]
    assert table["shared_accuracy"].tolist() == [
        sum(rate.values()) / len(A), sum(rate_b.values()) / len(B)]
    p = scipy_paired_p([rate[i] for i in A], [rate_b[i] for i in A])
    text = " ".join(values(at, "markdown"))
    assert "Wilcoxon" in text and f"p = {p:.3g}" in text
    assert "no significant difference" in text  # 5 questions cannot make a finding
    differ = table_with(at, f"run {run_b}")
    assert len(differ) == sum(1 for i in A if rate[i] != rate_b[i])
    # one numbering: "Q<position + 1>" in the table and the picker, never the database id
    assert list(differ["Q"]) == [f"Q{i + 1}" for i in A if rate[i] != rate_b[i]]
    assert at.selectbox(key="results.compare_item").options[0] == differ["Q"].iloc[0]
    assert not at.exception

    third = seed_run(engine, ds, {0: [1, 1, 1], 1: [0, 0, 0]}, 3, model="m-c")
    at = open_page("Compare")
    assert at.multiselect(key="results.compare_runs").value == [run_b, third]  # newest two
    at.multiselect(key="results.compare_runs").select(run_a).run()
    assert not at.exception
    assert any(f"run {third} lacks 3" in w and f"run {run_a} lacks" not in w
               for w in values(at, "warning"))
    assert len(table_with(at, "shared_accuracy")) == 3
    at.multiselect(key="results.compare_runs").unselect(run_a).unselect(third).run()
    assert any("two different runs" in t for t in values(at, "info"))
    assert not at.exception


def test_compare_two_stability_runs_in_detail(page_env, engine):
    ds = seed_dataset(engine, "times", QUESTIONS)
    seed_run(engine, ds, A, 3, model="m-a")
    seed_run(engine, ds, B, 3, model="m-b")
    at = open_page("Compare")
    charts = [c.key for c in at.get("plotly_chart")]  # only the open tab's
    assert charts == ["results.compare_intervals", "results.compare_overlay",
                      "results.compare_hist", "results.compare_scatter"]
    changed = table_with(at, "item_a")
    rate = {pos: sum(1 for v in row if v == 1) / sum(1 for v in row if v is not None)
            for pos, row in A.items()}  # over the answered rounds (failure policy exclude)
    rate_b = {pos: sum(row) / 3 for pos, row in B.items()}
    moved = sorted((p for p in A if rate_b[p] != rate[p]),
                   key=lambda p: (-abs(rate_b[p] - rate[p]), p))
    assert list(changed["item_a"]) == [f"Q{p + 1}" for p in moved]  # labels, not 0-based
    repeats = [t for t in values(at, "caption") if t.startswith("mG-Pass@N")]
    assert len(repeats) == 2 and all("semantic entropy" in t and "nats" in t for t in repeats)


def test_compare_view_escapes_texts(page_env, engine):
    ds = seed_dataset(engine, "html", ["<img src=x onerror=alert(1)> 2+2?"])
    seed_run(engine, ds, {0: [1]}, 1, answers={0: "<script>bad()</script>"})
    seed_run(engine, ds, {0: [0]}, 1)
    at = open_page("Compare")
    shown = [h.proto.body for h in at.get("html")]
    assert shown and "&lt;script&gt;" in shown[0] and "<script>" not in shown[0]
    assert "&lt;img" in shown[0]


def test_results_page_is_routed_and_links_to_the_runs_kind_page(app, engine):
    ds = seed_dataset(engine, "times", QUESTIONS)
    seed_run(engine, ds, A, 3)
    app.run()
    app.switch_page("pages/results.py").run()
    assert not app.exception, [e.value for e in app.exception]
    assert [t.value for t in app.title] == ["Results"]
    links = [el for el in app.get("page_link")]
    assert any("Stability" in str(link.proto.label) for link in links)


def test_gate_verdict_for_a_stability_run(page_env, engine, tmp_path):
    ds = seed_dataset(engine, "times", QUESTIONS)
    run_a = seed_run(engine, ds, A, 3, model="m-a")
    at = open_page()
    assert at.selectbox(key="results.pick").value == run_a
    # A has a failed round and flaky questions: the example config fails it
    assert any("Gate FAILED" in e for e in values(at, "error"))
    text = "[absolute]\nmean_success_rate_min = 0.1\n"
    at.text_area(key="results.gate_text.stability").set_value(text).run()
    assert any("Gate PASSED (1 checks passed)" in s for s in values(at, "success"))
    at.text_area(key="results.gate_text.stability").set_value("[absolute]\nnope_max = 1\n").run()
    assert any("names no known metric" in e for e in values(at, "error"))
    assert not at.exception
    # the box takes TOML text: a path typed there is not opened on the server
    private = tmp_path / "private.toml"
    private.write_text("[absolute]\nmean_success_rate_min = \"hunter2\"\n", encoding="utf-8")
    at.text_area(key="results.gate_text.stability").set_value(str(private)).run()
    assert any("not valid TOML" in e for e in values(at, "error"))
    assert not any("hunter2" in e for e in values(at, "error"))


def test_leaderboard_trend_and_trust_report(page_env, engine):
    from evalcore.report.trust import external_references

    ds = seed_dataset(engine, "times", QUESTIONS)
    seed_run(engine, ds, A, 3, model="m-a")
    seed_run(engine, ds, B, 3, model="m-b")
    at = open_page("Leaderboard")
    board = table_with(at, "fairness_level")
    rate = {pos: sum(1 for v in row if v == 1) / sum(1 for v in row if v is not None)
            for pos, row in A.items()}  # over the answered rounds (failure policy exclude)
    rate_b = {pos: sum(row) / 3 for pos, row in B.items()}
    expected = {"m-a": sum(rate.values()) / 5, "m-b": sum(rate_b.values()) / 5}
    assert dict(zip(board["model"], board["accuracy"])) == pytest.approx(expected)
    assert board["accuracy"].is_monotonic_decreasing  # best first
    assert "accuracy_low" in board.columns
    assert not any("regression" in df.value.columns for df in at.dataframe)  # lazy
    trend = table_with(open_page("Trend"), "regression")
    assert set(trend["model"]) == {"m-a", "m-b"} and trend["baseline"].all()
    at = open_page("Trust report")
    picked = at.multiselect(key="results.trust_runs.m-a.False")
    assert len(picked.value) == 1  # the model's latest finished run of its kind and dataset
    at.button(key="results.trust_build").click().run()
    assert not at.exception, [e.value for e in at.exception]
    labels = [b.proto.label for b in at.get("download_button")]
    assert labels == ["Trust report (HTML, opens offline)", "Trust report (PDF)"]
    from pages import _results_monitor

    page = _results_monitor._trust("x", "m-a", tuple(picked.value), 0)
    assert page.index('id="summary"') < page.index('id="headline"')
    assert 'id="headline"' in page and external_references(page) == []
    assert _results_monitor._pdf(page).startswith(b"%PDF")  # what the PDF button sends


def test_work_queue_lists_jobs_and_queues_a_failed_one_again(page_env, engine, monkeypatch):
    from evalcore.store import jobs

    monkeypatch.setenv("EVALCORE_EMBEDDED_WORKER", "0")  # nothing executes them here
    job_id = jobs.create_job(engine, "attack", label="char attack on <b>x</b>")
    claimed = jobs.claim_job(engine, "w1")
    jobs.finish_job(engine, jobs.Fence(job_id, claimed.token), "failed", error="boom")
    at = open_page("Work queue")
    assert not at.exception
    frame = next(df.value for df in at.dataframe if "worker" in df.value.columns)
    assert frame.loc[0, "status"] == "failed" and frame.loc[0, "error"] == "boom"
    assert frame.loc[0, "what"] == "char attack on <b>x</b>"  # shown as text
    at.button(key="results.requeue").click().run()
    assert jobs.get_job(engine, job_id).status == "queued"
    assert jobs.get_job(engine, job_id).attempts == 0


def test_an_alert_link_opens_its_run(page_env, engine):
    """A schedule's alert links `results?run=N`; walked in a browser, the page opened on the
    newest run instead. The link's run is shown once; a run picked afterwards stays."""
    ds = seed_dataset(engine, "times", QUESTIONS)
    first = seed_run(engine, ds, A, 3)
    newest = seed_run(engine, ds, B, 3)
    at = AppTest.from_file(PAGE, default_timeout=60)
    at.query_params["run"] = str(first)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.selectbox(key="results.pick").value == first
    at.selectbox(key="results.pick").set_value(newest).run()
    assert at.selectbox(key="results.pick").value == newest  # the link does not take it back
    gone = AppTest.from_file(PAGE, default_timeout=60)
    gone.query_params["run"] = "999"
    gone.run()
    assert "names run 999, which is not stored" in " ".join(values(gone, "warning"))
    assert gone.selectbox(key="results.pick").value == newest
