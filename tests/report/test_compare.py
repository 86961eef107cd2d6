"""Two stored stability runs compared; the run list, the raw calls and their CSV.

Runs are seeded through evalcore.store.queries with chosen verdicts, so every expected
number below is computed directly from those verdicts (or by scipy), never copied.
"""
from __future__ import annotations

import csv
import io
import json
from fractions import Fraction
from datetime import UTC, datetime, timedelta

import pytest
from scipy.stats import wilcoxon

from evalcore.masking import REDACTED
from evalcore.errors import RunError
from evalcore.metrics.paired import paired_test
from evalcore.report import compare, compare_charts, export, runs
from evalcore.report.stability_charts import bin_colour
from evalcore.report.stability import stability_report
from tests.fakes.stored_runs import seed_dataset, seed_run

QUESTIONS = [f"What is {i} + {i}?" for i in range(12)]
N = 4
A = {0: [1, 1, 1, 1], 1: [1, 0, None, 0], 2: [0, 0, 0, 0], 3: [1, 1, 0, 1], 4: [1, 1, 1, 1],
     5: [0, 1, 0, 0], 6: [1, 1, 1, 0], 7: [0, 0, 1, 1], 8: [1, 1, 1, 1], 9: [0, 0, 0, 1]}
B = {0: [1, 1, 1, 1], 1: [1, 1, 1, 1], 2: [0, 1, 0, 0], 3: [0, 0, 0, 0], 4: [1, 1, 1, 1],
     5: [1, 1, 1, 1], 6: [1, 1, 1, 1], 7: [1, 1, 1, 1], 8: [1, 1, 0, 1], 11: [1, 0, 1, 0]}


def rate(verdicts: list) -> float:
    """Over the answered rounds: the reports' default failure policy (`exclude`)."""
    return sum(1 for v in verdicts if v == 1) / sum(1 for v in verdicts if v is not None)


@pytest.fixture()
def two_runs(engine):
    ds = seed_dataset(engine, "sums", QUESTIONS)
    return ds, seed_run(engine, ds, A, N, model="m-a"), seed_run(engine, ds, B, N, model="m-b")


def test_same_dataset_joins_on_items_and_matches_the_reports(engine, two_runs):
    _, run_a, run_b = two_runs
    result = compare.compare_stability(engine, run_a, run_b)
    report_a, report_b = stability_report(engine, run_a), stability_report(engine, run_b)
    for side, report in (("a", report_a), ("b", report_b)):
        for key in ("mean", "std", "classes", "risk", "pass_hat_k", "pass_at_k"):
            assert result[side][key] == report["summary"][key]
    assert result["a"]["model"] == "m-a" and result["b"]["model"] == "m-b"
    assert result["a"]["mean"] == pytest.approx(sum(rate(v) for v in A.values()) / len(A))
    assert result["delta"]["mean"] == pytest.approx(result["b"]["mean"] - result["a"]["mean"])

    shared = sorted(set(A) & set(B))
    assert result["join"] == {"by": "item", "matched": len(shared),
                              "only_a": len(set(A) - set(B)), "only_b": len(set(B) - set(A))}
    pairs = {p["item_a"]: p for p in result["questions"]}
    assert sorted(pairs) == shared
    for pos in shared:
        assert pairs[pos]["item_b"] == pos
        assert pairs[pos]["rate_a"] == pytest.approx(rate(A[pos]))
        assert pairs[pos]["rate_b"] == pytest.approx(rate(B[pos]))
        assert pairs[pos]["delta"] == pytest.approx(rate(B[pos]) - rate(A[pos]))
        assert pairs[pos]["question"] == QUESTIONS[pos]
    from evalcore.dataset import load_items

    ids = {item.idx: item.id for item in load_items(engine, two_runs[0])}
    assert all(pairs[pos]["item_id"] == ids[pos] for pos in shared)


def test_changed_questions_are_ordered_by_size_of_change(engine, two_runs):
    _, run_a, run_b = two_runs
    shared = sorted(set(A) & set(B))
    deltas = {pos: rate(B[pos]) - rate(A[pos]) for pos in shared}
    expected = sorted((p for p in shared if deltas[p] != 0), key=lambda p: (-abs(deltas[p]), p))
    result = compare.compare_stability(engine, run_a, run_b)
    assert [p["item_a"] for p in result["changed"]] == expected
    assert [p["item_a"] for p in compare.compare_stability(engine, run_a, run_b, top=2)["changed"]
            ] == expected[:2]
    frame = compare.questions_frame(result, changed_only=True)
    assert list(frame["item_a"]) == expected


def test_paired_test_is_scipys_wilcoxon_and_drops_unchanged_questions(engine, two_runs):
    _, run_a, run_b = two_runs
    shared = sorted(set(A) & set(B))
    rates_a = [rate(A[p]) for p in shared]
    rates_b = [rate(B[p]) for p in shared]
    test = compare.compare_stability(engine, run_a, run_b)["test"]
    # "wilcox" zero handling = the test on the changed questions only
    changed = [(a, b) for a, b in zip(rates_a, rates_b) if a != b]
    assert test["n_pairs"] == len(shared) and test["n_changed"] == len(changed)
    # rates k/N as exact fractions, so equal count differences tie as they should
    exact = [Fraction(b).limit_denominator(100) - Fraction(a).limit_denominator(100)
             for a, b in changed]
    sizes = [abs(d) for d in exact]
    method = "exact" if len(set(sizes)) == len(sizes) else "approx"  # ties: no exact table
    direct = wilcoxon([float(d) for d in exact], method=method)
    assert test["method"] == method
    assert test["p_value"] == pytest.approx(float(direct.pvalue))
    assert test["statistic"] == pytest.approx(float(direct.statistic))
    assert test["n_better_b"] == sum(1 for a, b in changed if b > a)
    assert test["n_better_a"] == sum(1 for a, b in changed if b < a)
    assert test["mean_delta"] == pytest.approx(sum(b - a for a, b in zip(rates_a, rates_b))
                                               / len(shared))
    assert test["zero_method"] == "wilcox"
    # a different zero rule would give another answer here, so the choice is tested
    assert float(wilcoxon(rates_b, rates_a, zero_method="pratt").pvalue) != pytest.approx(
        test["p_value"])


def test_compare_and_robustness_use_one_paired_test() -> None:
    from evalcore.metrics.robustness import paired_rate_test

    # 5 of 100 questions drop (by 0.1 .. 0.5): the exact test on the 5 gives 2/32
    a, b = [1.0] * 100, [0.9, 0.8, 0.7, 0.6, 0.5] + [1.0] * 95
    test = paired_test(a, b)
    assert test["p_value"] == pytest.approx(0.0625) and test["method"] == "exact"
    assert paired_rate_test(a, b).p_value == test["p_value"]
    # rates from counts are compared exactly: 0.3 - 0.1 and 0.5 - 0.3 are the same drop
    ties = paired_test([0.3, 0.5, 0.9], [0.1, 0.3, 0.7])
    assert ties["method"] == "approx"  # three equal |differences| tie


def test_no_changed_question_means_no_test(engine):
    ds = seed_dataset(engine, "same", QUESTIONS[:3])
    verdicts = {0: [1, 0], 1: [1, 1], 2: [0, 0]}
    a, b = seed_run(engine, ds, verdicts, 2), seed_run(engine, ds, verdicts, 2)
    test = compare.compare_stability(engine, a, b)["test"]
    assert test["n_pairs"] == 3 and test["n_changed"] == 0
    assert test["statistic"] is None and test["p_value"] is None
    assert "changed" in test["reason"]
    assert paired_test([], [])["reason"] == "no question is in both runs"


def test_different_datasets_join_on_question_text(engine):
    order = [3, 0, 2, 1]  # dataset B holds the same questions in another order, re-spaced
    texts = [f"How many legs has animal {i}?" for i in range(4)]
    ds_a = seed_dataset(engine, "animals", texts)
    ds_b = seed_dataset(engine, "animals-copy", ["  " + texts[i].replace(" ", "  ") for i in order]
                        + ["A question only B has?"])
    va = {0: [1, 1], 1: [0, 0], 2: [1, 0], 3: [0, 1]}
    vb = {pos: [1, 1] if order[pos] % 2 else [0, 0] for pos in range(4)} | {4: [1, 1]}
    result = compare.compare_stability(engine, seed_run(engine, ds_a, va, 2),
                                       seed_run(engine, ds_b, vb, 2))
    assert result["join"] == {"by": "question", "matched": 4, "only_a": 0, "only_b": 1}
    for pair in result["questions"]:
        original = pair["item_a"]
        assert order[pair["item_b"]] == original
        assert pair["rate_a"] == pytest.approx(sum(va[original]) / 2)
        assert pair["rate_b"] == pytest.approx(sum(vb[pair["item_b"]]) / 2)
        assert pair["item_id"] is None


def test_duplicated_question_texts_pair_by_occurrence(engine):
    ds_a = seed_dataset(engine, "dup-a", ["Same?", "Other?", "Same?"])
    ds_b = seed_dataset(engine, "dup-b", ["Same?", "Same?", "Same?"])
    result = compare.compare_stability(
        engine, seed_run(engine, ds_a, {0: [1], 1: [0], 2: [0]}, 1),
        seed_run(engine, ds_b, {0: [0], 1: [1], 2: [1]}, 1))
    assert [(p["item_a"], p["item_b"]) for p in result["questions"]] == [(0, 0), (2, 1)]
    assert result["join"] == {"by": "question", "matched": 2, "only_a": 1, "only_b": 1}


def test_different_rounds_list_every_bin_and_k(engine):
    ds = seed_dataset(engine, "mixed-n", QUESTIONS[:3])
    result = compare.compare_stability(
        engine, seed_run(engine, ds, {0: [1, 1], 1: [0, 1], 2: [0, 0]}, 2),
        seed_run(engine, ds, {0: [1, 1, 1, 1], 1: [1, 1, 1, 0], 2: [0, 0, 0, 0]}, 4))
    assert [r["correct"] for r in result["distribution"]] == [4, 3, 2, 1, 0]
    assert [r["percent_a"] for r in result["distribution"]][:2] == [None, None]
    assert sum(r["percent_a"] or 0 for r in result["distribution"]) == pytest.approx(100)
    assert sum(r["percent_b"] for r in result["distribution"]) == pytest.approx(100)
    assert [r["pass_hat_k_a"] for r in result["pass_k"]][2:] == [None, None]
    assert [r["k"] for r in result["pass_k"]] == [1, 2, 3, 4]
    json.dumps(result)  # the CLI prints it as JSON


def test_refuses_runs_that_cannot_be_compared(engine, two_runs):
    ds, run_a, _ = two_runs
    other = seed_run(engine, ds, {0: [1]}, 1, kind="robustness")
    with pytest.raises(compare.CompareError, match="robustness"):
        compare.compare_stability(engine, run_a, other)
    empty = seed_run(engine, ds, {}, 2)
    with pytest.raises(compare.CompareError, match="no results"):
        compare.compare_stability(engine, empty, run_a)
    with pytest.raises(RunError, match="not found"):
        compare.compare_stability(engine, run_a, 9999)


def test_figures_show_both_distributions_and_every_matched_question(engine, two_runs):
    _, run_a, run_b = two_runs
    result = compare.compare_stability(engine, run_a, run_b)
    fig = compare_charts.distributions_figure(result)
    assert len(fig.data) == 2
    for bar, side in zip(fig.data, ("a", "b")):
        dist = result[side]["distribution"]
        assert list(bar.x) == list(range(N + 1))
        assert list(bar.y) == [dist["distribution_percent"][str(j)] for j in range(N + 1)]
        assert list(bar.marker.color) == [bin_colour(j, N) for j in range(N + 1)]
    scatter = compare_charts.rates_scatter(result)
    points = scatter.data[1]
    assert sum(points.customdata) == result["join"]["matched"]
    for x, y, count in zip(points.x, points.y, points.customdata):
        assert count == sum(1 for p in result["questions"]
                            if p["rate_a"] == x and p["rate_b"] == y)


# ------------------------------------------------------------------ run list and calls


def test_runs_frame_and_filters(engine, two_runs):
    from evalcore.store import queries

    ds, run_a, run_b = two_runs
    live = seed_run(engine, ds, {0: [1]}, 3, status="running", model="m-live")
    old = datetime.now(UTC) - timedelta(minutes=10)
    queries.update_run(engine, live, heartbeat_at=old, started_at=old)
    fresh = seed_run(engine, ds, {0: [1]}, 3, status="running", model="m-live", kind="fairness")
    frame = runs.runs_frame(queries.list_runs(engine), datasets={ds: "sums"})
    assert list(frame["id"]) == [fresh, live, run_b, run_a]
    assert list(frame.columns) == list(runs.RUN_COLUMNS)
    by_id = frame.set_index("id")
    assert by_id.loc[live, "stale"] and not by_id.loc[fresh, "stale"]
    assert not by_id.loc[run_a, "stale"]
    assert by_id.loc[live, "progress"] == pytest.approx(1 / 3)
    assert set(frame["dataset"]) == {"sums"}
    assert by_id.loc[run_a, "duration_s"] == pytest.approx(30, abs=2)
    assert runs.runs_frame([]).empty


def test_run_details_shows_settings_usage_and_no_keys(engine, two_runs, monkeypatch):
    from evalcore.store import queries

    _, run_a, _ = two_runs
    queries.update_run(engine, run_a, config={"spec": {"model": "m-a", "api_key": "sk-secret-1"},
                                              "item_ids": [1, 2]})
    details = runs.run_details(engine, run_a)
    assert details["spec"]["api_key"] == REDACTED
    assert "sk-secret-1" not in json.dumps(details, default=str)
    assert details["items"] == 2 and details["dataset"] == "sums"
    calls = sum(len(v) for v in A.values())
    assert details["usage"]["calls"] == calls
    assert details["usage"]["tokens"] == calls * (5 + 3)
    assert details["progress"]["errors"] == 1


def test_calls_frame_limit_columns_and_errors(engine, two_runs):
    _, run_a, _ = two_runs
    frame = runs.calls_frame(engine, run_a, limit=5)
    assert list(frame.columns) == [*export.CALL_COLUMNS, "cost"]
    assert frame["cost"].isna().all()  # the fake model has no price
    assert len(frame) == 5
    assert list(frame["item_idx"]) == [0, 0, 0, 0, 1]
    assert list(frame["round"]) == [1, 2, 3, 4, 1]
    assert list(frame["tokens"]) == [8] * 5
    assert frame["prompt"].iloc[0] == f"Q: {QUESTIONS[0]}"
    errors = runs.calls_frame(engine, run_a, limit=100, errors_only=True)
    failed = [(pos, r + 1) for pos, row in A.items() for r, v in enumerate(row) if v is None]
    assert list(zip(errors["item_idx"], errors["round"])) == failed
    assert errors["error"].notna().all() and (errors["attempts"] == 3).all()
    assert len(runs.calls_frame(engine, run_a, limit=1000)) == sum(len(v) for v in A.values())
    with pytest.raises(RunError):
        runs.calls_frame(engine, 9999)


def test_calls_csv_has_bom_every_call_and_no_formulas(engine):
    ds = seed_dataset(engine, "evil", ["=HYPERLINK(\"x\")?", "Fine?"])
    run = seed_run(engine, ds, {0: [1, 0], 1: [None, 1]}, 2,
                   answers={0: "=1+1", 1: "-3"})
    data = export.calls_csv_bytes(engine, run)
    assert data.startswith(b"\xef\xbb\xbf")
    rows = list(csv.DictReader(io.StringIO(data.decode("utf-8-sig"))))
    assert len(rows) == 4
    assert list(rows[0]) == list(export.CALL_COLUMNS)
    assert rows[0]["answer"] == "'=1+1"  # a formula is neutralised
    assert rows[0]["prompt"].startswith("Q: =HYPERLINK")  # (not at the start: left alone)
    assert rows[3]["answer"] == "-3"  # a plain number is not
    assert rows[2]["error"] == "HTTP 500 from server" and rows[2]["answer"] == ""
    assert [r["round"] for r in rows] == ["1", "2", "1", "2"]
