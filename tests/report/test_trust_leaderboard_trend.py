"""Leaderboard, trend and the trust report on stored runs with known verdicts."""
from __future__ import annotations

import json
import re

import pytest

from evalcore.cli import main
from evalcore.report.leaderboard import leaderboard
from evalcore.report.trend import trend, trend_figure
from evalcore.report.trust import external_references, trust_report_html
from tests.fakes.stored_runs import (
    scipy_paired_p,
    seed_dataset,
    seed_robustness_run,
    seed_run,
)

QUESTIONS = [f"What is {i} - 1?" for i in range(12)]
OLD = {i: [1, 1] for i in range(12)}
NEW = {i: [0, 0] if i < 10 else [1, 1] for i in range(12)}
OTHER = {i: [1, 0] for i in range(12)}


@pytest.fixture()
def board(engine):
    from evalcore.store import queries

    ds = seed_dataset(engine, "minus", QUESTIONS)
    old = seed_run(engine, ds, OLD, 2, model="m1")
    new = seed_run(engine, ds, NEW, 2, model="m1")
    other = seed_run(engine, ds, OTHER, 2, model="m2")
    run = queries.get_run(engine, other)
    models = dict(run.config["models"])
    models["m2"] = {**models["m2"], "price_in": 2.0, "price_out": 10.0}
    queries.update_run(engine, other, config={**run.config, "models": models})
    return ds, old, new, other


def test_leaderboard_latest_run_per_model_sorted_with_intervals(engine, board):
    ds, old, new, other = board
    result = leaderboard(engine, "minus")
    assert [r["model"] for r in result["rows"]] == ["m2", "m1"]  # 0.5 beats m1's latest (1/6)
    m2, m1 = result["rows"]
    assert m1["runs"] == {"stability": new}
    assert m1["accuracy"] == pytest.approx(2 / 12)
    assert m2["flaky_share"] == pytest.approx(1.0) and m2["perfect_share"] == 0.0
    assert m1["accuracy_low"] < 2 / 12 < m1["accuracy_high"]
    # every item at 0.5: no spread to bootstrap, the pooled Wilson of 12/24 instead
    assert m2["accuracy_low"] < 0.5 < m2["accuracy_high"]
    calls = 24  # 12 items x 2 rounds, 5 prompt + 3 completion tokens each (stored_runs)
    assert m2["tokens"] == calls * 8
    assert m2["cost"] == pytest.approx((calls * 5 * 2.0 + calls * 3 * 10.0) / 1e6)
    assert m1["cost"] is None  # no price in m1's snapshot: unknown, not free
    pinned = leaderboard(engine, "minus", runs=[old])
    assert {r["model"]: r["runs"]["stability"] for r in pinned["rows"]}["m1"] == old


def test_leaderboard_cli(engine, board, capsys):
    assert main(["leaderboard", "--dataset", "minus", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [r["model"] for r in data["rows"]] == ["m2", "m1"]
    assert main(["leaderboard", "--dataset", "minus"]) == 0
    out = capsys.readouterr().out
    assert "1. m2" in out and "accuracy" in out and "[" in out
    assert main(["leaderboard", "--dataset", "nope"]) == 2


def test_trend_flags_a_regression_by_the_paired_test(engine, board):
    ds, old, new, other = board
    result = trend(engine, "minus", "accuracy", gate="[absolute]\naccuracy_min = 0.5\n"
                                                    "[relative]\nmax_regression = 0.1\n")
    points = result["series"]["m1"]
    assert [p["run_id"] for p in points] == [old, new]
    assert points[0]["baseline"] and not points[0]["regression"] and points[0]["gate"] is True
    expected = scipy_paired_p([1.0] * 12, [sum(NEW[i]) / 2 for i in range(12)])
    assert expected < 0.05
    assert points[1]["regression"] and points[1]["gate"] is False
    assert f"{expected:.3g}" in points[1]["test"]
    assert result["series"]["m2"][0]["baseline"]
    lower = trend(engine, "minus", "flaky_share", model="m1")
    assert lower["better"] == "lower" and list(lower["series"]) == ["m1"]
    assert not lower["series"]["m1"][1]["regression"]  # flaky share fell (0 -> 0)
    assert len(trend_figure(result).data) == 2


def test_trend_cli(engine, board, capsys):
    assert main(["trend", "--dataset", "minus", "--metric", "accuracy"]) == 0
    out = capsys.readouterr().out
    assert "REGRESSION" in out and "baseline" in out
    assert main(["trend", "--dataset", "minus", "--metric", "accuracy", "--json"]) == 0
    assert set(json.loads(capsys.readouterr().out)["series"]) == {"m1", "m2"}


def test_trust_report_sections_and_no_external_urls(engine, board, tmp_path):
    ds, old, new, other = board
    clean = {i: [1, 1] for i in range(4)}
    attacked = {0: [1, 1], 1: [0, 0], 2: [0, 1], 3: [1, 1]}
    seed_robustness_run(engine, QUESTIONS[:4], clean, attacked, 2, model="m1", level="char")
    page = trust_report_html(engine, model="m1", gates={
        "stability": "[absolute]\nmean_success_rate_min = 0.9\n"})
    for section in ('id="headline"', 'id="distribution"', 'id="robustness"', 'id="gate"',
                    'id="what-was-run"'):
        assert section in page
    assert "Plotly" in page and external_references(page) == []
    assert "FAILED" in page and "mean_success_rate" in page
    # the verdict on top, in words, before any figure
    top = page.index('id="summary"')
    assert top < page.index('id="headline"')
    assert "Verdict: FAIL: at least one run broke a limit of its gate." in page
    assert f"Run #{new} (Stability of m1): FAILED: mean_success_rate_min 0." in page
    assert f"<td>#{new}</td>" in page and f"<td>#{old}</td>" not in page  # latest run only
    assert "accuracy under attack" in page and "accuracy drop rate (PDR), char attacks" in page
    assert "built-in" not in page
    assert external_references('<img src="https://x.org/a.png">') == ["https://x.org/a.png"]
    assert external_references("<div style=\"background:url('//cdn.x/y')\">") == ["//cdn.x/y"]


def test_trust_report_cli_writes_html(engine, board, tmp_path, capsys):
    out = tmp_path / "m1.html"
    assert main(["report", "--model", "m1", "--html", str(out)]) == 0
    text = out.read_text(encoding="utf-8")
    assert "Trust report: m1" in text and external_references(text) == []
    assert main(["report", "--model", "ghost", "--html", str(out)]) == 2
    assert "no finished" in capsys.readouterr().err


def test_trend_since_keeps_recent_runs(engine, board):
    from datetime import UTC, datetime, timedelta

    from evalcore.store import queries

    ds, old, new, other = board
    queries.update_run(engine, old, created_at=datetime.now(UTC) - timedelta(days=40))
    recent = trend(engine, "minus", "accuracy", since=datetime.now(UTC) - timedelta(days=30))
    assert [p["run_id"] for p in recent["series"]["m1"]] == [new]
    assert recent["series"]["m1"][0]["baseline"]  # the oldest run left is the baseline
    pinned = trend(engine, "minus", "accuracy", baseline=old,
                   since=datetime.now(UTC) - timedelta(days=30))
    assert [p["run_id"] for p in pinned["series"]["m1"]] == [old, new]
    assert main(["trend", "--dataset", "minus", "--metric", "accuracy", "--days", "30"]) == 0


def test_trust_report_pdf_through_headless_chromium(engine, board, tmp_path):
    import os

    from evalcore.report.trust import CHROMIUM
    from tests.conftest import require

    require(os.access(CHROMIUM, os.X_OK), f"{CHROMIUM} missing: apt-get install chromium")
    html, pdf = tmp_path / "m1.html", tmp_path / "m1.pdf"
    assert main(["report", "--model", "m1", "--html", str(html), "--pdf", str(pdf)]) == 0
    data = pdf.read_bytes()
    assert data.startswith(b"%PDF") and len(data) > 10_000


def test_leaderboard_ranks_by_mg_pass_and_the_trust_report_shows_repeats(engine, board):
    ds, old, new, other = board
    # N = 2: mG-Pass@2 = pass^2. m1's latest: 2 of 12 right twice; m2: none (each 1 of 2)
    result = leaderboard(engine, "minus", sort="mg_pass_at_k")
    assert [(r["model"], r["mg_pass_at_k"]) for r in result["rows"]] == [
        ("m1", pytest.approx(2 / 12)), ("m2", 0.0)]
    page = trust_report_html(engine, runs=[new])
    assert "mg_pass_at_k" in page and "semantic_entropy_mean" in page
    assert "mG-Pass@N, the chance that most of N rounds are right" in page
    assert "judge_noise:" not in page  # no re-judging pass


def test_trust_report_leaves_demo_runs_out_unless_asked(engine, tmp_path, capsys):
    """Every run of the model was included, the Home demo's too, with no way to choose."""
    from evalcore.demo import DEMO_DATASET

    demo = seed_dataset(engine, DEMO_DATASET, QUESTIONS[:3])
    demo_run = seed_run(engine, demo, {0: [1], 1: [0], 2: [1]}, 1, model="local")
    mine = seed_dataset(engine, "mine", QUESTIONS[:3])
    real = seed_run(engine, mine, {0: [1], 1: [1], 2: [1]}, 1, model="local")
    from evalcore.report.trust import model_runs

    assert model_runs(engine, "local", leave_out=(DEMO_DATASET,)) == [real]
    assert model_runs(engine, "local") == [demo_run, real]
    out = tmp_path / "local.html"
    assert main(["report", "--model", "local", "--html", str(out)]) == 0
    assert f"<td>#{demo_run}</td>" not in out.read_text(encoding="utf-8")
    assert main(["report", "--model", "local", "--include-demo", "--html", str(out)]) == 0
    assert f"<td>#{demo_run}</td>" in out.read_text(encoding="utf-8")


def test_trust_report_at_the_accuracy_floor_warns_and_claims_no_interval(engine):
    """Clean accuracy 5%: PDR -100% with McNemar p = 1 came with no warning, and the
    bootstrap printed an interval of [-11.000, 0.500] for it."""
    n = 20
    clean = {i: [1 if i == 0 else 0] for i in range(n)}
    attacked = {i: [1 if i in (0, 1) else 0] for i in range(n)}
    questions = [f"What is {i} times {i}?" for i in range(n)]
    run, _ = seed_robustness_run(engine, questions, clean, attacked, 1, model="floor",
                                 level="word")
    from evalcore.report.robustness import robustness_report

    report = robustness_report(engine, run)
    assert report["levels"]["word"]["mcnemar"]["p_value"] == 1.0
    assert any("clean accuracy 5% is too low to measure a drop" in w
               for w in report["warnings"])
    page = trust_report_html(engine, model="floor")
    assert "Warning: word: clean accuracy 5% is too low to measure a drop" in page
    assert re.search(r"-1\.000 \[", page) is None  # PDR without an interval
    for low, high in re.findall(r"\[(-?\d+\.\d+), (-?\d+\.\d+)\]", page):
        assert -1.0 <= float(low) <= float(high) <= 1.0, (low, high)


def test_the_trend_says_which_way_is_better_as_the_metric_declares(engine, board):
    """Every declared figure carries its direction (`MetricSpec.better`), gated or not:
    a rising latency is no improvement."""
    from evalcore.kinds import metric_specs

    for name in ("mean_latency_ms", "flaky_share", "mean_success_rate"):
        assert trend(engine, "minus", name)["better"] == metric_specs("stability")[name].better
    assert trend(engine, "minus", "mean_latency_ms")["better"] == "lower"
