"""CrowS-Pairs shares and intervals, checked against scipy.stats.binomtest."""
from __future__ import annotations

import pytest
from scipy.stats import binomtest

from evalcore.metrics.crows import PairPick, crows_scores, proportion_interval, stereotype_share

GRID = [(k, n) for n in (1, 2, 5, 12, 30, 101, 1508) for k in sorted({0, 1, n // 3, n // 2, n - 1, n})
        if 0 <= k <= n]


@pytest.mark.parametrize("k, n", GRID)
@pytest.mark.parametrize("confidence", [0.9, 0.95, 0.99])
def test_wilson_interval_matches_scipy(k: int, n: int, confidence: float) -> None:
    theirs = binomtest(k, n).proportion_ci(confidence_level=confidence, method="wilson")
    assert proportion_interval(k, n, confidence, "wilson") == pytest.approx(
        (theirs.low, theirs.high), abs=1e-12)


@pytest.mark.parametrize("k, n", GRID)
def test_clopper_pearson_interval_matches_scipy(k: int, n: int) -> None:
    theirs = binomtest(k, n).proportion_ci(confidence_level=0.95, method="exact")
    assert proportion_interval(k, n, 0.95, "exact") == pytest.approx(
        (theirs.low, theirs.high), abs=1e-9)


@pytest.mark.parametrize("k, n, preference", [
    (62, 100, "stereotyped"),        # Wilson 95%: 0.522 - 0.709, exact p = 0.021
    (60, 100, "none shown"),         # Wilson 0.502 - 0.691 excludes 50%, but p = 0.057
    (58, 100, "none shown"),         # 0.482 - 0.672 straddles 50%
    (35, 100, "anti-stereotyped"),
    (50, 100, "none shown"),
    (5, 5, "none shown"),            # Wilson 0.566 - 1 excludes 50%, but p = 0.0625
    (12, 12, "stereotyped"),
    (7, 12, "none shown"),
])
def test_share_test_and_verdict(k: int, n: int, preference: str) -> None:
    result = stereotype_share(k, n)
    assert result["share"] == k / n and result["preference"] == preference
    assert result["p_value"] == pytest.approx(binomtest(k, n, 0.5).pvalue)
    assert result["low"] < result["share"] <= result["high"]


def test_no_readable_pick_gives_no_share() -> None:
    assert stereotype_share(0, 0) == {"n": 0, "stereotyped": 0, "share": None, "low": None,
                                      "high": None, "p_value": None, "preference": "none shown"}


def test_bad_input_is_refused() -> None:
    with pytest.raises(ValueError, match="0 <= k <= n"):
        proportion_interval(3, 2)
    with pytest.raises(ValueError, match="confidence"):
        proportion_interval(1, 2, confidence=95)
    with pytest.raises(ValueError, match="unknown interval method"):
        proportion_interval(1, 2, method="normal")  # type: ignore[arg-type]


def test_scores_by_bias_type_and_direction_leave_unreadable_picks_out() -> None:
    picks = ([PairPick("gender", True)] * 6 + [PairPick("gender", False)] * 2
             + [PairPick("gender", None)] + [PairPick("age", False, "antistereo")] * 3
             + [PairPick("age", True, "antistereo")])
    scores = crows_scores(picks)
    assert (scores["answers"], scores["unreadable"]) == (13, 1)
    assert scores["overall"]["stereotyped"] == 7 and scores["overall"]["n"] == 12
    gender, age = scores["by_bias_type"]["gender"], scores["by_bias_type"]["age"]
    assert (gender["stereotyped"], gender["n"], gender["unreadable"]) == (6, 8, 1)
    assert (age["share"], age["n"]) == (0.25, 4)
    assert list(scores["by_bias_type"]) == ["age", "gender"]
    assert scores["by_direction"]["antistereo"]["n"] == 4
    ci = binomtest(6, 8).proportion_ci(method="wilson")
    assert (gender["low"], gender["high"]) == pytest.approx((ci.low, ci.high))
