"""Hostile replies and a broken section never take a report page.

The one-click demo's small model answered a stability run with a 200-digit number; the
answer key raised decimal.InvalidOperation and a traceback replaced the whole Stability
report (and the run's exports on Results). Now the replies are read, and a section that
still fails is one line naming itself and the run while the rest of the page draws.
"""
from __future__ import annotations

from pathlib import Path

from tests.fakes.stored_runs import seed_dataset, seed_run
from tests.pages.helpers import run_page, values

REPO = Path(__file__).resolve().parents[2]
STABILITY = str(REPO / "pages" / "stability.py")
RESULTS = str(REPO / "pages" / "results.py")
HOSTILE = {0: "1" * 200, 1: "NaN", 2: "inf", 3: "\x00\x07\x1b[31m\u202e答案是 -0\r\n\ufeff"}
"""One reply per question, as the small model gave them (every round the same)."""


def hostile_run(engine) -> int:
    ds = seed_dataset(engine, "demo", [f"What is {i} + 1?" for i in range(4)],
                      answers=["1" * 200, "2", "3", "0"])
    return seed_run(engine, ds, {0: [1, 1, 0], 1: [0, 0, 0], 2: [0, 1, None], 3: [1, 1, 1]}, 3,
                    model="local", answers=HOSTILE)


def test_stability_page_draws_a_run_of_hostile_replies(page_env, engine):
    run_id = hostile_run(engine)
    at = run_page(STABILITY)
    assert at.session_state["stability.run_id"] == run_id
    assert not values(at, "error"), values(at, "error")
    assert len(at.get("plotly_chart")) == 4
    cards = {m.label: m.value for m in at.metric}
    assert cards["Questions"] == "4" and cards["Same answer"] == "91.7%"  # 11 of 12 rounds
    labels = [b.proto.label for b in at.get("download_button")]
    assert labels == ["CSV (中文表头)", "CSV (English headers)", "JSON"]
    assert not any(b.proto.disabled for b in at.get("download_button"))


def test_results_exports_of_a_run_of_hostile_replies(page_env, engine):
    hostile_run(engine)
    at = run_page(RESULTS, {"results.tab": "Runs"})
    failed = [e for e in values(at, "error") if e.startswith("Could not")]
    assert not failed, failed
    buttons = at.get("download_button")
    assert [b.proto.label for b in buttons][:4] == [
        "Raw calls CSV", "Stability CSV (中文表头)", "Stability CSV (English headers)",
        "Stability JSON"]
    assert not any(b.proto.disabled for b in buttons)


def test_a_failing_figure_is_one_line_and_the_rest_draws(page_env, engine, monkeypatch):
    from evalcore.report import stability_charts

    run_id = hostile_run(engine)

    def broken(report):
        raise ArithmeticError("forced by the test")

    monkeypatch.setattr(stability_charts, "distribution_figure", broken)
    at = run_page(STABILITY)
    assert values(at, "error") == [
        f"Could not draw the histogram of run {run_id}: ArithmeticError forced by the test"]
    assert len(at.get("plotly_chart")) == 3  # classes, risk, pass@k
    assert any("ci_width" in df.value.columns for df in at.dataframe)  # the questions table
    assert len(at.get("download_button")) == 3


def test_a_failing_export_is_one_line_and_the_others_are_offered(page_env, engine,
                                                                 monkeypatch):
    from evalcore.report import stability

    run_id = hostile_run(engine)

    def broken(*args, **kwargs):
        raise ArithmeticError("forced by the test")

    monkeypatch.setattr(stability, "write_run_csv", broken)
    at = run_page(STABILITY)
    errors = values(at, "error")
    assert errors == [f"Could not build the CSV (中文表头) export of run {run_id}: "
                      "ArithmeticError forced by the test",
                      f"Could not build the CSV (English headers) export of run {run_id}: "
                      "ArithmeticError forced by the test"]
    enabled = [b.proto.label for b in at.get("download_button") if not b.proto.disabled]
    assert enabled == ["JSON"]
    assert len(at.get("plotly_chart")) == 4


def test_compare_of_hostile_runs_with_a_failing_chart(page_env, engine, monkeypatch):
    from evalcore.report import compare_charts

    from evalcore.store import queries

    first = hostile_run(engine)
    second = seed_run(engine, queries.get_run(engine, first).dataset_id, {0: [1, 1, 1], 1: [0, 1, 0], 2: [1, 1, 1], 3: [0, 0, 0]}, 3,
                      model="local", answers=HOSTILE)
    at = run_page(RESULTS, {"results.tab": "Compare"})
    assert not [e for e in values(at, "error") if e.startswith("Could not")]

    def broken(*args, **kwargs):
        raise ArithmeticError("forced by the test")

    monkeypatch.setattr(compare_charts, "interval_figure", broken)
    at = run_page(RESULTS, {"results.tab": "Compare"})
    assert values(at, "error") == [f"Could not draw the interval chart of runs {first}, "
                                   f"{second}: ArithmeticError forced by the test"]
    assert any("shared_accuracy" in df.value.columns for df in at.dataframe)
    assert [b.proto.label for b in at.get("download_button")] == ["Comparison JSON"]


def test_robustness_page_with_a_failing_chart_draws_the_rest(page_env, engine, monkeypatch):
    from evalcore.report import robustness_charts
    from tests.fakes.stored_runs import seed_robustness_run

    questions = [f"What is {i} + 1?" for i in range(4)]
    run_id, _ = seed_robustness_run(engine, questions, {i: [1, 1] for i in range(4)},
                                    {0: [1, 1], 1: [0, 0], 2: [0, 1], 3: [1, 1]}, 2)

    def broken(report):
        raise ArithmeticError("forced by the test")

    monkeypatch.setattr(robustness_charts, "accuracy_figure", broken)
    at = run_page(str(REPO / "pages" / "robustness.py"))
    assert values(at, "error") == [
        f"Could not draw the accuracy chart of run {run_id}: ArithmeticError forced by the test"]
    assert {m.label for m in at.metric} >= {"Clean questions", "Attacked questions"}
    assert [b.proto.label for b in at.get("download_button")] == ["JSON report"]
