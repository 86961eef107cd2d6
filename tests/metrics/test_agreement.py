"""Judge reliability checked against sklearn and direct numpy computations."""
from __future__ import annotations

import json
import math
import warnings

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from evalcore.metrics.agreement import cohen_kappa, fleiss_kappa, judge_reliability
from evalcore.metrics.stability import MetricInputError


def noisy_passes(seed: int, answers: int, passes: int, flip: float) -> np.ndarray:
    """A 'true' verdict per answer, each pass flipping it with probability `flip`."""
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, 2, size=answers)
    flips = rng.random((answers, passes)) < flip
    return np.where(flips, 1 - truth[:, None], truth[:, None])


def fleiss_numpy(ratings: np.ndarray, labels: list) -> float:
    """Fleiss (1971) from the items x categories count matrix, vectorised."""
    counts = np.stack([(ratings == lab).sum(axis=1) for lab in labels], axis=1).astype(float)
    n_items, m = counts.shape[0], counts.sum(axis=1)[0]
    p_i = ((counts ** 2).sum(axis=1) - m) / (m * (m - 1))
    p_j = counts.sum(axis=0) / (n_items * m)
    p_e = (p_j ** 2).sum()
    return float((p_i.mean() - p_e) / (1 - p_e))


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("flip", [0.0, 0.05, 0.3, 0.5])
def test_cohen_kappa_matches_sklearn(seed: int, flip: float) -> None:
    passes = noisy_passes(seed, 80, 2, flip)
    expected = cohen_kappa_score(passes[:, 0], passes[:, 1])
    assert cohen_kappa(passes[:, 0].tolist(), passes[:, 1].tolist()) == pytest.approx(
        expected, abs=1e-12)


def test_cohen_kappa_matches_sklearn_on_several_labels() -> None:
    rng = np.random.default_rng(9)
    a = rng.choice(["A", "B", "C", "D"], size=120)
    b = np.where(rng.random(120) < 0.6, a, rng.choice(["A", "B", "C", "D"], size=120))
    assert cohen_kappa(a.tolist(), b.tolist()) == pytest.approx(cohen_kappa_score(a, b), abs=1e-12)


def test_cohen_kappa_undefined_like_sklearn() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert math.isnan(cohen_kappa_score([1, 1, 1], [1, 1, 1]))
    assert math.isnan(cohen_kappa([1, 1, 1], [1, 1, 1]))


def test_fleiss_kappa_wikipedia_example() -> None:
    """Fleiss' worked example (Wikipedia): 10 subjects, 14 raters, 5 categories, kappa 0.210."""
    table = [
        [0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0], [2, 2, 8, 1, 1],
        [7, 7, 0, 0, 0], [3, 2, 6, 3, 0], [2, 5, 3, 2, 2], [6, 5, 2, 1, 0], [0, 2, 2, 3, 7],
    ]
    ratings = [[cat for cat, n in enumerate(row) for _ in range(n)] for row in table]
    got = fleiss_kappa(ratings)
    assert round(got, 3) == 0.210
    assert got == pytest.approx(fleiss_numpy(np.array(ratings), list(range(5))), abs=1e-12)


@pytest.mark.parametrize("seed,passes,flip", [(1, 3, 0.1), (2, 5, 0.2), (3, 4, 0.45), (4, 10, 0.02)])
def test_fleiss_kappa_matches_direct_computation(seed: int, passes: int, flip: float) -> None:
    ratings = noisy_passes(seed, 60, passes, flip)
    assert fleiss_kappa(ratings.tolist()) == pytest.approx(fleiss_numpy(ratings, [0, 1]), abs=1e-12)


def test_fleiss_kappa_for_two_raters_is_scotts_pi() -> None:
    ratings = noisy_passes(8, 100, 2, 0.2)
    a, b = ratings[:, 0], ratings[:, 1]
    p_o = np.mean(a == b)
    pooled = np.concatenate([a, b]).mean()
    p_e = pooled ** 2 + (1 - pooled) ** 2
    assert fleiss_kappa(ratings.tolist()) == pytest.approx((p_o - p_e) / (1 - p_e), abs=1e-12)


def test_judge_reliability_matches_direct_counts() -> None:
    ratings = noisy_passes(5, 200, 3, 0.1)
    result = judge_reliability(ratings.tolist())
    not_unanimous = int(np.sum(ratings.min(axis=1) != ratings.max(axis=1)))
    assert (result.answers, result.passes, result.flips) == (200, 3, not_unanimous)
    assert result.flip_rate == pytest.approx(not_unanimous / 200)
    assert result.cohen_kappa == pytest.approx(cohen_kappa_score(ratings[:, 0], ratings[:, 1]))
    pairs = [cohen_kappa_score(ratings[:, i], ratings[:, j]) for i, j in [(0, 1), (0, 2), (1, 2)]]
    assert result.mean_pairwise_cohen_kappa == pytest.approx(float(np.mean(pairs)))
    assert result.fleiss_kappa == pytest.approx(fleiss_numpy(ratings, [0, 1]))
    assert result.failed_judgements == 0


def test_failed_judgements_count_as_zero() -> None:
    result = judge_reliability([[1, None], [0, 0], [None, None], [True, True]])
    assert result.failed_judgements == 3
    assert result.flips == 1  # only [1, 0]
    expected = cohen_kappa_score([1, 0, 0, 1], [0, 0, 0, 1])
    assert result.cohen_kappa == pytest.approx(expected)


def test_a_perfectly_steady_judge() -> None:
    result = judge_reliability([[1, 1, 1]] * 5 + [[0, 0, 0]] * 3)
    assert result.flips == 0 and result.flip_rate == 0.0
    assert result.cohen_kappa == pytest.approx(1.0) and result.fleiss_kappa == pytest.approx(1.0)


def test_one_label_everywhere_gives_undefined_kappa_as_json_null() -> None:
    result = judge_reliability([[1, 1]] * 4)
    assert math.isnan(result.cohen_kappa) and math.isnan(result.fleiss_kappa)
    doc = json.loads(json.dumps(result.to_json_dict(), allow_nan=False))
    assert doc["cohen_kappa"] is None and doc["fleiss_kappa"] is None and doc["flip_rate"] == 0.0


def test_single_pass_has_no_kappa() -> None:
    result = judge_reliability([[1], [0]])
    assert result.cohen_kappa is None and result.fleiss_kappa is None and result.flips == 0


@pytest.mark.parametrize("verdicts,match", [
    ([], "no re-judged answers"),
    ([[]], "no judgements"),
    ([[1, 0], [1]], "answer 1 has 1 judgements"),
    ([[1, 3]], "not 0, 1 or None"),
])
def test_bad_input_is_refused(verdicts, match: str) -> None:
    with pytest.raises(MetricInputError, match=match):
        judge_reliability(verdicts)


def test_kappa_functions_guard_empty_and_mismatched_input() -> None:
    with pytest.raises(MetricInputError, match="empty"):
        cohen_kappa([], [])
    with pytest.raises(MetricInputError, match="same answers"):
        cohen_kappa([1, 0], [1])
    with pytest.raises(MetricInputError, match="empty"):
        fleiss_kappa([])
    with pytest.raises(MetricInputError, match="at least 2"):
        fleiss_kappa([[1]])


# ------------------------------------------------------------------ degenerate judges

from hypothesis import given, settings
from hypothesis import strategies as hst

from evalcore.metrics.agreement import DEGENERATE_MIN, degenerate_judge, kappa_note


@settings(max_examples=80, deadline=None)
@given(verdicts=hst.lists(hst.booleans(), min_size=DEGENERATE_MIN, max_size=60),
       reason=hst.text(max_size=40), spacing=hst.sampled_from(["", " ", "  "]))
def test_one_reason_for_every_answer_is_flagged(verdicts, reason, spacing):
    """Whatever the verdicts, the same reason (modulo spacing and case) each time."""
    reasons = [spacing + (reason.upper() if i % 2 else reason) for i in range(len(verdicts))]
    flags = degenerate_judge(verdicts, reasons)
    assert any(f.startswith(("one reason for all", "no reason in any")) for f in flags)
    assert any(f.startswith("one verdict") for f in flags) == (len(set(verdicts)) == 1)


@settings(max_examples=80, deadline=None)
@given(n=hst.integers(DEGENERATE_MIN, 40), failed=hst.integers(0, 10))
def test_a_judge_reading_the_answers_is_not_flagged_and_failures_do_not_count(n, failed):
    verdicts = [i % 2 == 0 for i in range(n)] + [None] * failed
    reasons = [f"step {i} checks out" if i % 2 == 0 else "wrong sum" for i in range(n)] + \
        ["judge error: HTTP 500"] * failed
    assert degenerate_judge(verdicts, reasons) == []


def test_few_judgements_are_not_enough_to_call_a_judge_degenerate():
    assert degenerate_judge([True] * (DEGENERATE_MIN - 1), ["ok"] * (DEGENERATE_MIN - 1)) == []
    assert degenerate_judge([True] * 30, ["one short sentence"] * 30) == [
        "one reason for all 30 judgements: 'one short sentence'",
        "one verdict for all 30 judgements: right"]


def test_kappa_note_says_why_kappa_is_not_defined():
    assert "is wrong" in kappa_note([0, 0, 0], [False, 0, 0])
    assert kappa_note([1, 0], [1, 0]) is None
    assert kappa_note([1, 1], [0, 0]) is None  # kappa 0, defined
    assert kappa_note([None], [1]) == "no answer has two valid judgements"
