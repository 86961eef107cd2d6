"""Option-order and template figures against hand counts, scipy and statsmodels."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalcore.metrics.positions import (circular_accuracy, mcnemar, position_bias,
                                        slot_followers, slot_label, template_figures)


def test_circular_accuracy_counts_an_item_right_only_under_every_order() -> None:
    got = circular_accuracy({1: [True, True, True], 2: [True, False, True],
                             3: [False, None, False], 4: [None, None]})
    assert got["circular_accuracy"] == pytest.approx(1 / 3) and got["circular_items"] == 3
    assert got["plain_accuracy"] == pytest.approx(2 / 3)  # first order: T, T, F
    assert got["circular_ci"][0] < 1 / 3 < got["circular_ci"][1]


def test_position_bias_shares_and_chi_square_match_scipy() -> None:
    from scipy.stats import chisquare

    chosen = [0, 0, 0, 0, 1, 2, 0, 3]
    right = [0, 1, 2, 3, 1, 2, 3, 0]
    table, p = position_bias(chosen, right, 4)
    assert table["choice 0"] == {"chosen": 5 / 8, "right": 2 / 8}
    assert table["choice 3"] == {"chosen": 1 / 8, "right": 2 / 8}
    assert p == pytest.approx(chisquare([5, 1, 1, 1], [2, 2, 2, 2]).pvalue)
    assert position_bias([None, None], [0, 1], 2)[1] is None  # nothing chosen: no test


@settings(max_examples=200, deadline=None)
@given(st.integers(2, 6).flatmap(lambda n: st.tuples(st.just(n), st.lists(
    st.tuples(st.one_of(st.none(), st.integers(0, n - 1)), st.integers(0, n - 1)),
    min_size=1, max_size=60))))
def test_position_bias_of_any_answers_stays_a_distribution(data) -> None:
    n, pairs = data
    table, p = position_bias([c for c, _ in pairs], [r for _, r in pairs], n)
    answered = sum(c is not None for c, _ in pairs)
    if answered:
        assert sum(v["chosen"] for v in table.values()) == pytest.approx(1)
        assert sum(v["right"] for v in table.values()) == pytest.approx(1)
    assert p is None or 0 <= p <= 1
    assert list(table) == [slot_label(i) for i in range(n)]


def test_slot_followers_need_one_slot_in_every_order() -> None:
    assert slot_followers({1: [0, 0, 0], 2: [0, 1, 0], 3: [2], 4: [1, None]}) == [1]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.booleans()), min_size=1, max_size=80))
def test_mcnemar_equals_statsmodels_exact(pairs) -> None:
    from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar

    a, b = [x for x, _ in pairs], [y for _, y in pairs]
    got = mcnemar(a, b)
    table = [[sum(x and y for x, y in pairs), sum(x and not y for x, y in pairs)],
             [sum(y and not x for x, y in pairs), sum(not x and not y for x, y in pairs)]]
    assert (got["b"], got["c"]) == (table[0][1], table[1][0])
    if got["b"] + got["c"]:
        assert got["p"] == pytest.approx(min(1.0, sm_mcnemar(table, exact=True).pvalue))


def test_template_figures_name_the_worst_and_the_spread() -> None:
    got = template_figures({"zero": [True, True, False, True], "few": [True, True, True, True],
                            "mine": [False, False, False, None]})
    assert got["template_accuracy"] == {"zero": 0.75, "few": 1.0, "mine": 0.0}
    assert got["worst_template"] == "mine" and got["best_template"] == "few"
    assert got["template_spread"] == 1.0
    assert (got["template_mcnemar"]["b"], got["template_mcnemar"]["c"]) == (3, 0)
    assert got["template_mcnemar"]["paired_items"] == 3


@pytest.mark.parametrize("verdicts,worst,best", [
    ({"zero": [False, False], "few": [False, False]}, None, None),  # both 0%: neither worse
    ({"zero": [True, False], "few": [True, False], "mine": [True, True]}, None, "mine"),
])
def test_a_tied_worst_template_is_not_named(verdicts, worst, best) -> None:
    got = template_figures(verdicts)
    assert (got["worst_template"], got["best_template"]) == (worst, best)
    assert got["template_mcnemar"] is None


def test_a_model_often_wrong_is_not_biased_towards_slots_that_never_held_the_answer() -> None:
    """Eight reads of BBQ items (the walk of 2026-11-27): the right option sat on A five
    times and C three times, never on B. A model right 3 of 8 times whose wrong answers
    spread over the other slots is what the null expects; testing its choices against the
    right-answer counts alone gave p = 0 (B "impossible")."""
    from scipy.stats import chisquare

    right = [0, 0, 0, 0, 0, 2, 2, 2]
    chosen = [0, 2, 1, 1, 2, 2, 2, 1]  # right at reads 0, 5, 6: acc = 3/8
    table, p = position_bias(chosen, right, 3)
    acc = 3 / 8
    expected = [acc * 5 + (1 - acc) * 3 / 2, (1 - acc) * 8 / 2, acc * 3 + (1 - acc) * 5 / 2]
    assert table["choice 1"] == {"chosen": 3 / 8, "right": 0.0}
    assert p == pytest.approx(chisquare([1, 3, 4], expected).pvalue)
    assert p > 0.05


def test_slot_bias_is_found_and_a_perfect_model_is_not_biased() -> None:
    right = [0] * 12 + [1] * 4 + [2] * 4  # unbalanced, as a dataset's answer key can be
    assert position_bias(right, right, 3)[1] == pytest.approx(1.0)
    always_c = [2] * 20  # right only where the answer is C
    assert position_bias(always_c, right, 3)[1] < 1e-4
