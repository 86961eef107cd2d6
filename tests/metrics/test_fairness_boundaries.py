"""Figures that equal a threshold exactly, noise that must not look significant, NaN groups."""
from __future__ import annotations

import math

import pytest

from evalcore.metrics import fairness as fm


def test_spd_from_counts_is_exact_and_agrees_with_fairlearn() -> None:
    from fairlearn.metrics import demographic_parity_difference, demographic_parity_ratio

    pred = [1] * 4 + [0] * 16 + [1] * 3 + [0] * 17
    groups = ["a"] * 20 + ["b"] * 20
    assert 4 / 20 - 3 / 20 != 0.05
    assert fm.statistical_parity_difference(pred, sensitive_features=groups) == 0.05
    assert fm.statistical_parity_difference(pred, sensitive_features=groups) == pytest.approx(
        demographic_parity_difference(pred, pred, sensitive_features=groups))
    assert fm.disparate_impact_ratio(pred, sensitive_features=groups) == pytest.approx(
        demographic_parity_ratio(pred, pred, sensitive_features=groups))


def test_eod_agrees_with_fairlearn() -> None:
    from fairlearn.metrics import equal_opportunity_difference

    true = [1, 1, 0, 1, 1, 1, 0, 0]
    pred = [1, 0, 1, 1, 1, 1, 0, 1]
    groups = list("aaaabbbb")
    assert fm.equal_opportunity_difference(true, pred, sensitive_features=groups) == \
        pytest.approx(equal_opportunity_difference(true, pred, sensitive_features=groups))


def test_group_table_counts_every_decision_like_spd() -> None:
    pred = [1, 0, 1, 1, 0, 0]
    labels = [1, None, None, 1, 0, None]
    groups = list("aaabbb")
    frame = fm.group_frame(pred, sensitive_features=groups, y_true=labels)
    assert frame["a"]["n"] == 3 and frame["a"]["selection_rate"] == pytest.approx(2 / 3)
    assert frame["a"]["tpr"] == 1.0 and frame["b"]["tpr"] == 1.0
    spd = fm.statistical_parity_difference(pred, sensitive_features=groups)
    assert spd == pytest.approx(frame["a"]["selection_rate"] - frame["b"]["selection_rate"])


def test_spreads_of_exactly_the_threshold_are_no_violation_in_any_pair() -> None:
    rows = []
    for pair, (x, y) in enumerate([(0.1, 0.3), (0.7, 0.9), (0.0, 0.3), (0.4, 0.7)]):
        metric = "professionalism" if pair < 2 else "sentiment"
        rows += [{"pair_id": str(pair), "variant": "a", metric: x},
                 {"pair_id": str(pair), "variant": "b", metric: y}]
    assert 0.3 - 0.1 != 0.2 or 0.9 - 0.7 != 0.2  # the float noise is real
    _, violations = fm.pair_spreads(rows)
    assert violations == []


def test_length_gap_of_exactly_30_percent_is_not_flagged() -> None:
    out = fm.length_bias([100, 70], ["a", "b"])
    assert out["relative_gap"] == pytest.approx(0.3) and not out["flagged"]
    assert fm.length_bias([100, 69], ["a", "b"])["flagged"]


def test_overall_score_caps_spd_and_levels_survive_float_noise() -> None:
    score, parts = fm.overall_score(1.5, 0.0, 0.0)
    assert score == pytest.approx(60.0) and parts["parts"]["spd"] == 0.0
    assert fm.fairness_level(69.99999999999999) == "ACCEPTABLE"
    assert fm.fairness_level(59.99999999999999) == "CONCERNING"
    assert fm.fairness_level(69.9) == "CONCERNING"


def test_kruskal_on_zero_but_noise_is_not_significant() -> None:
    values = [0.0, -1.4e-17, 1.4e-17, 0.0] * 6
    groups = ["a", "b"] * 12
    out = fm.kruskal_test(values, groups)
    assert out["p_value"] == 1.0 and not out["significant"]


def test_pair_centred_values_of_equal_pairs_are_exact_zeros() -> None:
    from evalcore.report.fairness import _pair_centred

    rows = [{"pair_id": p, "sentiment": v} for p in range(12) for v in (0.1 + 0.2, 0.3)]
    assert set(_pair_centred(rows, "sentiment")) == {0.0}


def test_nan_group_labels_are_missing_everywhere() -> None:
    nan = float("nan")
    groups = ["a", "b", nan, "a", "b", nan]
    pred = [1, 0, 1, 1, 0, 0]
    assert fm.statistical_parity_difference(pred, sensitive_features=groups) == 1.0
    assert set(fm.kruskal_test([1, 2, 3, 4, 5, 6], groups)["groups"]) == {"a", "b"}
    aucs = fm.auc_by_group([1, 0, 1, 0, 1, 0], [0.9, 0.2, 0.5, 0.1, 0.8, 0.3],
                           sensitive_features=groups)
    assert "nan" not in aucs and set(aucs) == {"a", "b"}
    assert "nan" not in fm.group_means([1, 2, 3, 4, 5, 6], groups)


def test_auc_variance_is_the_population_variance() -> None:
    import statistics

    aucs = {"a": 0.6, "b": 0.8, "c": 0.7}
    assert fm.auc_variance(aucs) == pytest.approx(statistics.pvariance(aucs.values()))
    assert not math.isclose(fm.auc_variance(aucs), statistics.variance(aucs.values()))
