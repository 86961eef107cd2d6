"""`python -m evalcore stability` end to end against the fault server: JSON and CSV files."""
from __future__ import annotations

import csv
import json

import pytest

from evalcore.cli import main
from tests.runner.conftest import add_model, dataset, server  # noqa: F401  (fixtures)

pytestmark = pytest.mark.integration


def test_stability_command_writes_the_method_json_and_csv(settings, engine, dataset, server,
                                                          tmp_path, capsys):
    add_model(settings, server)
    out_json, out_csv = tmp_path / "s.json", tmp_path / "s.csv"
    code = main(["stability", "--dataset", dataset, "--model", "fake", "--rounds", "4",
                 "--schedule", "round", "--limit", "4", "--json", str(out_json),
                 "--csv", str(out_csv), "--rejudge", "fake", "--rejudge-sample", "3",
                 "--rejudge-passes", "2"])
    assert code == 0
    printed = capsys.readouterr().out
    assert "4/4:" in printed and "0/4:" in printed

    report = json.loads(out_json.read_text(encoding="utf-8"))
    assert report["model"] == "fake" and report["judge_model"] is None
    assert report["repetition_count"] == 4
    dist = report["distribution"]
    assert dist["total_questions"] == 4 and set(dist["distribution_counts"]) == {
        "0", "1", "2", "3", "4"}
    assert dist["distribution_counts"]["4"] == 2 and dist["distribution_counts"]["0"] == 2
    first = report["stability_results"]["1"]
    assert first["correct_count"] == 4 and first["class"] == "perfect"
    assert [r["round"] for r in first["rounds"]] == [1, 2, 3, 4]
    assert set(report["summary"]) >= {"mean", "variance", "classes", "risk", "pass_at_k",
                                      "pass_hat_k"}
    assert report["summary"]["pass_hat_k"]["4"] == 0.5
    assert set(report["timing"]) >= {"wall_s", "calls", "errors", "retries"}
    assert report["consistency"]["mean_top_share"] == 1.0  # the fake answers the same each time
    assert report["judge_reliability"]["answers"] == 3

    with out_csv.open(encoding="utf-8-sig") as fh:
        rows = list(csv.reader(fh))
    assert rows[0][:4] == ["题目编号", "问题", "标准答案", "类型"]
    assert rows[0][-2:] == ["正确次数", "成功率"] and len(rows) == 5


def test_a_budget_stops_the_run_and_resume_with_a_higher_one_finishes_it(
        settings, engine, dataset, server, capsys):
    from evalcore.store import queries

    add_model(settings, server, concurrency=1, price_in=1000.0, price_out=1000.0, max_tokens=16)
    code = main(["stability", "--dataset", dataset, "--model", "fake", "--rounds", "2",
                 "--budget", "0.5"])
    assert code == 130  # cancelled: the budget stopped it
    run = queries.list_runs(engine)[0]
    assert run.status == "cancelled" and "budget 0.5 reached" in run.error
    assert 0 < queries.count_calls(engine, run.id) < 12
    assert main(["runs", "resume", str(run.id), "--budget", "100"]) == 0
    assert queries.count_calls(engine, run.id) == 12


def test_stability_prints_calls_and_expected_time_before_it_starts(settings, engine, dataset,
                                                                   server, capsys):
    """'estimate: 12 calls, about ... on fake' comes right after the run line, before the
    results (the fake model has no earlier call: its default speed, said so); a second
    run's estimate is measured from the first one's calls."""
    add_model(settings, server, concurrency=2)
    assert main(["stability", "--dataset", dataset, "--model", "fake", "--rounds", "2"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("run 1: ")
    assert lines[1] == "estimate: 12 calls, about 12 s on fake (no earlier run: a default speed)"
    assert main(["stability", "--dataset", dataset, "--model", "fake", "--rounds", "1"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1].startswith("estimate: 6 calls, about ") and "from its earlier runs" in lines[1]


def test_a_finished_run_stores_the_figures_its_later_reads_use(settings, engine, dataset,
                                                                server, capsys):
    """The report printed at a run's end is the stored summary: `runs show` and compare
    read it instead of counting the run's calls again."""
    from sqlalchemy import select

    from evalcore.report.run_figures import COUNTING
    from evalcore.report.stability import stability_report
    from evalcore.store import queries
    from evalcore.store.tables import RunSummary

    summaries = RunSummary.__table__
    add_model(settings, server)
    assert main(["stability", "--dataset", dataset, "--model", "fake", "--rounds", "3",
                 "--limit", "4"]) == 0
    run_id = queries.list_runs(engine)[0].id
    with engine.connect() as conn:
        stored = conn.execute(select(summaries.c.data).where(
            summaries.c.run_id == run_id, summaries.c.name == f"stability:{COUNTING}:exclude:False")
        ).scalar()
    assert stored is not None
    assert json.loads(stored) == stability_report(engine, run_id, with_rounds=False)
