"""Judge reliability: does the judge give the same verdict when asked again?

The stability method trusts 0/1 verdicts; if the judge itself flips, part of the measured
instability is the judge's. Re-judge a sample of answers J times and report:

- flip rate: share of answers whose J verdicts are not unanimous;
- Cohen's kappa between passes 1 and 2 (and the mean over all pass pairs when J > 2);
- Fleiss' kappa over all J passes (J >= 2; every answer needs the same J).

A failed judgement (None) counts as 0, as in the method (judge failures score 0), so an
unreliable judge endpoint shows up as disagreement; `failed_judgements` reports how many.
Kappa is undefined (NaN; None in JSON) when chance agreement is 1, i.e. every verdict in
the compared passes is the same label; the flip rate still says they all agreed.
Standard library only.
"""
from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from itertools import combinations
from typing import Any, Hashable, Optional, Sequence

from evalcore.metrics.stability import MetricInputError


def cohen_kappa(first: Sequence[Hashable], second: Sequence[Hashable]) -> float:
    """Cohen's kappa of two raters over the same items (any labels; NaN if undefined).

    kappa = (p_o - p_e) / (1 - p_e), p_o observed agreement, p_e = sum over labels of the
    product of the two raters' label shares. Matches sklearn's `cohen_kappa_score`.
    """
    if len(first) != len(second):
        raise MetricInputError(
            f"Cohen's kappa needs two passes over the same answers; got {len(first)} "
            f"and {len(second)} verdicts.")
    n = len(first)
    if n == 0:
        raise MetricInputError("Cohen's kappa needs at least one judged answer (empty input).")
    observed = sum(a == b for a, b in zip(first, second)) / n
    share_a, share_b = Counter(first), Counter(second)
    expected = math.fsum(share_a[label] * share_b[label] for label in share_a) / (n * n)
    if expected == 1.0:
        return math.nan
    return (observed - expected) / (1 - expected)


def fleiss_kappa(ratings: Sequence[Sequence[Hashable]]) -> float:
    """Fleiss' kappa for items each rated by the same number m >= 2 of raters (NaN if undefined).

    P_i = (sum_j n_ij^2 - m) / (m (m - 1)) per item, P = mean P_i, p_j = share of all
    ratings in label j, P_e = sum_j p_j^2, kappa = (P - P_e) / (1 - P_e) (Fleiss 1971).
    """
    if not ratings:
        raise MetricInputError("Fleiss' kappa needs at least one judged answer (empty input).")
    m = len(ratings[0])
    if m < 2:
        raise MetricInputError(f"Fleiss' kappa needs at least 2 judgements per answer, got {m}.")
    totals: Counter[Hashable] = Counter()
    agreement = []
    for pos, row in enumerate(ratings):
        if len(row) != m:
            raise MetricInputError(
                f"answer {pos} has {len(row)} judgements, answer 0 has {m}; Fleiss' kappa "
                "needs the same number for every answer: drop or re-judge it.")
        counts = Counter(row)
        totals.update(counts)
        agreement.append((sum(c * c for c in counts.values()) - m) / (m * (m - 1)))
    n_items = len(ratings)
    observed = math.fsum(agreement) / n_items
    expected = math.fsum((c / (n_items * m)) ** 2 for c in totals.values())
    if expected == 1.0:
        return math.nan
    return (observed - expected) / (1 - expected)


@dataclass(frozen=True)
class JudgeReliability:
    """How consistent a judge is over J re-judgements of the same answers."""

    answers: int
    passes: int
    flips: int
    """Answers whose verdicts were not unanimous."""
    flip_rate: float
    cohen_kappa: Optional[float]
    """Passes 1 vs 2; None with a single pass, NaN when undefined."""
    mean_pairwise_cohen_kappa: Optional[float]
    """Mean of Cohen's kappa over all pass pairs that have one (None if none has)."""
    fleiss_kappa: Optional[float]
    failed_judgements: int

    def to_json_dict(self) -> dict[str, Any]:
        """JSON-safe: NaN becomes None."""
        def clean(x: Optional[float]) -> Optional[float]:
            return None if x is None or math.isnan(x) else x

        return {
            "answers": self.answers, "passes": self.passes, "flips": self.flips,
            "flip_rate": self.flip_rate, "cohen_kappa": clean(self.cohen_kappa),
            "mean_pairwise_cohen_kappa": clean(self.mean_pairwise_cohen_kappa),
            "fleiss_kappa": clean(self.fleiss_kappa),
            "failed_judgements": self.failed_judgements,
        }


def judge_reliability(verdicts: Sequence[Sequence[Optional[bool | int]]]) -> JudgeReliability:
    """Reliability of a judge from `verdicts[answer][pass]` (1/0/True/False/None).

    Every answer must have the same number of passes J >= 1 (kappas need J >= 2).
    """
    if not verdicts:
        raise MetricInputError(
            "no re-judged answers: pick a sample of answers and judge each at least twice.")
    passes = len(verdicts[0])
    if passes < 1:
        raise MetricInputError("answer 0 has no judgements; judge each answer at least once.")
    failed = 0
    rows: list[list[int]] = []
    for pos, row in enumerate(verdicts):
        if len(row) != passes:
            raise MetricInputError(
                f"answer {pos} has {len(row)} judgements, answer 0 has {passes}; "
                "re-judge every sampled answer the same number of times.")
        clean_row = []
        for j, value in enumerate(row):
            if value is None:
                failed += 1
                value = 0
            elif value not in (0, 1):
                raise MetricInputError(
                    f"answer {pos} judgement {j + 1}: verdict {value!r} is not 0, 1 or None.")
            clean_row.append(int(value))
        rows.append(clean_row)
    flips = sum(len(set(row)) > 1 for row in rows)
    cohen = mean_pair = fleiss = None
    if passes >= 2:
        columns = list(zip(*rows))
        cohen = cohen_kappa(columns[0], columns[1])
        pairs = [cohen_kappa(a, b) for a, b in combinations(columns, 2)]
        defined = [k for k in pairs if not math.isnan(k)]
        mean_pair = math.fsum(defined) / len(defined) if defined else None
        fleiss = fleiss_kappa(rows)
    return JudgeReliability(answers=len(rows), passes=passes, flips=flips,
                            flip_rate=flips / len(rows), cohen_kappa=cohen,
                            mean_pairwise_cohen_kappa=mean_pair, fleiss_kappa=fleiss,
                            failed_judgements=failed)


DEGENERATE_MIN = 5
"""Judgements needed before one reason or one verdict for all of them is called degenerate
(two or three alike can be chance)."""


def degenerate_judge(verdicts: Sequence[Optional[bool | int]],
                     reasons: Sequence[Optional[str]]) -> list[str]:
    """Why a judge's judgements say nothing about the answers, or [] if they may.

    A judge that writes the same reason for every answer ("one short sentence", the
    rubric's example) or gives every answer the same verdict is not reading them: its
    flip rate is 0 and its kappa undefined, which look like a perfectly steady judge.
    Failed judgements (None) are left out; flags need DEGENERATE_MIN valid ones.
    """
    valid = [(v, r) for v, r in zip(verdicts, reasons) if v is not None]
    if len(valid) < DEGENERATE_MIN:
        return []
    flags = []
    texts = {" ".join((r or "").split()).casefold() for _, r in valid}
    if len(texts) == 1:
        reason = " ".join((valid[0][1] or "").split())
        flags.append(f"one reason for all {len(valid)} judgements: "
                     f"{reason[:80]!r}" if reason else
                     f"no reason in any of {len(valid)} judgements")
    labels = {bool(v) for v, _ in valid}
    if len(labels) == 1:
        flags.append(f"one verdict for all {len(valid)} judgements: "
                     f"{'right' if labels.pop() else 'wrong'}")
    return flags


def kappa_note(first: Sequence[Optional[bool | int]],
               second: Sequence[Optional[bool | int]]) -> Optional[str]:
    """Why Cohen's kappa of passes 1 and 2 is n/a, or None when it is defined."""
    pairs = [(a, b) for a, b in zip(first, second) if a is not None and b is not None]
    if not pairs:
        return "no answer has two valid judgements"
    labels = {bool(a) for a, _ in pairs} | {bool(b) for _, b in pairs}
    if len(labels) == 1:
        return (f"every judgement in passes 1 and 2 is {'right' if labels.pop() else 'wrong'}"
                ", so chance agreement is 1 and kappa is undefined")
    return None
