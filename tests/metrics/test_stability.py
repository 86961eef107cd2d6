"""Stability figures checked against scipy / numpy and exact fractions."""
from __future__ import annotations

import json
import math
import random
import re
from fractions import Fraction

import numpy as np
import pytest
from scipy.special import comb
from scipy.stats import binomtest

from evalcore.errors import EvalcoreError
from evalcore.metrics.consistency import answer_consistency, consistency_summary, normalize_answer
from evalcore.metrics.stability import (
    CLASSES,
    MetricInputError,
    classify,
    pass_at_k,
    pass_hat_k,
    question_stability,
    risk_levels,
    round_json,
    stability_summary,
    wilson_interval,
)


def random_matrix(seed: int, questions: int, rounds: int) -> np.ndarray:
    """Verdicts with a per-question skill so every class shows up."""
    rng = np.random.default_rng(seed)
    skill = rng.choice([0.0, 0.3, 0.6, 0.9, 1.0], size=questions)
    return (rng.random((questions, rounds)) < skill[:, None]).astype(int)


# --------------------------------------------------------------------------- Wilson


@pytest.mark.parametrize("n", [1, 2, 3, 5, 7, 10, 33, 100])
@pytest.mark.parametrize("confidence", [0.95, 0.9, 0.99])
def test_wilson_matches_scipy_for_every_count(n: int, confidence: float) -> None:
    for k in range(n + 1):
        ci = binomtest(k, n).proportion_ci(confidence_level=confidence, method="wilson")
        low, high = wilson_interval(k, n, confidence)
        assert low == pytest.approx(float(ci.low), abs=1e-12), (k, n)
        assert high == pytest.approx(float(ci.high), abs=1e-12), (k, n)
        assert 0.0 <= low <= k / n <= high <= 1.0


def test_wilson_rejects_impossible_counts() -> None:
    for k, n in [(0, 0), (3, 2), (-1, 4)]:
        with pytest.raises(MetricInputError):
            wilson_interval(k, n)


# --------------------------------------------------------------------------- classes


def classify_by_fraction(c: int, n: int) -> str:
    rate = Fraction(c, n)
    if rate == 1:
        return "perfect"
    if rate >= Fraction(4, 5):
        return "high"
    if rate >= Fraction(1, 2):
        return "unstable"
    if rate > 0:
        return "severe"
    return "failed"


def test_classes_follow_the_documented_boundaries_for_every_n_up_to_100() -> None:
    for n in range(1, 101):
        for c in range(n + 1):
            assert classify(c, n) == classify_by_fraction(c, n), (c, n)


@pytest.mark.parametrize("c,n,expected", [
    (5, 5, "perfect"), (4, 5, "high"), (8, 10, "high"), (99, 100, "high"),
    (79, 100, "unstable"), (1, 2, "unstable"), (49, 100, "severe"), (1, 100, "severe"),
    (0, 1, "failed"), (1, 1, "perfect"),
])
def test_class_boundaries_at_the_edges(c: int, n: int, expected: str) -> None:
    assert classify(c, n) == expected


def test_risk_levels_boundaries() -> None:
    for n in range(1, 101):
        for c in range(n + 1):
            rate = Fraction(c, n)
            levels = set(risk_levels(c, n))
            assert ("high_risk" in levels) == (rate < Fraction(1, 2))
            assert ("borderline" in levels) == (Fraction(1, 2) <= rate < Fraction(4, 5))
            assert ("trusted" in levels) == (rate >= Fraction(4, 5))
            assert ("perfect" in levels) == (rate == 1)


# --------------------------------------------------------------------------- pass@k


def test_pass_at_k_and_pass_hat_k_match_scipy_comb() -> None:
    rng = random.Random(7)
    cases = [(n, c, k) for n in (1, 2, 5, 10) for c in range(n + 1) for k in range(1, n + 1)]
    cases += [(100, rng.randint(0, 100), rng.randint(1, 100)) for _ in range(300)]
    for n, c, k in cases:
        expected_at = 1.0 - comb(n - c, k) / comb(n, k)
        expected_hat = comb(c, k) / comb(n, k)
        assert pass_at_k(n, c, k) == pytest.approx(expected_at, rel=1e-9, abs=1e-12), (n, c, k)
        assert pass_hat_k(n, c, k) == pytest.approx(expected_hat, rel=1e-9, abs=1e-300), (n, c, k)


def test_pass_at_k_matches_the_stable_product_form() -> None:
    """The Codex paper's numerically stable form: 1 - prod_{i=n-c+1}^{n} (1 - k/i)."""
    for n, c, k in [(100, 3, 10), (100, 50, 50), (100, 1, 1), (100, 99, 2), (20, 0, 5)]:
        product = 1.0 if n - c < k else 1.0 - float(np.prod(1.0 - k / np.arange(n - c + 1, n + 1)))
        assert pass_at_k(n, c, k) == pytest.approx(product, rel=1e-12, abs=1e-15)


def test_pass_at_1_is_the_rate_and_pass_at_n_is_any_right() -> None:
    for n in (1, 4, 100):
        for c in range(n + 1):
            assert pass_at_k(n, c, 1) == pytest.approx(c / n)
            assert pass_hat_k(n, c, 1) == pytest.approx(c / n)
            assert pass_at_k(n, c, n) == (1.0 if c else 0.0)
            assert pass_hat_k(n, c, n) == (1.0 if c == n else 0.0)


def test_pass_at_k_rejects_k_outside_1_to_n() -> None:
    for n, c, k in [(5, 2, 0), (5, 2, 6), (5, 6, 1)]:
        with pytest.raises(MetricInputError):
            pass_at_k(n, c, k)


# --------------------------------------------------------------------------- summary


@pytest.mark.parametrize("seed,questions,rounds", [(1, 50, 10), (2, 200, 5), (3, 37, 100), (4, 9, 1)])
def test_summary_matches_numpy_and_scipy(seed: int, questions: int, rounds: int) -> None:
    matrix = random_matrix(seed, questions, rounds)
    summary = stability_summary(matrix.tolist(), rounds)
    counts = matrix.sum(axis=1)
    rates = counts / rounds

    assert [q.correct_count for q in summary.questions] == counts.tolist()
    assert [q.success_rate for q in summary.questions] == pytest.approx(rates.tolist())
    assert summary.mean == pytest.approx(float(np.mean(rates)), abs=1e-12)
    assert summary.variance == pytest.approx(float(np.var(rates, ddof=0)), abs=1e-12)

    hist = np.bincount(counts, minlength=rounds + 1)
    assert summary.distribution_counts == {str(j): int(v) for j, v in enumerate(hist)}
    assert list(summary.distribution_counts) == [str(j) for j in range(rounds + 1)]
    for j, v in enumerate(hist):
        assert summary.distribution_percent[str(j)] == pytest.approx(100 * v / questions)
    assert sum(summary.distribution_percent.values()) == pytest.approx(100.0)

    assert summary.classes == {
        "perfect": int(np.sum(rates == 1)),
        "high": int(np.sum((rates >= 0.8) & (rates < 1))),
        "unstable": int(np.sum((rates >= 0.5) & (rates < 0.8))),
        "severe": int(np.sum((rates > 0) & (rates < 0.5))),
        "failed": int(np.sum(rates == 0)),
    }
    assert summary.risk == {
        "high_risk": int(np.sum(rates < 0.5)),
        "borderline": int(np.sum((rates >= 0.5) & (rates < 0.8))),
        "trusted": int(np.sum(rates >= 0.8)),
        "perfect": int(np.sum(rates == 1)),
    }

    assert list(summary.pass_at_k) == [str(k) for k in range(1, rounds + 1)]
    for k in range(1, rounds + 1):
        at = np.mean(1.0 - comb(rounds - counts, k) / comb(rounds, k))
        hat = np.mean(comb(counts, k) / comb(rounds, k))
        assert summary.pass_at_k[str(k)] == pytest.approx(float(at), rel=1e-9, abs=1e-12)
        assert summary.pass_hat_k[str(k)] == pytest.approx(float(hat), rel=1e-9, abs=1e-12)

    for q, k in zip(summary.questions, counts):
        ci = binomtest(int(k), rounds).proportion_ci(method="wilson")
        assert (q.ci_low, q.ci_high) == pytest.approx((float(ci.low), float(ci.high)), abs=1e-12)


def test_array_mapping_and_lists_give_the_same_summary() -> None:
    matrix = random_matrix(11, 30, 8)
    from_list = stability_summary(matrix.tolist(), 8)
    from_array = stability_summary(matrix, 8)
    from_bools = stability_summary(matrix.astype(bool), 8)
    keys = list(range(100, 130))
    from_map = stability_summary(dict(zip(keys, matrix.tolist())), 8)
    for other in (from_array, from_bools, from_map):
        assert other.distribution_counts == from_list.distribution_counts
        assert other.pass_at_k == from_list.pass_at_k
    assert [q.key for q in from_map.questions] == keys
    assert list(from_map.results_json()) == [str(k) for k in keys]


def test_as_wrong_counts_errored_and_missing_rounds_as_wrong_and_reports_them() -> None:
    summary = stability_summary({7: [1, None, 1], 9: [1], 12: [None, None, None]}, n_rounds=3,
                                failure_policy="as_wrong")
    by_key = {q.key: q for q in summary.questions}
    assert (by_key[7].correct_count, by_key[7].answered, by_key[7].errored) == (2, 2, 1)
    assert (by_key[9].correct_count, by_key[9].answered) == (1, 1)
    assert (by_key[12].correct_count, by_key[12].answered) == (0, 0)
    assert by_key[9].success_rate == pytest.approx(1 / 3)
    assert by_key[12].stability_class == "failed"
    assert summary.errored_rounds == 1 + 2 + 3
    assert summary.distribution_counts == {"0": 1, "1": 1, "2": 1, "3": 0}
    assert (summary.incomplete, summary.unanswered, summary.questions_with_errors) == (0, 0, 3)
    doc = summary.summary_json()
    assert doc["errored_rounds"] == 6 and doc["failure_policy"] == "as_wrong"
    assert "seed" in doc["failure_policy_note"]


def test_exclude_rates_over_answered_rounds_and_keeps_errored_out_of_the_bins() -> None:
    summary = stability_summary({7: [1, None, 1], 9: [1], 12: [None, None, None], 13: [0, 1, 1]},
                                n_rounds=3)
    by_key = {q.key: q for q in summary.questions}
    assert summary.failure_policy == "exclude"
    assert (by_key[7].success_rate, by_key[7].stability_class) == (1.0, "perfect")
    assert (by_key[9].success_rate, by_key[9].errored) == (1.0, 2)
    assert by_key[12].success_rate is None and by_key[12].stability_class is None
    assert by_key[12].ci_low is None and by_key[12].to_json_dict()["class"] is None
    # only question 13 has all 3 rounds judged: it alone sits in a bin
    assert summary.distribution_counts == {"0": 0, "1": 0, "2": 1, "3": 0}
    assert (summary.incomplete, summary.unanswered, summary.questions_with_errors) == (3, 1, 3)
    assert sum(summary.distribution_percent.values()) + 100 * 3 / 4 == pytest.approx(100)
    assert summary.distribution_json()["incomplete_percent"] == 75.0
    # figures over the three questions that have a rate
    assert summary.mean == pytest.approx(np.mean([1.0, 1.0, 2 / 3]))
    assert summary.variance == pytest.approx(np.var([1.0, 1.0, 2 / 3]))
    assert summary.classes == {"perfect": 2, "high": 0, "unstable": 1, "severe": 0, "failed": 0}
    # pass@k over the questions with at least k answered rounds
    assert summary.pass_at_k["1"] == pytest.approx(np.mean([1, 1, 2 / 3]))
    assert summary.pass_hat_k["2"] == pytest.approx(np.mean([1, comb(2, 2) / comb(3, 2)]))
    assert summary.pass_hat_k["3"] == 0.0  # question 13 alone, 2 of 3 right


def test_exclude_with_no_verdict_at_all_has_no_rate() -> None:
    summary = stability_summary([[None, None], [None]], 2)
    assert summary.mean is None and summary.variance is None
    assert summary.summary_json()["std"] is None
    assert set(summary.pass_at_k.values()) == {None}
    assert summary.unanswered == 2 and sum(summary.classes.values()) == 0
    json.dumps(summary.to_json_dict(), allow_nan=False)


def test_unknown_failure_policy_is_refused() -> None:
    with pytest.raises(MetricInputError, match="exclude, as_wrong"):
        stability_summary([[1]], 1, failure_policy="ignore")  # type: ignore[arg-type]


@pytest.mark.parametrize("seed,questions,rounds", [(11, 60, 10), (12, 25, 7), (13, 30, 100)])
def test_exclude_matches_numpy_and_scipy_with_random_errors(seed: int, questions: int,
                                                            rounds: int) -> None:
    matrix = random_matrix(seed, questions, rounds).astype(object)
    rng = np.random.default_rng(seed)
    matrix[rng.random(matrix.shape) < 0.1] = None  # about one round in ten errored
    matrix[0, :] = None  # and one question never answered
    summary = stability_summary(matrix.tolist(), rounds)
    answered = np.array([sum(v is not None for v in row) for row in matrix])
    correct = np.array([sum(v for v in row if v is not None) for row in matrix])
    has_rate = answered > 0
    rates = correct[has_rate] / answered[has_rate]

    assert summary.mean == pytest.approx(float(np.mean(rates)), abs=1e-12)
    assert summary.variance == pytest.approx(float(np.var(rates, ddof=0)), abs=1e-12)
    complete = answered == rounds
    hist = np.bincount(correct[complete].astype(int), minlength=rounds + 1)
    assert summary.distribution_counts == {str(j): int(v) for j, v in enumerate(hist)}
    assert summary.incomplete == int(np.sum(~complete))
    assert summary.errored_rounds == int(rounds * questions - answered.sum())
    assert summary.classes == {
        "perfect": int(np.sum(rates == 1)),
        "high": int(np.sum((rates >= 0.8) & (rates < 1))),
        "unstable": int(np.sum((rates >= 0.5) & (rates < 0.8))),
        "severe": int(np.sum((rates > 0) & (rates < 0.5))),
        "failed": int(np.sum(rates == 0)),
    }
    assert summary.risk["trusted"] == int(np.sum(rates >= 0.8))
    for k in (1, 2, rounds):
        eligible = answered >= k
        n, c = answered[eligible], correct[eligible]
        if not eligible.any():
            assert summary.pass_at_k[str(k)] is None
            continue
        at = np.mean(1.0 - comb(n - c, k) / comb(n, k))
        hat = np.mean(comb(c, k) / comb(n, k))
        assert summary.pass_at_k[str(k)] == pytest.approx(float(at), rel=1e-9, abs=1e-12)
        assert summary.pass_hat_k[str(k)] == pytest.approx(float(hat), rel=1e-9, abs=1e-12)
    for q, a, c in zip(summary.questions, answered, correct):
        if a == 0:
            assert q.success_rate is None
            continue
        ci = binomtest(int(c), int(a)).proportion_ci(method="wilson")
        assert (q.ci_low, q.ci_high) == pytest.approx((float(ci.low), float(ci.high)), abs=1e-12)


@pytest.mark.parametrize("rounds", [1, 100])
def test_all_right_and_all_wrong(rounds: int) -> None:
    right = stability_summary([[1] * rounds] * 4, rounds)
    assert right.mean == 1.0 and right.variance == 0.0
    assert right.classes["perfect"] == 4 and right.risk == {
        "high_risk": 0, "borderline": 0, "trusted": 4, "perfect": 4}
    assert right.distribution_counts[str(rounds)] == 4
    assert set(right.pass_at_k.values()) == {1.0} and set(right.pass_hat_k.values()) == {1.0}

    wrong = stability_summary([[0] * rounds] * 4, rounds)
    assert wrong.mean == 0.0 and wrong.variance == 0.0
    assert wrong.classes["failed"] == 4 and wrong.risk["high_risk"] == 4
    assert wrong.distribution_percent["0"] == 100.0
    assert set(wrong.pass_at_k.values()) == {0.0} and set(wrong.pass_hat_k.values()) == {0.0}
    assert wrong.questions[0].ci_low == 0.0 and wrong.questions[0].ci_high > 0.0


def test_single_round_has_two_buckets() -> None:
    summary = stability_summary([[1], [0], [1]], 1)
    assert summary.distribution_counts == {"0": 1, "1": 2}
    assert summary.pass_at_k == {"1": pytest.approx(2 / 3)}
    assert summary.variance == pytest.approx(float(np.var([1, 0, 1])))


@pytest.mark.parametrize("rows,rounds,match", [
    ([], 5, "no questions"),
    ({}, 5, "no questions"),
    (np.zeros((0, 5)), 5, "no questions"),
    ([[1, 0]], 0, "n_rounds"),
    ([[1, 0]], 101, "n_rounds"),
    ([[1, 0, 1]], 2, "3 verdicts"),
    ([[1, 2]], 2, "not 0, 1 or None"),
    ([[1, "yes"]], 2, "not 0, 1 or None"),
    (np.zeros(4), 4, "2-D"),
])
def test_bad_input_is_refused_with_a_clear_message(rows, rounds: int, match: str) -> None:
    with pytest.raises(MetricInputError, match=match) as info:
        stability_summary(rows, rounds)
    assert isinstance(info.value, EvalcoreError)  # the CLI prints these and exits 2


# --------------------------------------------------------------------------- JSON


def test_json_shape_and_round_trip() -> None:
    matrix = random_matrix(5, 6, 4)
    summary = stability_summary(matrix.tolist(), 4)
    items = {i: {"question": f"q{i}", "standard_answer": "A", "type": "choice",
                 "rounds": [round_json(r + 1, f"ans{r}", bool(matrix[i, r]), None, "ok")
                            for r in range(4)]} for i in range(6)}
    doc = json.loads(json.dumps(summary.to_json_dict(items), allow_nan=False, ensure_ascii=False))

    assert doc["distribution"]["total_questions"] == 6
    assert doc["distribution"]["repetition_count"] == 4
    assert list(doc["distribution"]["distribution_counts"]) == ["0", "1", "2", "3", "4"]
    entry = doc["stability_results"]["2"]
    assert entry["question"] == "q2" and entry["type"] == "choice"
    assert entry["correct_count"] == int(matrix[2].sum())
    assert entry["class"] in CLASSES
    assert entry["rounds"][0] == {"round": 1, "answer": "ans0", "correct": bool(matrix[2, 0]),
                                  "score": float(matrix[2, 0]), "reason": "ok",
                                  "errored": False}
    assert sum(r["score"] for r in entry["rounds"]) == entry["correct_count"]
    assert set(doc["summary"]) >= {"mean", "variance", "classes", "risk", "pass_at_k", "pass_hat_k"}
    assert doc["summary"]["risk"]["trusted"] == int(np.sum(matrix.mean(axis=1) >= 0.8))


def test_round_json_writes_a_missing_verdict_per_policy() -> None:
    assert round_json(3, None, None, None, "timeout", failure_policy="as_wrong") == {
        "round": 3, "answer": None, "correct": False, "score": 0.0, "reason": "timeout",
        "errored": True}
    assert round_json(3, "x", False, 0.0, "judge error", errored=True,
                      failure_policy="exclude") == {
        "round": 3, "answer": "x", "correct": None, "score": None, "reason": "judge error",
        "errored": True}


def test_question_stability_alone() -> None:
    q = question_stability([True, False, True, True, True], 5, key="x")
    assert (q.correct_count, q.stability_class, q.key) == (4, "high", "x")


# --------------------------------------------------------------------------- consistency


@pytest.mark.parametrize("a,b", [
    ("  Hello,   World! ", "hello world"),
    ("ＡＢＣ１２３", "abc123"),
    ("答案：５。", "答案 5"),
    ("(A)", "a"),
    ("The answer is 3.5", "the answer is 3.5"),
    ("1,000 apples", "1,000 apples"),
    ("  -3 ", "-3"),
    ("x-3", "x 3"),
])
def test_normalize_answer(a: str, b: str) -> None:
    assert normalize_answer(a) == b


def test_normalize_keeps_numbers_apart() -> None:
    assert len({normalize_answer(s) for s in ["-3", "3", "3.5", "35", "+3"]}) == 5


def test_answer_consistency_counts_errors_against_the_share() -> None:
    answers = ["Paris.", "paris", "PARIS!", "Lyon", None]
    result = answer_consistency(answers)
    assert (result.distinct, result.top_answer, result.answered, result.rounds) == (2, "paris", 4, 5)
    assert result.top_share == pytest.approx(3 / 5)


def test_answer_consistency_with_an_extractor() -> None:
    def number(text: str) -> str | None:
        found = re.findall(r"-?\d+(?:\.\d+)?", text)
        return found[-1] if found else None

    answers = ["So x = 12", "12", "The result is 12.", "I think 13", "no idea"]
    result = answer_consistency(answers, extractor=number)
    assert (result.distinct, result.top_answer, result.answered) == (2, "12", 4)
    assert result.top_share == pytest.approx(3 / 5)
    assert answer_consistency(answers).distinct == 5


def test_consistency_against_a_direct_count_on_random_answers() -> None:
    rng = random.Random(3)
    pool = ["A", "a.", " B", "b", "C!", None]
    per_question = [[rng.choice(pool) for _ in range(rng.randint(1, 12))] for _ in range(40)]
    summary = consistency_summary(per_question)
    folded = {"A": "a", "a.": "a", " B": "b", "b": "b", "C!": "c"}
    for answers, got in zip(per_question, summary["questions"]):
        values = [folded[a] for a in answers if a is not None]
        top = max((values.count(v) for v in set(values)), default=0)
        assert got["distinct"] == len(set(values))
        assert got["top_share"] == pytest.approx(top / len(answers))
    assert summary["mean_top_share"] == pytest.approx(
        float(np.mean([q["top_share"] for q in summary["questions"]])))


def test_consistency_refuses_empty_input() -> None:
    with pytest.raises(MetricInputError, match="at least one round"):
        answer_consistency([])
    with pytest.raises(MetricInputError, match="empty"):
        consistency_summary([])


def test_wilson_with_default_level_is_95_percent() -> None:
    ci = binomtest(3, 10).proportion_ci(confidence_level=0.95, method="wilson")
    assert wilson_interval(3, 10) == pytest.approx((float(ci.low), float(ci.high)))
    assert not math.isclose(wilson_interval(3, 10, 0.9)[0], float(ci.low))


def test_answer_consistency_folds_number_spellings():
    from evalcore.metrics.consistency import answer_consistency, answer_key

    assert answer_consistency(["1,200", "1200", "1200.0"]).distinct == 1
    assert answer_key("1200.50") == "1200.5" and answer_key("-3") == "-3"
    assert answer_consistency(["1200", "1201", "12.00"]).distinct == 3
