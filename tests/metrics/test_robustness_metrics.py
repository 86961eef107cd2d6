"""Robustness metrics, each checked against an independent computation (scipy or by hand)."""
from __future__ import annotations

import itertools
import math
import random

import pytest

from evalcore.metrics.robustness import (
    PairedOutcome,
    accuracy,
    answer_similarity,
    majority_correct,
    mcnemar_exact,
    paired_rate_test,
    performance_drop_rate,
    robustness_summary,
)
from evalcore.metrics.stability import MetricInputError


def exact_mcnemar_by_hand(b: int, c: int) -> float:
    """Two-sided exact McNemar without scipy: double the smaller binomial tail, cap at 1."""
    n = b + c
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, k) for k in range(min(b, c) + 1)) / 2 ** n
    return min(1.0, 2 * tail)


@pytest.mark.parametrize("b,c", [(0, 0), (5, 0), (0, 7), (3, 3), (10, 2), (1, 12), (40, 25),
                                 (17, 16)])
def test_mcnemar_exact_matches_hand_computation(b, c):
    assert mcnemar_exact(b, c).p_value == pytest.approx(exact_mcnemar_by_hand(b, c), rel=1e-12)


def test_mcnemar_known_value():
    # b=10, c=2: 2 * P(X <= 2 | n=12) = 2 * (1 + 12 + 66) / 4096
    assert mcnemar_exact(10, 2).p_value == pytest.approx(158 / 4096)
    with pytest.raises(MetricInputError):
        mcnemar_exact(-1, 2)


def wilcoxon_exact_by_enumeration(diffs: list[float]) -> float:
    """Two-sided exact signed-rank p by enumerating every sign pattern (no ties, no zeros)."""
    ranked = sorted(abs(d) for d in diffs)
    ranks = {v: i + 1 for i, v in enumerate(ranked)}
    w_plus = sum(ranks[abs(d)] for d in diffs if d > 0)
    total = len(diffs) * (len(diffs) + 1) / 2
    observed = min(w_plus, total - w_plus)
    count = 0
    patterns = list(itertools.product((0, 1), repeat=len(diffs)))
    for signs in patterns:
        w = sum(r for r, s in zip(range(1, len(diffs) + 1), signs) if s)
        count += min(w, total - w) <= observed
    return min(1.0, count / len(patterns))


def test_paired_test_exact_matches_enumeration():
    rng = random.Random(3)
    clean = [rng.random() for _ in range(9)]
    drops = [0.31, -0.02, 0.45, 0.12, 0.6, -0.07, 0.22, 0.5, 0.05]
    attacked = [c - d for c, d in zip(clean, drops)]
    result = paired_rate_test(clean, attacked)
    diffs = [a - b for a, b in zip(clean, attacked)]
    assert result.method == "exact"
    assert result.p_value == pytest.approx(wilcoxon_exact_by_enumeration(diffs), rel=1e-9)


def test_paired_test_drops_zeros_and_agrees_with_scipy():
    from scipy.stats import wilcoxon

    clean = [1.0, 1.0, 0.8, 0.6, 1.0, 0.4, 1.0, 0.2, 0.0, 1.0]
    attacked = [0.2, 1.0, 0.4, 0.6, 0.0, 0.4, 0.6, 0.2, 0.0, 0.8]
    result = paired_rate_test(clean, attacked)
    moved = [(c, a) for c, a in zip(clean, attacked) if c != a]
    # five questions moved, |differences| 0.8 0.4 1.0 0.4 0.2 hold a tie: normal approximation
    expected = wilcoxon([c for c, _ in moved], [a for _, a in moved], method="approx")
    assert (result.questions, result.changed, result.method) == (10, 5, "approx")
    assert result.p_value == pytest.approx(expected.pvalue)
    assert result.mean_drop == pytest.approx(sum(clean) / 10 - sum(attacked) / 10)


def test_paired_test_zeros_and_no_ties_is_exact_on_the_moved_questions():
    clean = [0.9, 0.5, 0.5, 0.7, 0.3, 1.0, 0.45]
    attacked = [0.2, 0.5, 0.5, 0.6, 0.55, 1.0, 0.1]
    result = paired_rate_test(clean, attacked)
    diffs = [c - a for c, a in zip(clean, attacked) if c != a]
    assert (result.changed, result.method) == (4, "exact")
    assert result.p_value == pytest.approx(wilcoxon_exact_by_enumeration(diffs), rel=1e-9)


def test_paired_test_nothing_changed():
    result = paired_rate_test([0.5, 1.0], [0.5, 1.0])
    assert (result.p_value, result.statistic, result.changed) == (1.0, None, 0)
    with pytest.raises(MetricInputError):
        paired_rate_test([1.0], [])


def test_accuracy_pdr_and_guards():
    assert accuracy([[True, False], [None, True]]) == 0.5
    assert accuracy([]) is None
    assert performance_drop_rate(0.8, 0.6)[0] == pytest.approx(0.25)
    assert performance_drop_rate(0.5, 0.75)[0] == pytest.approx(-0.5)
    pdr, why = performance_drop_rate(0.0, 0.0)
    assert pdr is None and "clean accuracy is 0" in why
    assert performance_drop_rate(None, None)[0] is None


def test_majority_ties_count_as_wrong():
    assert majority_correct([True, True, False])
    assert not majority_correct([True, False])
    assert not majority_correct([True, None, None])
    with pytest.raises(MetricInputError):
        majority_correct([])


def test_flips_and_summary_recomputed_independently():
    rng = random.Random(11)
    pairs = []
    for key in range(40):
        clean = [rng.random() < 0.8 for _ in range(3)]
        attacked = [rng.random() < 0.5 for _ in range(3)]
        pairs.append(PairedOutcome(key, clean, attacked))
    summary = robustness_summary(pairs)
    maj = {p.key: (sum(p.clean) >= 2, sum(p.attacked) >= 2) for p in pairs}
    r2w = [k for k, (a, b) in maj.items() if a and not b]
    w2r = [k for k, (a, b) in maj.items() if b and not a]
    assert summary.flips.right_to_wrong == r2w and summary.flips.wrong_to_right == w2r
    assert summary.flips.both_right + summary.flips.both_wrong == 40 - len(r2w) - len(w2r)
    acc_c = sum(sum(p.clean) for p in pairs) / 120
    acc_a = sum(sum(p.attacked) for p in pairs) / 120
    assert summary.accuracy_clean == pytest.approx(acc_c)
    assert summary.pdr == pytest.approx(1 - acc_a / acc_c)
    assert summary.mcnemar.p_value == pytest.approx(exact_mcnemar_by_hand(len(r2w), len(w2r)))
    assert summary.paired_test is not None and summary.paired_test.questions == 40
    data = summary.to_json_dict()
    assert data["flips"]["counts"]["right_to_wrong"] == len(r2w)


def test_single_round_has_no_wilcoxon_and_bad_input_is_named():
    summary = robustness_summary([PairedOutcome(1, [True], [False]),
                                  PairedOutcome(2, [False], [False])])
    assert summary.paired_test is None and summary.flips.right_to_wrong == [1]
    assert summary.pdr == pytest.approx(1.0)
    with pytest.raises(MetricInputError, match="same number of rounds"):
        PairedOutcome(3, [True, True], [True])
    with pytest.raises(MetricInputError, match="no paired questions"):
        robustness_summary([])
    with pytest.raises(MetricInputError, match="same number of rounds"):
        robustness_summary([PairedOutcome(1, [True], [True]),
                            PairedOutcome(2, [True, True], [True, True])])


def test_answer_similarity():
    same = answer_similarity(["答案是 12 个苹果", None], ["答案是 12 个苹果", "x"])
    assert same.compared == 1 and same.rouge_l == pytest.approx(1.0)
    from evalcore.scorers.rules import extract_number

    diff = answer_similarity(["The answer is 12.", "It is 7"], ["I think 13 apples", "7 it is"],
                             extract=lambda t: getattr(extract_number(t), "text", None))
    assert diff.compared == 2 and diff.same_answer == pytest.approx(0.5)
    assert 0.0 <= diff.rouge_l < 1.0
    assert answer_similarity([None], [None]).rouge_l is None
    with pytest.raises(MetricInputError):
        answer_similarity(["a"], [])


def test_verdicts_other_than_0_1_none_are_refused_as_in_stability():
    import pytest as _pytest

    from evalcore.metrics.robustness import success_rate
    from evalcore.metrics.stability import MetricInputError as _Err

    assert success_rate([1, 0, None, True]) == 0.5
    for bad in (2, float("nan")):
        with _pytest.raises(_Err, match="is not 0, 1 or None"):
            success_rate([1, bad])


def test_answer_similarity_tokenizer_does_not_depend_on_the_side():
    from evalcore.metrics.robustness import answer_similarity as sim

    assert sim(["12"], ["答案是12个"]).rouge_l == sim(["答案是12个"], ["12"]).rouge_l > 0.0
