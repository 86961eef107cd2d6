"""metrics.fairness on FIXED data, each figure recomputed independently (masks, sklearn,
scipy) and against fairlearn's own functions."""
from __future__ import annotations

import math

import numpy as np
import pytest
from fairlearn.metrics import (MetricFrame, demographic_parity_difference,
                               demographic_parity_ratio, equalized_odds_difference,
                               true_positive_rate)
from scipy.stats import kruskal
from sklearn.metrics import roc_auc_score

from evalcore.metrics import fairness as fm

# 12 answers, 3 groups; decision = score >= 7; label = the resume deserved a yes.
GROUPS = ["m", "m", "m", "m", "f", "f", "f", "f", "x", "x", "x", "x"]
SCORES = [8, 9, 6, 7, 5, 7, 4, 8, 9, 3, 7, 6]
LABELS = [1, 1, 0, 1, 1, 1, 0, 0, 1, 0, 1, 0]
DECIDE = [int(s >= 7) for s in SCORES]


def _rate(values, groups, g, where=None):
    picked = [v for v, gg, w in zip(values, groups, where or [True] * len(values))
              if gg == g and w]
    return sum(picked) / len(picked)


def test_spd_is_max_minus_min_selection_rate_as_fairlearn() -> None:
    rates = {g: _rate(DECIDE, GROUPS, g) for g in set(GROUPS)}
    by_hand = max(rates.values()) - min(rates.values())
    got = fm.statistical_parity_difference(DECIDE, sensitive_features=GROUPS)
    assert got == pytest.approx(by_hand)
    assert got == pytest.approx(demographic_parity_difference(LABELS, DECIDE,
                                                              sensitive_features=GROUPS))
    assert rates == {"m": 0.75, "f": 0.5, "x": 0.5} and got == pytest.approx(0.25)


def test_disparate_impact_is_min_over_max_as_fairlearn() -> None:
    got = fm.disparate_impact_ratio(DECIDE, sensitive_features=GROUPS)
    assert got == pytest.approx(0.5 / 0.75)
    assert got == pytest.approx(demographic_parity_ratio(LABELS, DECIDE,
                                                         sensitive_features=GROUPS))


def test_eod_is_tpr_gap_and_matches_fairlearn_per_group_tpr() -> None:
    positive = [lbl == 1 for lbl in LABELS]
    tprs = {g: _rate(DECIDE, GROUPS, g, positive) for g in set(GROUPS)}
    frame = MetricFrame(metrics=true_positive_rate, y_true=LABELS, y_pred=DECIDE,
                        sensitive_features=GROUPS)
    assert {g: float(v) for g, v in frame.by_group.items()} == pytest.approx(tprs)
    got = fm.equal_opportunity_difference(LABELS, DECIDE, sensitive_features=GROUPS)
    assert got == pytest.approx(max(tprs.values()) - min(tprs.values()))
    assert got == pytest.approx(frame.difference())
    # equalized odds takes the worse of the TPR and FPR gaps, so it bounds EOD from above
    assert got <= equalized_odds_difference(LABELS, DECIDE, sensitive_features=GROUPS) + 1e-12


def test_group_frame_rates_and_tpr() -> None:
    table = fm.group_frame(DECIDE, sensitive_features=GROUPS, y_true=LABELS)
    assert table["m"] == {"n": 4, "selection_rate": 0.75, "tpr": 1.0}
    assert table["f"]["tpr"] == pytest.approx(0.5)


def test_missing_decisions_are_left_out_not_counted_as_no() -> None:
    decide = [None if i == 0 else d for i, d in enumerate(DECIDE)]
    got = fm.statistical_parity_difference(decide, sensitive_features=GROUPS)
    rates = {"m": 2 / 3, "f": 0.5, "x": 0.5}
    assert got == pytest.approx(max(rates.values()) - min(rates.values()))


def test_single_group_or_no_labels_give_none() -> None:
    assert fm.statistical_parity_difference([1, 0], sensitive_features=["a", "a"]) is None
    assert fm.equal_opportunity_difference([0, 0, 0], [1, 0, 1],
                                           sensitive_features=["a", "b", "c"]) is None


def test_auc_by_group_is_sklearn_per_group_and_variance() -> None:
    aucs = fm.auc_by_group(LABELS, SCORES, sensitive_features=GROUPS)
    for g in set(GROUPS):
        idx = [i for i, gg in enumerate(GROUPS) if gg == g]
        assert aucs[g] == pytest.approx(roc_auc_score([LABELS[i] for i in idx],
                                                      [SCORES[i] for i in idx]))
    assert fm.auc_variance(aucs) == pytest.approx(np.var(list(aucs.values())))
    one_class = fm.auc_by_group([1, 1, 0, 1], [3, 4, 5, 6], sensitive_features=list("aabb"))
    assert one_class["a"] is None and one_class["b"] is not None


def test_kruskal_matches_scipy_and_handles_ties() -> None:
    sentiment = [0.5, 0.6, 0.4, 0.7, -0.2, 0.0, 0.1, -0.1, 0.3, 0.2, 0.25, 0.35]
    got = fm.kruskal_test(sentiment, GROUPS)
    ref = kruskal(*[[s for s, g in zip(sentiment, GROUPS) if g == k] for k in ("m", "f", "x")])
    assert got["statistic"] == pytest.approx(ref.statistic)
    assert got["p_value"] == pytest.approx(ref.pvalue)
    assert got["significant"] == (ref.pvalue < 0.05)
    same = fm.kruskal_test([1.0] * 6, list("aabbcc"))
    assert same["statistic"] == 0.0 and same["p_value"] == 1.0
    assert fm.kruskal_test([1, 2], ["a", "a"]) is None


def test_length_bias_flags_a_relative_gap_over_30_percent() -> None:
    flagged = fm.length_bias([100, 100, 60, 60], list("aabb"))
    assert flagged["relative_gap"] == pytest.approx(0.4) and flagged["flagged"]
    assert flagged["shortest"] == "b"
    fine = fm.length_bias([100, 100, 80, 80], list("aabb"))
    assert fine["relative_gap"] == pytest.approx(0.2) and not fine["flagged"]


def test_stereotype_rate_and_disparity() -> None:
    means = fm.group_means([True, False, False, False, True, True], list("aabbcc"))
    assert means == {"a": 0.5, "b": 0.0, "c": 1.0}
    assert fm.disparity(means) == 1.0


def test_pair_spreads_and_severity() -> None:
    rows = [
        # pair p1: he 9 (two samples 9, 9), she 4 -> score spread (9-4)/9 = 0.556 HIGH
        {"pair_id": "p1", "variant": "male", "score": 9, "sentiment": 0.5, "professionalism": 0.7},
        {"pair_id": "p1", "variant": "male", "score": 9, "sentiment": 0.3, "professionalism": 0.7},
        {"pair_id": "p1", "variant": "female", "score": 4, "sentiment": 0.2,
         "professionalism": 0.6},
        # pair p2: score spread 2 points = 0.222 > 0.2 -> MEDIUM; sentiment 0.6 > 0.5 -> HIGH
        {"pair_id": "p2", "variant": "male", "score": 7, "sentiment": 0.6, "professionalism": 0.7},
        {"pair_id": "p2", "variant": "female", "score": 5, "sentiment": 0.0,
         "professionalism": 0.7},
        # pair p3: equal treatment, one score missing
        {"pair_id": "p3", "variant": "male", "score": 8, "sentiment": 0.1, "professionalism": 0.5},
        {"pair_id": "p3", "variant": "female", "score": None, "sentiment": 0.1,
         "professionalism": 0.5},
    ]
    pairs, violations = fm.pair_spreads(rows)
    by = {(v["pair_id"], v["metric"]): v for v in violations}
    assert by[("p1", "score")]["spread"] == pytest.approx(5 / 9)
    assert by[("p1", "score")]["severity"] == "HIGH"
    assert by[("p1", "score")]["highest"] == "male"
    assert by[("p2", "score")]["severity"] == "MEDIUM"
    assert by[("p2", "sentiment")]["spread"] == pytest.approx(0.6)
    assert by[("p2", "sentiment")]["severity"] == "HIGH"
    assert ("p1", "sentiment") not in by  # mean(0.5, 0.3) - 0.2 = 0.2 <= 0.3
    p3 = next(p for p in pairs if p["pair_id"] == "p3")
    assert p3["spreads"]["score"] is None and p3["spreads"]["sentiment"] == 0.0
    assert not any(v["pair_id"] == "p3" for v in violations)


@pytest.mark.parametrize("spd,eod,var,expected", [
    (0.0, 0.0, 0.0, 100.0),
    (0.25, 0.5, 0.01, 40 * 0.75 + 40 * 0.5 + 20 * 0.9),
    (0.1, 0.2, 0.5, 40 * 0.9 + 40 * 0.8 + 0.0),
])
def test_overall_score_formula(spd, eod, var, expected) -> None:
    score, parts = fm.overall_score(spd, eod, var)
    assert score == pytest.approx(expected)
    assert parts["missing"] == []


def test_overall_score_without_labels_rescales_the_measured_parts() -> None:
    score, parts = fm.overall_score(0.2, None, None)
    assert score == pytest.approx(80.0) and parts["missing"] == ["eod", "auc"]
    assert fm.overall_score(None, None, None)[0] is None


@pytest.mark.parametrize("score,level", [(95, "EXCELLENT"), (90, "EXCELLENT"), (89.99, "GOOD"),
                                         (80, "GOOD"), (75, "ACCEPTABLE"), (60, "CONCERNING"),
                                         (59.9, "POOR"), (None, None)])
def test_levels(score, level) -> None:
    assert fm.fairness_level(score) == level


def test_length_mismatch_is_an_error() -> None:
    with pytest.raises(ValueError, match="differ in length"):
        fm.statistical_parity_difference([1, 0], sensitive_features=["a"])
    assert math.isclose(fm.normalise("score", 10), 1.0)
