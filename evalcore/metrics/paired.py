"""The paired test of two runs' per-question success rates (compare, the Results page).

scipy's Wilcoxon signed-rank test on (rate B, rate A), two-sided, `method="auto"` (exact
or permutation p-value for small samples, normal approximation for large ones). Zero
handling: `zero_method="wilcox"`, the classic rule and scipy's default: questions whose
rate did not change say nothing about which run is better and are dropped; `n_changed`
says how many pairs remained. With no changed question there is no test (`None`, with
the reason).
"""
from __future__ import annotations

from typing import Any, Sequence

from evalcore.metrics.robustness import exact_rate, paired_rate_test

ZERO_METHOD = "wilcox"
"""Wilcoxon zero handling: unchanged questions are dropped (see the module doc)."""


def paired_test(rates_a: Sequence[float], rates_b: Sequence[float]) -> dict[str, Any]:
    """Wilcoxon signed-rank test of B against A on paired per-question rates: the same
    test as robustness (`metrics.robustness.paired_rate_test`), unchanged pairs dropped."""
    diffs = [exact_rate(b) - exact_rate(a) for a, b in zip(rates_a, rates_b)]
    changed = sum(1 for d in diffs if d != 0)
    out: dict[str, Any] = {"name": "wilcoxon signed-rank", "alternative": "two-sided",
                           "zero_method": ZERO_METHOD, "method": None, "n_pairs": len(diffs),
                           "n_changed": changed, "n_better_b": sum(1 for d in diffs if d > 0),
                           "n_better_a": sum(1 for d in diffs if d < 0),
                           "mean_delta": float(sum(diffs) / len(diffs)) if diffs else None,
                           "statistic": None, "p_value": None, "reason": None}
    if not diffs:
        out["reason"] = "no question is in both runs"
    elif changed == 0:
        out["reason"] = "no question's success rate changed"
    else:
        result = paired_rate_test(list(rates_b), list(rates_a))
        out.update(statistic=result.statistic, p_value=result.p_value, method=result.method)
    return out
