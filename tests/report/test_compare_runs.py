"""2-8 runs compared on shared items: every figure recomputed directly with scipy."""
from __future__ import annotations

from itertools import combinations

import numpy as np
import pytest
from scipy.stats import binomtest, bootstrap

from evalcore.report.compare import CompareError
from evalcore.report.compare_runs import (
    compare_runs,
    comparison_frame,
    question_view,
    question_view_html,
)
from evalcore.report.run_figures import RESAMPLES, SEED
from tests.fakes.stored_runs import scipy_paired_p, seed_dataset, seed_run

QUESTIONS = [f"What is {i} + 1?" for i in range(8)]
A = {i: [1, 1, 0] if i % 2 else [1, 1, 1] for i in range(8)}
B = {i: [0, 0, 0] if i < 5 else [1, 1, 1] for i in range(8)}
C = {i: [1, 1, 1] for i in range(6)}  # lacks items 6 and 7


def proportion_confint(k: int, n: int, method: str = "wilson") -> tuple[float, float]:
    ci = binomtest(k, n).proportion_ci(0.95, method=method)
    return ci.low, ci.high


def rates(v: dict, items) -> list[float]:
    return [sum(x for x in v[i] if x) / 3 for i in items]


@pytest.fixture()
def three(engine):
    ds = seed_dataset(engine, "plus", QUESTIONS)
    return ds, [seed_run(engine, ds, A, 3, model="m-a"), seed_run(engine, ds, B, 3, model="m-b"),
                seed_run(engine, ds, C, 3, model="m-c")]


def test_alignment_counts_items_some_runs_lack(engine, three):
    _, ids = three
    result = compare_runs(engine, ids)
    assert result["alignment"]["shared"] == 6 and result["alignment"]["union"] == 8
    per = {r["run_id"]: r for r in result["alignment"]["per_run"]}
    assert per[ids[0]]["only_here"] == 2 and per[ids[2]]["lacks"] == 2
    assert per[ids[2]]["only_here"] == 0


def test_pairwise_tests_match_scipy_and_findings_follow_p(engine, three):
    _, ids = three
    result = compare_runs(engine, ids)
    item_ids = sorted(q["item_id"] for q in result["questions"])
    positions = range(6)
    by_run = dict(zip(ids, (A, B, C)))
    assert len(result["tests"]) == 3
    for (a, b), t in zip(combinations(ids, 2), result["tests"]):
        assert (t["a"], t["b"]) == (a, b)
        ra, rb = rates(by_run[a], positions), rates(by_run[b], positions)
        if ra == rb:
            assert t["test"]["p_value"] is None and "no test" in t["finding"]
            continue
        expected = scipy_paired_p(ra, rb)
        assert t["test"]["p_value"] == pytest.approx(expected)
        assert t["significant"] == (expected < 0.05)
        if not t["significant"]:
            assert "no significant difference" in t["finding"]
    assert len(item_ids) == 6


def test_shared_accuracy_and_intervals_match_direct_computation(engine, three):
    _, ids = three
    result = compare_runs(engine, ids)
    shared = {s["run_id"]: s for s in result["shared"]}
    ra = rates(A, range(6))
    assert shared[ids[0]]["accuracy"] == pytest.approx(np.mean(ra))
    ci = bootstrap((np.array(ra),), np.mean, n_resamples=RESAMPLES, method="percentile",
                   random_state=np.random.default_rng(SEED)).confidence_interval
    assert shared[ids[0]]["interval"]["low"] == pytest.approx(ci.low)
    assert shared[ids[0]]["interval"]["high"] == pytest.approx(ci.high)
    run_a = result["runs"][0]
    perfect = sum(1 for i in A if all(A[i]))
    low, high = proportion_confint(perfect, 8, method="wilson")
    assert run_a["metrics"]["perfect_share"] == pytest.approx(perfect / 8)
    assert run_a["intervals"]["perfect_share"]["low"] == pytest.approx(low)
    assert run_a["intervals"]["perfect_share"]["high"] == pytest.approx(high)
    assert run_a["metrics"]["flaky_share"] == pytest.approx(4 / 8)
    assert run_a["metrics"]["mean_success_rate"] == pytest.approx(np.mean(rates(A, range(8))))
    frame = comparison_frame(result)
    assert list(frame["run_id"]) == ids and "perfect_share_low" in frame.columns
    deltas = [d for d in result["gate_deltas"] if d["metric"] == "mean_success_rate"]
    assert [d["run_id"] for d in deltas] == ids[1:]
    assert deltas[0]["delta"] == pytest.approx(np.mean(rates(B, range(8)))
                                               - np.mean(rates(A, range(8))))
    assert deltas[0]["worse"] == (deltas[0]["delta"] < 0)
    from evalcore.report.compare_charts import distributions_overlay

    overlay = distributions_overlay(result)
    assert len(overlay.data) == 3
    assert list(overlay.data[0].y) == pytest.approx(
        [100 * sum(1 for i in A if sum(A[i]) == j) / 8 for j in range(4)])


def test_best_needs_significance_against_every_other_run(engine):
    ds = seed_dataset(engine, "many", [f"q{i}" for i in range(12)])
    good = seed_run(engine, ds, {i: [1] for i in range(12)}, 1, model="good")
    bad = seed_run(engine, ds, {i: [0] for i in range(12)}, 1, model="bad")
    result = compare_runs(engine, [bad, good])
    expected = scipy_paired_p([0.0] * 12, [1.0] * 12)
    assert result["tests"][0]["test"]["p_value"] == pytest.approx(expected)
    assert result["best"] == good
    assert f"run {good} is better than run {bad}" in result["tests"][0]["finding"]
    low, high = proportion_confint(12, 12, method="wilson")  # one round: Wilson
    assert result["shared"][1]["interval"]["low"] == pytest.approx(low)


def test_refusals_name_the_runs(engine, three):
    ds, ids = three
    fair = seed_run(engine, ds, {0: [1]}, 1, kind="fairness")
    with pytest.raises(CompareError, match=rf"run {fair} is fairness"):
        compare_runs(engine, [ids[0], fair])
    other = seed_dataset(engine, "other", ["x?"])
    lone = seed_run(engine, other, {0: [1, 1, 1]}, 3)
    with pytest.raises(CompareError, match=rf"no item in common: run {ids[0]} \(8 items\), "
                                           rf"run {lone} \(1 items\)"):
        compare_runs(engine, [ids[0], lone])
    with pytest.raises(CompareError, match="2 to 8"):
        compare_runs(engine, [ids[0]])
    with pytest.raises(CompareError, match="2 to 8"):
        compare_runs(engine, list(range(1, 10)))


def test_question_view_shows_every_run_and_escapes(engine):
    ds = seed_dataset(engine, "html", ["<b>bold</b> 1+1?"])
    a = seed_run(engine, ds, {0: [1]}, 1, answers={0: "<script>x</script>"})
    b = seed_run(engine, ds, {0: [0]}, 1)
    item_id = compare_runs(engine, [a, b])["questions"][0]["item_id"]
    view = question_view(engine, [a, b], item_id)
    assert view["differs"] and [r["run_id"] for r in view["runs"]] == [a, b]
    assert view["runs"][0]["rounds"][0]["correct"] is True
    page = question_view_html(view)
    assert "<script>" not in page and "&lt;script&gt;" in page and "&lt;b&gt;bold" in page
    assert "background" in page  # run b's verdict differs from run a's


def test_robustness_runs_compare_on_shared_clean_and_attacked_items(engine):
    from tests.fakes.stored_runs import seed_robustness_run

    clean = {i: [1] for i in range(8)}
    weak = {i: [0] if i < 6 else [1] for i in range(8)}
    strong = {i: [1] for i in range(8)}
    run_a, ds = seed_robustness_run(engine, QUESTIONS, clean, weak, 1, model="weak")
    run_b, _ = seed_robustness_run(engine, QUESTIONS, clean, strong, 1, model="strong",
                                   dataset_ids=ds)
    result = compare_runs(engine, [run_a, run_b])
    assert result["alignment"]["shared"] == 16  # 8 clean + 8 attacked items
    metrics = {f["run"]["model"]: f["metrics"] for f in result["runs"]}
    assert metrics["weak"]["pdr_char"] == pytest.approx(6 / 8)
    assert metrics["strong"]["pdr_char"] == pytest.approx(0.0)
    rates_a = [1.0] * 8 + [float(weak[i][0]) for i in range(8)]
    expected = scipy_paired_p(rates_a, [1.0] * 16)
    assert result["tests"][0]["test"]["p_value"] == pytest.approx(expected)
    assert result["best"] == run_b
    interval = result["runs"][0]["intervals"]["pdr_char"]
    assert interval["low"] <= 6 / 8 <= interval["high"]
    from scipy.stats import binomtest

    assert metrics["weak"]["mcnemar_p_char"] == pytest.approx(binomtest(6, 6, 0.5).pvalue)
    deltas = {d["metric"]: d for d in result["gate_deltas"]}
    assert deltas["pdr_char"]["delta"] == pytest.approx(-6 / 8)
    assert not deltas["pdr_char"]["worse"] and deltas["pdr_char"]["better"] == "lower"
    assert deltas["accuracy_attacked"]["delta"] == pytest.approx(6 / 8)


def test_fairness_runs_without_verdicts_are_compared_without_a_test(engine):
    ds = seed_dataset(engine, "suite", QUESTIONS[:3])
    a = seed_run(engine, ds, {i: [None] for i in range(3)}, 1, kind="fairness")
    b = seed_run(engine, ds, {i: [None] for i in range(3)}, 1, kind="fairness")
    result = compare_runs(engine, [a, b])
    assert result["kind"] == "fairness" and result["tests"][0]["test"]["p_value"] is None
    assert "no right/wrong verdicts" in result["tests"][0]["finding"]
    assert result["best"] is None and result["shared"][0]["accuracy"] is None


def test_judged_runs_use_the_judge_verdicts_except_failed_answers(engine):
    from evalcore.dataset import load_items
    from evalcore.report.run_figures import run_figures
    from evalcore.store import queries

    ds = seed_dataset(engine, "judged", QUESTIONS[:2])
    run = seed_run(engine, ds, {0: [1, 1], 1: [0, None]}, 2)
    queries.update_run(engine, run, judge="judge")
    items = load_items(engine, ds)
    # the judge overrules the rules: item 0 wrong twice, item 1 right twice; but item 1's
    # round 2 answer failed, so that round has no verdict whatever the judge said
    queries.record_calls(engine, [
        {"run_id": run, "item_id": items[p].id, "round": r, "stage": "judge", "prompt": "j",
         "answer": "v", "correct": p == 1, "score": float(p == 1)}
        for p in (0, 1) for r in (1, 2)])
    metrics = run_figures(engine, run)["metrics"]
    # stability leaves the round without a verdict out: item 1 is right 1 of 1 answered
    assert metrics["failure_policy"] == "exclude"
    assert metrics["mean_success_rate"] == pytest.approx((0 + 1.0) / 2)
    assert metrics["errored_rounds"] == 1 and metrics["errors"] == 1
    as_wrong = run_figures(engine, run, failure_policy="as_wrong")["metrics"]
    assert as_wrong["mean_success_rate"] == pytest.approx((0 + 0.5) / 2)  # 1 of 2 rounds
    assert metrics["calls"] == 8
