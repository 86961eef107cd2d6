"""Fairness effects across pairs: the paired test, its effect size, Holm's correction, and
the ranking that puts a consistent bias ahead of one pair's analyser noise (issue 16)."""
from __future__ import annotations

import random

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from evalcore.metrics import fairness as fm
from evalcore.metrics import pair_effects as pe

GENDERS = ("male", "female", "non-binary", "unspecified")


def _group(row, attribute):
    return row["attributes"].get(attribute)


def planted_rows(seed: int = 7) -> list[dict]:
    """The issue's occupations run: 20 pairs x 4 gender variants; men score 1 point higher
    on every pair; the Chinese sentiment analyser adds noise of about +-0.25 to every
    answer and swings single answers by up to 0.9 (a HIGH spread in 18 pairs)."""
    rng = random.Random(seed)
    rows = []
    for p in range(20):
        base = 8.0 if p % 2 == 0 else 4.0
        swing = rng.choice(GENDERS) if p < 18 else None
        for g in GENDERS:
            tone = rng.uniform(-0.25, 0.25) + (rng.choice((-0.9, 0.9)) if g == swing else 0.0)
            rows.append({"pair_id": f"p{p}", "variant": g, "attributes": {"gender": g},
                         "score": base + (1.0 if g == "male" else 0.0), "sentiment": tone,
                         "professionalism": 0.6, "length_net": 40,
                         "stereotype": False, "toxicity": 0.0, "refusal": False})
    return rows


def test_a_planted_score_bias_leads_ahead_of_sentiment_noise() -> None:
    rows = planted_rows()
    _, violations = fm.pair_spreads(rows)
    high = [v for v in violations if v["severity"] == "HIGH"]
    assert len(high) >= 10 and all(v["metric"] == "sentiment" for v in high)  # the issue
    effects = pe.pair_effects(rows, ["gender"], _group)
    top = effects[0]
    assert (top["attribute"], top["metric"], top["group"]) == ("gender", "score", "male")
    assert top["significant"] and top["favoured"] == "male"
    assert top["median_difference"] == pytest.approx(1.0) and top["n_pairs"] == 20
    assert top["rank_biserial"] == pytest.approx(1.0)
    assert not any(e["significant"] for e in effects if e["metric"] == "sentiment")
    assert {e["metric"] for e in effects if e["significant"]} == {"score"}
    first_sentiment = next(i for i, e in enumerate(effects) if e["metric"] == "sentiment")
    score = [i for i, e in enumerate(effects) if e["metric"] == "score"]
    assert max(score) < first_sentiment


def test_without_a_bias_nothing_is_significant() -> None:
    rows = [dict(r, score=8.0) for r in planted_rows(seed=3)]
    effects = pe.pair_effects(rows, ["gender"], _group)
    assert effects and not any(e["significant"] for e in effects)
    score = [e for e in effects if e["metric"] == "score"]
    assert all(e["p_value"] == 1.0 and e["rank_biserial"] == 0.0 for e in score)


def test_two_groups_give_one_comparison_and_lower_is_better_for_stereotypes() -> None:
    rows = []
    for p in range(8):
        for g in ("female", "male"):
            rows.append({"pair_id": p, "attributes": {"gender": g},
                         "stereotype": 1.0 if g == "female" else 0.0})
    (effect,) = pe.pair_effects(rows, ["gender"], _group, metrics=["stereotype"])
    assert effect["group"] == "female" and effect["compared_with"] == "male"
    assert effect["higher"] == "female" and effect["favoured"] == "male"
    assert effect["significant"] and effect["friedman_p"] is None


def test_few_pairs_are_not_tested() -> None:
    rows = [{"pair_id": p, "attributes": {"g": g}, "score": 9.0 if g == "a" else 5.0}
            for p in range(pe.MIN_PAIRS - 1) for g in "ab"]
    (effect,) = pe.pair_effects(rows, ["g"], _group, metrics=["score"])
    assert not effect["tested"] and effect["p_value"] is None and not effect["significant"]
    assert effect["median_difference"] == 4.0


def test_signed_rank_matches_scipy_and_a_hand_rank_biserial() -> None:
    from scipy.stats import rankdata, wilcoxon

    d = [0.5, -0.2, 0.0, 1.3, 0.7, -0.1, 0.9, 0.0, 0.4, 0.2, 0.3]
    result = pe.signed_rank(d)
    assert result["p_value"] == pytest.approx(wilcoxon(d, zero_method="zsplit").pvalue)
    ranks = rankdata([abs(x) for x in d])
    t_plus = sum(r for r, x in zip(ranks, d) if x > 0) + sum(r for r, x in zip(ranks, d)
                                                              if x == 0) / 2
    t_minus = sum(ranks) - t_plus
    assert result["rank_biserial"] == pytest.approx((t_plus - t_minus) / (t_plus + t_minus))


def test_cohens_dz_is_mean_over_sample_sd() -> None:
    import numpy as np

    d = [0.5, 0.1, 0.9, 0.3]
    assert pe.cohens_dz(d) == pytest.approx(np.mean(d) / np.std(d, ddof=1))
    assert pe.cohens_dz([1.0, 1.0, 1.0]) is None


def test_friedman_matches_scipy_for_more_than_two_groups() -> None:
    from scipy.stats import friedmanchisquare

    rng = random.Random(1)
    rows, table = [], {g: [] for g in "abc"}
    for p in range(10):
        for g in "abc":
            value = rng.uniform(0, 1) + (0.5 if g == "a" else 0.0)
            table[g].append(value)
            rows.append({"pair_id": p, "attributes": {"x": g}, "sentiment": value})
    effects = pe.pair_effects(rows, ["x"], _group, metrics=["sentiment"])
    assert len(effects) == 3
    expected = friedmanchisquare(*(table[g] for g in "abc")).pvalue
    assert all(e["friedman_p"] == pytest.approx(expected) for e in effects)


def test_holm_matches_its_definition_and_statsmodels_when_installed() -> None:
    p = [0.01, 0.04, 0.03, 0.005, None]
    assert pe.holm(p) == pytest.approx([0.03, 0.06, 0.06, 0.02, None])  # by hand
    rng = random.Random(5)
    values = [rng.random() ** 3 for _ in range(12)]
    ordered = sorted(values)
    m = len(values)
    brute = {v: max(min(1.0, (m - i) * ordered[i]) for i in range(j + 1))
             for j, v in enumerate(ordered)}
    assert pe.holm(values) == pytest.approx([brute[v] for v in values])
    try:
        from statsmodels.stats.multitest import multipletests
    except ImportError:
        return
    assert pe.holm(values) == pytest.approx(list(multipletests(values, method="holm")[1]))


def test_holm_runs_over_the_omnibus_tests_then_within_each_attribute_and_figure() -> None:
    effects = pe.pair_effects(planted_rows(), ["gender"], _group)
    families = {}
    for e in effects:
        families.setdefault(e["metric"], []).append(e)
    varying = [m for m, rows in families.items() if rows[0]["omnibus_p"] is not None]
    assert set(varying) == {"score", "sentiment"}  # constant figures are no test
    across = dict(zip(varying, pe.holm([families[m][0]["omnibus_p"] for m in varying])))
    for metric in varying:
        rows = families[metric]
        assert rows[0]["omnibus_test"] == "Friedman"
        within = pe.holm([e["p_value"] for e in rows])
        for e, adj in zip(rows, within):
            assert e["p_adjusted"] == pytest.approx(max(adj, across[metric]))
    assert all(e["p_adjusted"] == 1.0 and not e["significant"]
               for e in families["toxicity"])


# ------------------------------------------------------------------ intersections

CELLS = [(g, a) for g in ("female", "male") for a in ("older", "young")]


def _cell(row, attribute):
    parts = [row["attributes"].get(a) for a in attribute.split("×")]
    return None if None in parts else "×".join(parts)


def intersection_rows(score, pairs: int = 12, seed: int = 5) -> list[dict]:
    """`pairs` resumes x the 2 x 2 gender x age cells; `score(g, a, rng)` per answer."""
    rng = random.Random(seed)
    return [{"pair_id": f"p{p}", "attributes": {"gender": g, "age_group": a},
             "score": score(g, a, rng), "sentiment": rng.uniform(-0.2, 0.2)}
            for p in range(pairs) for g, a in CELLS]


def _interaction(effects, metric="score"):
    return [e for e in effects if e.get("kind") == "interaction" and e["metric"] == metric]


def test_an_interaction_only_the_intersection_shows_is_found() -> None:
    """Older women score 2 lower; men of any age and young women do not: the main
    effects see part of it, the interaction names the cell."""
    rows = intersection_rows(lambda g, a, rng: 7.0 + rng.uniform(-0.3, 0.3)
                             - (2.0 if (g, a) == ("female", "older") else 0.0))
    effects = pe.pair_effects(rows, ["gender", "age_group"], _cell,
                              intersections=["gender×age_group"])
    (row,) = _interaction(effects)
    assert (row["attribute"], row["group"], row["n_pairs"]) == (
        "gender×age_group", "female×older", 12)
    assert row["significant"] and row["rank_biserial"] == pytest.approx(-1.0)
    assert row["median_difference"] == pytest.approx(-0.5, abs=0.2)  # -2 / 4 per cell
    assert row["disfavoured"] == "female×older"
    from evalcore.report.fairness_view import effect_text

    assert effect_text(row).startswith(
        "gender×age_group · score: female×older lower than what gender and age_group "
        "alone predict")


def test_additive_effects_leave_no_interaction() -> None:
    """Women 1 lower and older applicants 1 lower, exactly additive: both main effects,
    no interaction (every residual 0: p 1, nothing to count in the correction)."""
    rows = intersection_rows(lambda g, a, rng: 8.0 - (g == "female") - (a == "older"))
    effects = pe.pair_effects(rows, ["gender", "age_group"], _cell,
                              intersections=["gender×age_group"])
    (row,) = _interaction(effects)
    assert not row["significant"] and row["p_value"] == 1.0 and row["omnibus_p"] is None
    assert {(e["attribute"], e["group"]) for e in effects
            if e["significant"] and e["metric"] == "score"} == {
        ("gender", "female"), ("age_group", "older")}


def test_the_interaction_test_is_scipys_wilcoxon_of_the_contrast() -> None:
    from scipy.stats import wilcoxon

    rows = intersection_rows(lambda g, a, rng: rng.uniform(4, 9), pairs=15, seed=11)
    (row,) = _interaction(pe.pair_effects(rows, [], _cell,
                                          intersections=["gender×age_group"]))
    by_pair: dict = {}
    for r in rows:
        by_pair.setdefault(r["pair_id"], {})[_cell(r, "gender×age_group")] = r["score"]
    contrast = [(m["female×older"] - m["female×young"] - m["male×older"] + m["male×young"]) / 4
                for m in by_pair.values()]
    assert row["p_value"] == pytest.approx(
        wilcoxon(contrast, zero_method="zsplit").pvalue, rel=1e-9)
    assert row["omnibus_p"] == row["p_value"]


def test_pairs_missing_a_cell_are_left_out_and_three_attributes_are_not_tested() -> None:
    rows = intersection_rows(lambda g, a, rng: rng.uniform(4, 9), pairs=8)
    rows = [r for r in rows if not (r["pair_id"] == "p0" and r["attributes"]["gender"] == "male"
                                    and r["attributes"]["age_group"] == "young")]
    (row,) = _interaction(pe.pair_effects(rows, [], _cell, intersections=["gender×age_group"]))
    assert row["n_pairs"] == 7
    three = [dict(r, attributes={**r["attributes"], "income": "low"}) for r in rows]
    assert _interaction(pe.pair_effects(three, [], _cell,
                                        intersections=["gender×age_group×income"])) == []


@settings(max_examples=40, deadline=None)
@given(st.lists(st.sampled_from([-2.0, -1.0, -0.5, 0.0, 0.0, 0.5, 1.0, 1.0, 3.0]),
                min_size=1, max_size=9))
def test_rank_biserial_uses_scipys_t_plus_with_ties_and_zeros(d: list[float]) -> None:
    from scipy.stats import wilcoxon

    result = pe.signed_rank(d)
    if all(x == 0 for x in d):
        assert result["rank_biserial"] == 0.0
        return
    # T+ is the same whatever way scipy gets its p-value; "asymptotic" only spares the
    # oracle its exact permutation test (2^n sign flips with ties or zeros, ~40 ms each)
    t_plus = wilcoxon(d, zero_method="zsplit", alternative="greater",
                      method="asymptotic").statistic
    total = len(d) * (len(d) + 1) / 2
    assert result["rank_biserial"] == pytest.approx((2 * t_plus - total) / total)


def test_signed_rank_runs_no_permutation_test(monkeypatch) -> None:
    """scipy's wilcoxon on up to 13 differences with ties or zeros is a permutation test
    over 2^n sign flips, the statistic called from Python each time (~1 s); the same
    null distribution is summed from the ranks instead, and nothing resamples."""
    import scipy.stats

    def refuse(*args, **kwargs):
        raise AssertionError("a permutation test ran")

    monkeypatch.setattr(scipy.stats, "permutation_test", refuse)
    for d in ([1.0, 1.0, 0.0, -0.5, 2.0, 1.0, 0.0, 3.0], [1.0] * 13, [0.5, -0.5, 0.0]):
        assert 0 < pe.signed_rank(d)["p_value"] <= 1


@settings(max_examples=30, deadline=None)  # scipy, the oracle, runs up to 2^10 sign flips
@given(st.lists(st.sampled_from([-3.0, -2.0, -1.0, -0.5, -0.25, 0.0, 0.25, 0.5, 1.0, 1.5,
                                 2.0, 3.0, 4.0]), min_size=1, max_size=10))
@example([1.0] * 13)  # n = 13: scipy's largest permutation test
@example([0.0, 0.5, -0.5, 1.0, 1.0, -2.0, 2.0, 0.0, 3.0, -3.0, 1.5, 1.5, 4.0])
@example([1.0] * 14)  # n = 14: scipy's normal approximation
@example([0.5, -1.0] * 7)
def test_signed_rank_p_and_statistic_are_scipys(d: list[float]) -> None:
    """Ties, zeros, all equal, n around 13 (where scipy switches to its normal
    approximation): the p-value and statistic are scipy's wilcoxon's, to the last bit."""
    from scipy.stats import wilcoxon

    result = pe.signed_rank(d)
    if all(x == 0 for x in d):
        assert result["p_value"] == 1.0
        return
    theirs = wilcoxon(d, zero_method="zsplit", alternative="two-sided")
    assert (result["statistic"], result["p_value"]) == (float(theirs.statistic),
                                                        float(theirs.pvalue))
