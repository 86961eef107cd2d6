"""Figures and verdict rows of a fairness report (plotly, no streamlit)."""
from __future__ import annotations

import pytest

from evalcore.metrics.gate import evaluate_gate
from evalcore.report.fairness_charts import (box_by_group, gate_table, group_table,
                                              selection_rate_figure)

REPORT = {
    "rows": [
        {"attributes": {"gender": "male", "age_group": "young"}, "score": 9.0, "sentiment": 0.5,
         "length": 20},
        {"attributes": {"gender": "male", "age_group": "older"}, "score": 7.0, "sentiment": 0.4,
         "length": 18},
        {"attributes": {"gender": "female", "age_group": "young"}, "score": 5.0,
         "sentiment": 0.1, "length": 9},
        {"attributes": {"gender": "female", "age_group": "older"}, "score": None,
         "sentiment": 0.0, "length": 4},
    ],
    "attributes": {"gender": {"spd": 0.5, "groups": [
        {"group": "male", "selection_rate": 1.0, "auc": None},
        {"group": "female", "selection_rate": 0.5, "auc": None}]}},
}


def test_box_has_one_box_per_group_with_its_values() -> None:
    fig = box_by_group(REPORT, "score", "gender")
    assert [t.name for t in fig.data] == ["male", "female"]
    assert list(fig.data[0].y) == [9.0, 7.0] and list(fig.data[1].y) == [5.0]  # None left out
    inter = box_by_group(REPORT, "length", "gender×age_group")
    assert [t.name for t in inter.data] == ["male×young", "male×older", "female×young",
                                            "female×older"]
    with pytest.raises(ValueError, match="unknown metric"):
        box_by_group(REPORT, "height", "gender")


def test_selection_rate_and_group_table() -> None:
    fig = selection_rate_figure(REPORT, "gender")
    assert list(fig.data[0].y) == [1.0, 0.5] and "SPD 0.500" in fig.layout.title.text
    assert group_table(REPORT, "gender")[1]["group"] == "female"


def test_gate_table_rows() -> None:
    result = evaluate_gate({"spd": 0.2}, "[absolute]\nspd_max = 0.05\n")
    rows = gate_table(result)
    assert rows == [{"check": "spd_max", "result": "fail", "value": 0.2, "threshold": 0.05,
                     "detail": rows[0]["detail"]}]


def test_effects_figure_draws_tested_effects_strongest_on_top() -> None:
    from evalcore.report.fairness_charts import effects_figure

    report = {"effects": [
        {"attribute": "gender", "metric": "score", "group": "male", "rank_biserial": 1.0,
         "significant": True, "tested": True, "median_difference": 1.0, "p_adjusted": 0.001,
         "n_pairs": 20},
        {"attribute": "gender", "metric": "sentiment", "group": "female",
         "rank_biserial": -0.2, "significant": False, "tested": True,
         "median_difference": -0.05, "p_adjusted": 0.6, "n_pairs": 20},
        {"attribute": "gender", "metric": "length_net", "group": "male", "rank_biserial": None,
         "significant": False, "tested": False, "median_difference": 3.0, "p_adjusted": None,
         "n_pairs": 4}]}
    bar = effects_figure(report).data[0]
    assert list(bar.y) == ["gender · sentiment · female", "gender · score · male"]
    assert list(bar.x) == [-0.2, 1.0]
    assert list(bar.marker.color) == ["#bbbbbb", "#d73027"]
