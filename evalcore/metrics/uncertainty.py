"""How sure a figure is: question-clustered errors, paired differences and run sizes.

Rounds of one question are not independent draws of the benchmark: a question is a
cluster (Miller, "Adding Error Bars to Evals", 2024). With n questions, question i
answered K_i times and right r_i of them, s_i = r_i / K_i and the accuracy is the mean of
the s_i. Its standard error is the spread of the s_i across questions; the binomial one
over all calls is too small whenever questions differ in difficulty.

- `accuracy_se` = sd(s_i, ddof=1) / sqrt(n). It equals statsmodels' cluster-robust
  standard error of a weighted least squares of the 0/1 verdicts on a constant (weights
  1 / K_i, so every question counts once; plain OLS when every K_i is the same), groups
  by question, with statsmodels' default small-sample correction G / (G - 1)
  (`tests/metrics/test_uncertainty.py` checks it).
- `variance_within` = mean of w_i = s_i (1 - s_i) K_i / (K_i - 1) (0 when K_i = 1), the
  unbiased within-question variance of one verdict; `variance_between` =
  max(0, var(s_i) - variance_within / K) with K the mean K_i; `within_share` =
  (variance_within / K) / var(s_i): the part of the uncertainty more rounds could remove.
- A paired difference of runs A and B over their shared questions: d_i = s_iB - s_iA,
  `diff` = mean(d_i), `diff_se` = sd(d_i, ddof=1) / sqrt(n) (its t statistic is scipy's
  paired t).
- A mean over rows grouped in clusters (an attacked question's pairs, a fairness pair's
  rounds): `clustered_mean`, the cluster-robust standard error
  sqrt(G / (G - 1) * sum_g (sum_{i in g} (x_i - mean))^2) / N over G clusters of N rows,
  which is statsmodels' OLS of the rows on a constant with `cov_type="cluster"` and its
  default small-sample correction (G / (G - 1); the (N - 1) / (N - K) factor is 1 with
  a constant alone).
- A plan: the questions n needed to tell a shift of `effect` at two-sided level alpha
  with the asked power, n = ceil((z_{1-alpha/2} + z_power)^2 V / effect^2), V the variance
  of one question's figure at K' rounds; and the minimum detectable effect at a size.

Intervals are normal (z = 1.96 at 95%), clipped to the figure's range.
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from statistics import NormalDist, fmean, variance
from typing import Any

Counts = tuple[int, int]
"""(right, answered rounds) of one question; questions with no answered round are left out."""

Z95 = NormalDist().inv_cdf(0.975)


def _z(alpha: float) -> float:
    return NormalDist().inv_cdf(1 - alpha / 2)


def _within(right: int, rounds: int) -> float:
    """Unbiased within-question variance of one verdict (0 with a single round)."""
    if rounds < 2:
        return 0.0
    s = right / rounds
    return s * (1 - s) * rounds / (rounds - 1)


def _answered(items: Sequence[Counts]) -> list[Counts]:
    bad = [c for c in items if c[1] < 0 or not 0 <= c[0] <= c[1]]
    if bad:
        raise ValueError(f"counts must be (right, rounds) with 0 <= right <= rounds: {bad[:3]}")
    return [c for c in items if c[1] > 0]


def clustered_accuracy(items: Sequence[Counts], *, alpha: float = 0.05) -> dict[str, Any]:
    """Accuracy over questions with its question-clustered standard error and interval,
    and the split of its variance into within (rounds) and between (questions) parts.
    Figures that need two questions are None with fewer."""
    counts = _answered(items)
    n = len(counts)
    out: dict[str, Any] = {"questions": n, "accuracy": None, "accuracy_se": None,
                           "accuracy_ci": None, "variance_within": None,
                           "variance_between": None, "within_share": None,
                           "rounds_mean": None}
    if not n:
        return out
    rates = [r / k for r, k in counts]
    mean_rounds = fmean(k for _, k in counts)
    within = fmean(_within(r, k) for r, k in counts)
    out.update(accuracy=fmean(rates), variance_within=within, rounds_mean=mean_rounds)
    if n < 2:
        return out
    total = variance(rates)
    se = math.sqrt(total / n)
    z = _z(alpha)
    out.update(accuracy_se=se,
               accuracy_ci=[max(0.0, out["accuracy"] - z * se),
                            min(1.0, out["accuracy"] + z * se)],
               variance_between=max(0.0, total - within / mean_rounds),
               within_share=(min(1.0, (within / mean_rounds) / total) if total > 0 else None))
    return out


def paired_difference(a: Mapping[Any, Counts], b: Mapping[Any, Counts], *,
                      alpha: float = 0.05) -> dict[str, Any]:
    """B minus A on the questions both answered: the mean of the per-question differences
    with its standard error and interval, the share of questions that moved, and what a
    plan needs (the variance of the differences and each run's within variance)."""
    shared = [q for q in a if q in b and a[q][1] > 0 and b[q][1] > 0]
    _answered([a[q] for q in shared] + [b[q] for q in shared])
    diffs = [b[q][0] / b[q][1] - a[q][0] / a[q][1] for q in shared]
    n = len(diffs)
    out: dict[str, Any] = {"n": n, "diff": None, "diff_se": None, "diff_ci": None,
                           "moved": None, "variance_diff": None,
                           "variance_within_a": None, "variance_within_b": None,
                           "rounds_a": None, "rounds_b": None}
    if not n:
        return out
    out.update(diff=fmean(diffs), moved=sum(1 for d in diffs if d != 0) / n,
               variance_within_a=fmean(_within(*a[q]) for q in shared),
               variance_within_b=fmean(_within(*b[q]) for q in shared),
               rounds_a=fmean(a[q][1] for q in shared), rounds_b=fmean(b[q][1] for q in shared))
    if n < 2:
        return out
    var_d = variance(diffs)
    se = math.sqrt(var_d / n)
    z = _z(alpha)
    out.update(variance_diff=var_d, diff_se=se,
               diff_ci=[max(-1.0, out["diff"] - z * se), min(1.0, out["diff"] + z * se)])
    return out


def clustered_mean(values: Sequence[float], clusters: Sequence[Any], *, alpha: float = 0.05,
                   bounds: tuple[float, float] | None = None) -> dict[str, Any]:
    """The mean of `values` with its cluster-robust standard error and interval, rows of
    one cluster (the same question, pair or template) counting as one draw. `bounds`
    clips the interval to the figure's range. `se` and `ci` are None with fewer than two
    clusters: one cluster says nothing about the spread between them."""
    if len(values) != len(clusters):
        raise ValueError(f"{len(values)} values but {len(clusters)} cluster labels")
    n = len(values)
    sums: dict[Any, float] = {}
    out: dict[str, Any] = {"mean": None, "se": None, "ci": None, "n": n, "clusters": 0}
    if not n:
        return out
    mean = math.fsum(values) / n
    for value, cluster in zip(values, clusters):
        sums[cluster] = sums.get(cluster, 0.0) + (value - mean)
    g = len(sums)
    out.update(mean=mean, clusters=g)
    if g < 2:
        return out
    se = math.sqrt(g / (g - 1) * math.fsum(u * u for u in sums.values())) / n
    low, high = mean - _z(alpha) * se, mean + _z(alpha) * se
    if bounds is not None:
        low, high = max(bounds[0], low), min(bounds[1], high)
    out.update(se=se, ci=[low, high])
    return out


def one_run_variance(figures: Mapping[str, Any], rounds: float) -> float:
    """Variance of one question's rate at `rounds` rounds: between + within / rounds."""
    return figures["variance_between"] + figures["variance_within"] / rounds


def paired_variance(paired: Mapping[str, Any], rounds: float) -> float:
    """Variance of one question's difference rescaled to `rounds` rounds in both runs:
    var(d) minus the within parts at the runs' own rounds plus them at `rounds`, floored
    at the within part (rounds cannot remove more than they add)."""
    wa, wb = paired["variance_within_a"], paired["variance_within_b"]
    rescaled = (paired["variance_diff"] - (wa / paired["rounds_a"] + wb / paired["rounds_b"])
                + (wa + wb) / rounds)
    return max(rescaled, (wa + wb) / rounds)


def questions_needed(var: float, effect: float, *, power: float = 0.8,
                     alpha: float = 0.05) -> int:
    """Questions for a two-sided test at `alpha` to detect `effect` with `power`, when one
    question's figure has variance `var`."""
    if effect <= 0:
        raise ValueError(f"effect must be above 0, got {effect}")
    if not 0 < power < 1 or not 0 < alpha < 1:
        raise ValueError(f"power and alpha must lie in (0, 1), got {power}, {alpha}")
    z = _z(alpha) + NormalDist().inv_cdf(power)
    return max(2, math.ceil(z * z * var / (effect * effect)))


def detectable_effect(var: float, questions: int, *, power: float = 0.8,
                      alpha: float = 0.05) -> float | None:
    """The smallest effect a run of `questions` detects with `power` (None below two)."""
    if questions < 2:
        return None
    return (_z(alpha) + NormalDist().inv_cdf(power)) * math.sqrt(var / questions)


def se_words(figures: Mapping[str, Any]) -> str | None:
    """'+/-3.1 points (95%); more rounds could remove 12% of this, more questions the
    rest.' for a reader who is no statistician; None without an interval."""
    se, share = figures.get("accuracy_se"), figures.get("within_share")
    if se is None:
        return None
    text = f"+/-{Z95 * se * 100:.1f} points (95%)"
    if share is None:
        return text + "."
    return (text + f"; more rounds could remove {share:.0%} of this, "
            "more questions the rest.")


def diff_words(paired: Mapping[str, Any], name_a: str = "A", name_b: str = "B") -> str | None:
    """'B is 2.0 points better, 95% CI -3.1 to 7.1: not distinguishable at this size.'"""
    diff, ci = paired.get("diff"), paired.get("diff_ci")
    if diff is None or ci is None:
        return None
    side = "better" if diff > 0 else "worse" if diff < 0 else "no different"
    head = (f"{name_b} is {abs(diff) * 100:.1f} points {side} than {name_a}" if diff
            else f"{name_b} is no different from {name_a}")
    low, high = ci[0] * 100, ci[1] * 100
    verdict = ("not distinguishable at this size" if low <= 0 <= high
               else "a real difference at 95%")
    return f"{head}, 95% CI {low:.1f} to {high:.1f}: {verdict}."
