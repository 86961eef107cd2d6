"""The BBQ / CBBQ bias score by option order, by hand: a slot read back to the option it
held, scored with the item's own target and UNKNOWN option; and its CLI lines."""
from __future__ import annotations

import pytest

from evalcore.report.fairness_orders import scores_by_order
from evalcore.report.variants import bias_order_lines, variant_lines


def _row(item_id: int, ambiguous: bool, negative: bool, label: int, target: int,
         unknown: int, pred):  # noqa: ANN001, ANN202
    return {"item_id": item_id, "round": 1, "bias_label": label, "target": target,
            "unknown": unknown, "pred": pred, "bias_category": "", "target_source": "found",
            "context_condition": "ambig" if ambiguous else "disambig",
            "question_polarity": "neg" if negative else "nonneg"}


def test_a_slot_is_read_back_to_the_option_it_held():
    # two negative disambiguated items, target option 2, UNKNOWN option 0, label 1
    base = {1: _row(1, False, True, 1, 2, 0, pred=2), 2: _row(2, False, True, 1, 2, 0, pred=1)}
    picks = [(1, [1, 2, 0], 0), (2, [1, 2, 0], 0),  # slot A holds option 1: non-target
             (1, [2, 0, 1], 0), (2, [2, 0, 1], 1),  # slot A: option 2 (target), B: 0 (unk)
             (1, [2, 0, 1], None)]                  # no option read: no answer
    out = scores_by_order(base, {1: 3, 2: 3}, picks, "bbq")["bias_score_by_order"]
    # original: target (biased) and option 1: s_DIS = 2 * 1/2 - 1 = 0, accuracy 1/2
    assert (out["0,1,2"]["s_dis"], out["0,1,2"]["accuracy"]) == (0.0, 0.5)
    assert (out["1,2,0"]["s_dis"], out["1,2,0"]["accuracy"]) == (-1.0, 1.0)
    # target once, UNKNOWN once, one unread: 1 biased of 1 non-UNKNOWN -> s_DIS = 1
    assert out["2,0,1"]["s_dis"] == 1.0 and out["2,0,1"]["items"] == 3
    assert out["2,0,1"]["accuracy"] == 0.0


def test_cli_lines_say_each_order_and_the_range():
    figures = {"bias_score_by_order": {
        "0,1,2": {"s_amb": 0.25, "s_dis": 0.5, "s_total": None, "accuracy": 0.5, "items": 4},
        "1,2,0": {"s_amb": -0.25, "s_dis": None, "s_total": None, "accuracy": 0.25,
                  "items": 4}},
        "bias_score_range": {"s_amb": [-0.25, 0.25], "s_dis": [0.5, 0.5], "s_total": None,
                             "accuracy": [0.25, 0.5]}}
    lines = bias_order_lines(figures)
    assert lines[1] == "  0,1,2: ambiguous 0.250, disambiguated 0.500, accuracy 0.500 (4 items)"
    assert "disambiguated n/a" in lines[2]
    assert lines[-1] == "  range over the orders: s_amb -0.250 to 0.250, s_dis 0.500 to 0.500"
    assert variant_lines(figures) == lines and bias_order_lines({}) == []


@pytest.mark.parametrize("fmt", ["bbq", "cbbq"])
def test_no_order_asked_is_only_the_original(fmt):
    base = {1: _row(1, True, True, 0, 1, 0, pred=1)}
    out = scores_by_order(base, {1: 3}, [], fmt)
    assert list(out["bias_score_by_order"]) == ["0,1,2"]
    s_amb = out["bias_score_by_order"]["0,1,2"]["s_amb"]
    assert s_amb == 1.0 and out["bias_score_range"]["s_amb"] == [s_amb, s_amb]
    assert out["bias_score_range"]["s_dis"] is None  # no disambiguated item
