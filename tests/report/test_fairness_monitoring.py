"""The fairness suite monitored: trend of its score with gate verdicts, leaderboard row,
comparison of two fairness runs (metrics side by side, no invented test)."""
from __future__ import annotations

from pathlib import Path

from evalcore.report.compare_runs import compare_runs
from evalcore.report.leaderboard import leaderboard
from evalcore.report.trend import trend
from tests.report.test_fairness_report import biased, fair, run_suite, suite  # noqa: F401

EXAMPLE_GATE = Path(__file__).resolve().parents[2] / "data" / "gate.example.toml"


def test_fairness_trend_leaderboard_and_compare(engine, settings, suite):  # noqa: F811
    from evalcore.store import queries

    good = run_suite(engine, settings, fair, suite, samples=1)
    bad = run_suite(engine, settings, biased, suite, samples=1, model="fake-v2")
    queries.update_run(engine, bad, model="fake")  # one model's new version, same name
    result = trend(engine, suite, "spd", gate=str(EXAMPLE_GATE))
    points = result["series"]["fake"]
    assert result["better"] == "lower"
    assert [p["run_id"] for p in points] == [good, bad]
    assert points[0]["baseline"] and points[0]["gate"] is True
    assert points[1]["gate"] is False and points[1]["value"] > points[0]["value"]
    row = leaderboard(engine, suite)["rows"][0]
    assert row["runs"] == {"fairness": bad} and row["fairness_level"] is not None
    side = compare_runs(engine, [good, bad])
    metrics = {f["run"]["id"]: f["metrics"] for f in side["runs"]}
    assert metrics[bad]["spd"] > metrics[good]["spd"]
    assert side["kind"] == "fairness"
    only = side["violations_only_in"]
    assert only[good] == [] and only[bad]  # the biased version brought new violations
    assert set(only[bad]) == set(metrics[bad]["violation_keys"])
    assert {d["metric"]: d["worse"] for d in side["gate_deltas"]}["spd"] is True
