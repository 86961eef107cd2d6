"""Question-clustered errors, paired differences and run plans, checked against
statsmodels and scipy, and by simulation of planted models."""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from evalcore.metrics.uncertainty import (
    clustered_accuracy,
    detectable_effect,
    diff_words,
    one_run_variance,
    paired_difference,
    paired_variance,
    questions_needed,
    se_words,
)


def _verdicts(counts):
    y, groups = [], []
    for q, (right, rounds) in enumerate(counts):
        y += [1] * right + [0] * (rounds - right)
        groups += [q] * rounds
    return np.array(y, dtype=float), np.array(groups)


@pytest.mark.parametrize("equal", [True, False])
def test_the_clustered_se_is_statsmodels_cluster_robust_se(equal: bool) -> None:
    import statsmodels.api as sm

    rng = np.random.default_rng(3)
    rounds = np.full(40, 5) if equal else rng.integers(1, 9, size=40)
    rates = rng.beta(2, 2, size=40)
    counts = [(int(rng.binomial(k, p)), int(k)) for k, p in zip(rounds, rates)]
    figures = clustered_accuracy(counts)
    y, groups = _verdicts(counts)
    weights = 1 / np.array([counts[g][1] for g in groups])  # every question counts once
    fit = sm.WLS(y, np.ones_like(y), weights=weights).fit(
        cov_type="cluster", cov_kwds={"groups": groups})  # default correction G/(G-1)
    assert figures["accuracy"] == pytest.approx(fit.params[0])
    assert figures["accuracy_se"] == pytest.approx(fit.bse[0], rel=1e-9)
    if equal:  # the same as plain OLS on the calls
        ols = sm.OLS(y, np.ones_like(y)).fit(cov_type="cluster", cov_kwds={"groups": groups})
        assert figures["accuracy_se"] == pytest.approx(ols.bse[0], rel=1e-9)
    low, high = figures["accuracy_ci"]
    assert low == pytest.approx(max(0, fit.params[0] - 1.959964 * fit.bse[0]), abs=1e-6)
    assert high == pytest.approx(min(1, fit.params[0] + 1.959964 * fit.bse[0]), abs=1e-6)


def test_the_variance_split_by_hand() -> None:
    counts = [(3, 4), (1, 4), (4, 4), (0, 4)]
    f = clustered_accuracy(counts)
    rates = [0.75, 0.25, 1.0, 0.0]
    within = np.mean([s * (1 - s) * 4 / 3 for s in rates])
    assert f["variance_within"] == pytest.approx(within)
    assert f["variance_between"] == pytest.approx(max(0, np.var(rates, ddof=1) - within / 4))
    assert f["within_share"] == pytest.approx((within / 4) / np.var(rates, ddof=1))
    assert f["accuracy_ci"][0] >= 0 and f["accuracy_ci"][1] <= 1
    assert "more rounds could remove" in se_words(f)


def test_edge_cases_have_no_interval_rather_than_a_wrong_one() -> None:
    assert clustered_accuracy([])["accuracy"] is None
    one = clustered_accuracy([(2, 3)])
    assert one["accuracy"] == pytest.approx(2 / 3) and one["accuracy_se"] is None
    assert clustered_accuracy([(0, 0), (1, 1), (0, 1)])["questions"] == 2  # unanswered left out
    same = clustered_accuracy([(2, 2), (2, 2)])  # no spread at all
    assert same["accuracy_se"] == 0 and same["within_share"] is None
    with pytest.raises(ValueError, match="right <= rounds"):
        clustered_accuracy([(3, 2)])


def test_the_paired_difference_is_scipys_paired_t() -> None:
    rng = np.random.default_rng(11)
    a = {q: (int(rng.binomial(5, 0.6)), 5) for q in range(60)}
    b = {q: (int(rng.binomial(5, 0.7)), 5) for q in range(10, 70)}  # 50 shared
    paired = paired_difference(a, b)
    shared = sorted(set(a) & set(b))
    sa = [a[q][0] / 5 for q in shared]
    sb = [b[q][0] / 5 for q in shared]
    t = stats.ttest_rel(sb, sa)
    assert paired["n"] == 50
    assert paired["diff"] == pytest.approx(np.mean(np.subtract(sb, sa)))
    assert paired["diff"] / paired["diff_se"] == pytest.approx(t.statistic)
    assert paired["moved"] == pytest.approx(np.mean(np.subtract(sb, sa) != 0))
    assert "95% CI" in diff_words(paired, "run 1", "run 2")


def test_the_plan_is_statsmodels_power_solution() -> None:
    from statsmodels.stats.power import NormalIndPower

    for var, effect, power in ((0.09, 0.05, 0.8), (0.04, 0.02, 0.9), (0.2, 0.1, 0.5)):
        ours = questions_needed(var, effect, power=power)
        theirs = NormalIndPower().solve_power(effect_size=effect / math.sqrt(var),
                                              alpha=0.05, power=power, ratio=0)
        assert ours == math.ceil(theirs) or ours == math.ceil(theirs) + 1  # the far tail
        mde = detectable_effect(var, ours, power=power)
        assert mde <= effect and detectable_effect(var, ours - 1, power=power) > effect * 0.99


def test_rounds_rescale_only_the_within_part() -> None:
    f = {"variance_between": 0.05, "variance_within": 0.2}
    assert one_run_variance(f, 4) == pytest.approx(0.1)
    paired = {"variance_diff": 0.08, "variance_within_a": 0.2, "variance_within_b": 0.2,
              "rounds_a": 5, "rounds_b": 5}
    assert paired_variance(paired, 5) == pytest.approx(0.08)
    assert paired_variance(paired, 20) == pytest.approx(0.08 - 0.08 + 0.02)
    low = {**paired, "variance_diff": 0.01}  # var(d) below the within part: floored
    assert paired_variance(low, 5) == pytest.approx(0.08)


def _population(rng, n_runs: int, n: int, rounds: int, a: float, b: float):
    """Runs of a planted model: each run a sample of n questions from a population whose
    question rates are Beta(a, b), each asked `rounds` times. Returns (right, rates)."""
    p = rng.beta(a, b, size=(n_runs, n))
    return rng.binomial(rounds, p), p


def test_the_clustered_interval_covers_where_the_binomial_one_does_not() -> None:
    rng = np.random.default_rng(2024)
    runs, n, k, a, b = 2000, 100, 5, 1.2, 0.8  # heterogeneous: many easy, some hard
    truth = a / (a + b)
    right, _ = _population(rng, runs, n, k, a, b)
    s = right / k
    mean = s.mean(axis=1)
    se = s.std(axis=1, ddof=1) / math.sqrt(n)  # as clustered_accuracy, vectorised
    covered = np.mean(np.abs(mean - truth) <= 1.959964 * se)
    naive_se = np.sqrt(mean * (1 - mean) / (n * k))  # every call independent
    naive = np.mean(np.abs(mean - truth) <= 1.959964 * naive_se)
    assert 0.93 <= covered <= 0.97, covered
    assert naive < covered - 0.1, (naive, covered)
    one = clustered_accuracy([(int(r), k) for r in right[0]])
    assert one["accuracy_se"] == pytest.approx(se[0])


def test_the_planned_size_reaches_the_asked_power() -> None:
    rng = np.random.default_rng(7)
    a, b, k, effect = 3.0, 2.0, 4, 0.04
    truth = a / (a + b)
    between = a * b / ((a + b) ** 2 * (a + b + 1))  # Beta variance
    within = truth - (between + truth ** 2)  # E[p (1 - p)]
    n = questions_needed(between + within / k, effect, power=0.8)
    assert 100 < n < 2000
    right, _ = _population(rng, 2000, n, k, a, b)
    s = right / k
    z = (s.mean(axis=1) - (truth - effect)) / (s.std(axis=1, ddof=1) / math.sqrt(n))
    power = np.mean(np.abs(z) > 1.959964)
    assert abs(power - 0.8) <= 0.03, (n, power)


@pytest.mark.parametrize("sizes", [(1, 1, 1, 1, 1, 1), (3, 1, 4, 2, 5, 2, 1, 6)])
def test_the_clustered_mean_is_statsmodels_ols_cluster_se(sizes) -> None:
    import statsmodels.api as sm

    from evalcore.metrics.uncertainty import clustered_mean

    rng = np.random.default_rng(11)
    groups = np.repeat(np.arange(len(sizes)), sizes)
    level = rng.normal(size=len(sizes))[groups]  # rows of one cluster share a level
    y = level + rng.normal(scale=0.5, size=len(groups))
    got = clustered_mean(list(y), list(groups))
    fit = sm.OLS(y, np.ones_like(y)).fit(cov_type="cluster", cov_kwds={"groups": groups})
    assert got["mean"] == pytest.approx(fit.params[0])
    assert got["se"] == pytest.approx(fit.bse[0], rel=1e-9)  # with its G / (G - 1)
    assert got["clusters"] == len(sizes) and got["n"] == len(y)
    low, high = fit.conf_int(alpha=0.05)[0]
    # statsmodels' interval for a cluster fit uses the normal quantile too
    assert got["ci"] == pytest.approx([low, high], rel=1e-6)
    if len(set(sizes)) == 1:  # one row a cluster: the plain standard error of the mean
        assert got["se"] == pytest.approx(stats.sem(y))


def test_the_clustered_mean_needs_two_clusters_and_clips_to_bounds() -> None:
    from evalcore.metrics.uncertainty import clustered_mean

    one = clustered_mean([0.2, 0.4, 0.9], ["a", "a", "a"])
    assert one["mean"] == pytest.approx(0.5) and one["se"] is None and one["ci"] is None
    assert clustered_mean([], [])["mean"] is None
    clipped = clustered_mean([1.0, 1.0, 0.0, 1.0], [1, 2, 3, 4], bounds=(0.0, 1.0))
    assert clipped["ci"][1] == 1.0 and clipped["ci"][0] < 0.75
    with pytest.raises(ValueError, match="cluster labels"):
        clustered_mean([1.0], [1, 2])
