"""The review figures, recomputed independently: Krippendorff's alpha against the
`krippendorff` package, kappa against scikit-learn and statsmodels, intervals against
scipy, and groups counted by hand."""
from __future__ import annotations

import math
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalcore.metrics.review import agreement, judge_accuracy, krippendorff_alpha, precision_by

LABELS = ("approve", "reject", "edit")


def _package_alpha(units: list[list[str | None]], reviewers: int) -> float:
    import krippendorff

    codes = {label: n for n, label in enumerate(LABELS)}
    data = np.full((reviewers, len(units)), np.nan)
    for u, labels in enumerate(units):
        for r, label in enumerate(labels):
            if label is not None:
                data[r, u] = codes[label]
    return float(krippendorff.alpha(reliability_data=data, level_of_measurement="nominal"))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.sampled_from((*LABELS, None)), min_size=4, max_size=4),
                min_size=2, max_size=30))
def test_alpha_equals_the_krippendorff_package_with_missing_labels(units) -> None:
    pairable = [[x for x in u if x is not None] for u in units]
    if not any(len(u) >= 2 for u in pairable):
        return
    ours = krippendorff_alpha(pairable)
    if len({x for u in pairable if len(u) >= 2 for x in u}) < 2:
        assert math.isnan(ours)
        return
    assert ours == pytest.approx(_package_alpha(units, 4), abs=1e-9)


def test_two_reviewers_give_cohens_kappa_as_sklearn_and_statsmodels() -> None:
    from sklearn.metrics import cohen_kappa_score
    from statsmodels.stats.inter_rater import cohens_kappa

    rng = random.Random(4)
    first = [rng.choice(LABELS[:2]) for _ in range(50)]
    second = [a if rng.random() < 0.7 else rng.choice(LABELS[:2]) for a in first]
    ratings = {i: {"ann": a, "bob": b} for i, (a, b) in enumerate(zip(first, second))}
    ratings[99] = {"ann": "approve"}  # reviewed once: not a pair
    result = agreement(ratings)
    assert result["method"] == "cohen_kappa" and result["pairs"] == 50
    assert result["value"] == pytest.approx(cohen_kappa_score(first, second))
    table = np.array([[sum(1 for a, b in zip(first, second) if (a, b) == (x, y))
                       for y in LABELS[:2]] for x in LABELS[:2]])
    assert result["value"] == pytest.approx(cohens_kappa(table).kappa)


def test_three_reviewers_give_krippendorffs_alpha() -> None:
    ratings = {1: {"ann": "approve", "bob": "approve"}, 2: {"bob": "reject", "cat": "approve"},
               3: {"ann": "reject", "cat": "reject"}, 4: {"ann": "approve", "cat": "approve"}}
    result = agreement(ratings)
    assert result["method"] == "krippendorff_alpha" and result["pairs"] == 4
    units = [list(r.values()) for r in ratings.values()]
    assert result["value"] == pytest.approx(krippendorff_alpha(units))
    assert agreement({1: {"ann": "approve"}}) == {"method": "none", "value": None, "pairs": 0,
                                                  "reviewers": []}


def test_precision_by_group_is_the_count_by_hand_with_wilson_intervals() -> None:
    from scipy.stats import binomtest

    records = [(["table"], True), (["table", "wordnet"], False), (["wordnet"], True),
               (["wordnet"], True), (["table"], True)]
    result = precision_by(records)
    assert {g: (r["kept"], r["n"]) for g, r in result.items()} == {
        "table": (2, 3), "wordnet": (2, 3)}
    ci = binomtest(2, 3).proportion_ci(method="wilson")
    assert (result["table"]["low"], result["table"]["high"]) == pytest.approx(
        (ci.low, ci.high))


def test_judge_accuracy_confusion_and_kappa_against_sklearn() -> None:
    from sklearn.metrics import cohen_kappa_score, confusion_matrix

    # (judge says correct?, people say the judge is right?)
    pairs = [(True, True)] * 12 + [(True, False)] * 3 + [(False, True)] * 4 + [(False, False)] * 1
    result = judge_accuracy(pairs)
    assert (result["kept"], result["n"]) == (16, 20)
    judge = [j for j, _ in pairs]
    people = [j == right for j, right in pairs]
    (tn, fp), (fn, tp) = confusion_matrix(people, judge, labels=[False, True])
    assert result["confusion"] == {"judge_correct_people_correct": tp,
                                   "judge_correct_people_incorrect": fp,
                                   "judge_incorrect_people_correct": fn,
                                   "judge_incorrect_people_incorrect": tn}
    assert result["kappa"] == pytest.approx(cohen_kappa_score(judge, people))
