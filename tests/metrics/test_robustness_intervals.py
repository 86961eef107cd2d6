"""Clean vs attacked accuracy with clustered intervals and their paired difference,
checked against statsmodels (cluster-robust OLS on the calls) and scipy (paired t)."""
from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from evalcore.metrics.robustness import PairedOutcome, robustness_summary
from evalcore.metrics.robustness_intervals import clean_vs_attacked, drop_words


def _pairs(rng, n_questions=30, versions=(1, 2, 3), rounds=4):
    """Questions of different difficulty, each attacked 1-3 times (one pair per version)."""
    pairs, clusters = [], []
    for q in range(n_questions):
        p = rng.beta(2, 2)
        clean = [bool(v) for v in rng.binomial(1, p, size=rounds)]
        for v in range(int(rng.choice(versions))):
            attacked = [bool(x) for x in rng.binomial(1, max(0.0, p - 0.15), size=rounds)]
            pairs.append(PairedOutcome(f"{q}.{v}", clean, attacked))
            clusters.append(q)
    return pairs, clusters


def _calls(pairs, clusters, side):
    y, groups = [], []
    for pair, cluster in zip(pairs, clusters):
        verdicts = getattr(pair, side)
        y += [float(bool(v)) for v in verdicts]
        groups += [cluster] * len(verdicts)
    return np.array(y), np.array(groups)


def test_accuracies_and_the_difference_are_statsmodels_cluster_fits() -> None:
    import statsmodels.api as sm

    pairs, clusters = _pairs(np.random.default_rng(5))
    got = clean_vs_attacked(pairs, clusters)
    summary = robustness_summary(pairs)
    for side in ("clean", "attacked"):
        y, groups = _calls(pairs, clusters, side)
        fit = sm.OLS(y, np.ones_like(y)).fit(cov_type="cluster", cov_kwds={"groups": groups})
        assert got[side]["accuracy"] == pytest.approx(fit.params[0])
        assert got[side]["accuracy_se"] == pytest.approx(fit.bse[0], rel=1e-9)
        assert got[side]["accuracy"] == pytest.approx(getattr(summary, f"accuracy_{side}"))
    yc, groups = _calls(pairs, clusters, "clean")
    ya, _ = _calls(pairs, clusters, "attacked")
    fit = sm.OLS(ya - yc, np.ones_like(yc)).fit(cov_type="cluster", cov_kwds={"groups": groups})
    paired = got["paired"]
    assert paired["diff"] == pytest.approx(fit.params[0])
    assert paired["diff"] == pytest.approx(summary.accuracy_attacked - summary.accuracy_clean)
    assert paired["diff_se"] == pytest.approx(fit.bse[0], rel=1e-9)
    assert paired["n"] == len(pairs) and paired["clusters"] == 30
    moved = np.mean([p.clean_rate != p.attacked_rate for p in pairs])
    assert paired["moved"] == pytest.approx(moved)


def test_one_pair_a_question_gives_scipys_paired_t() -> None:
    pairs, clusters = _pairs(np.random.default_rng(8), versions=(1,))
    paired = clean_vs_attacked(pairs, clusters)["paired"]
    t = stats.ttest_rel([p.attacked_rate for p in pairs], [p.clean_rate for p in pairs])
    assert paired["diff"] / paired["diff_se"] == pytest.approx(t.statistic, rel=1e-9)
    assert clean_vs_attacked(pairs)["paired"] == paired  # each pair its own cluster


def test_clustering_by_question_widens_the_interval_of_repeated_versions() -> None:
    """Three versions of a question share its difficulty: treating them as independent
    pairs would understate the error of the clean accuracy (copies of one clean row)."""
    pairs, clusters = _pairs(np.random.default_rng(2), versions=(3,))
    by_question = clean_vs_attacked(pairs, clusters)["clean"]["accuracy_se"]
    by_pair = clean_vs_attacked(pairs)["clean"]["accuracy_se"]
    assert by_question > 1.5 * by_pair


@pytest.mark.parametrize("diff, ci, expected", [
    (-0.06, [-0.099, -0.021], ("Attacked questions score 6.0 points lower, 95% CI 2.1 to "
                               "9.9: a real drop at 95%; 40% of the questions moved.")),
    (-0.02, [-0.05, 0.01], ("Attacked questions score 2.0 points lower, 95% CI -1.0 to 5.0: "
                            "not distinguishable from no change at this size; 40% of the "
                            "questions moved.")),
    (0.03, [0.01, 0.05], ("Attacked questions score 3.0 points higher, 95% CI 1.0 to 5.0: "
                          "a real gain at 95%; 40% of the questions moved.")),
])
def test_the_difference_in_words(diff, ci, expected) -> None:
    assert drop_words({"diff": diff, "diff_ci": ci, "moved": 0.4}) == expected
    assert drop_words({"diff": diff, "diff_ci": None}) is None
