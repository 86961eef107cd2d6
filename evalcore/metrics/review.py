"""What a team's reviews measure: how far reviewers agree, the share of attacked items
kept in meaning per group (the attack generator's precision, measured by its users), and
a judge model's accuracy against people.

Pure functions over plain values; `report.review_stats` feeds them a queue's decisions.

- **Agreement.** Cohen's kappa when exactly two people reviewed the items reviewed twice
  (the usual set-up: one first review, one blind second); Krippendorff's alpha (nominal,
  any number of reviewers, items rated by only some) when more took part. Both correct
  the raw agreement for what chance alone gives: two reviewers who approve 90% of items
  agree 82% of the time by chance.
- **Precision.** Kept / reviewed per group with its Wilson interval (few items per group,
  shares near 1: the normal interval collapses there).
- **Judge accuracy.** The share of the judge's verdicts that people call right, with its
  Wilson interval; the confusion matrix of the judge's verdict against the people's (the
  people's answer verdict is the judge's when they call it right, its opposite when
  wrong), and Cohen's kappa between the two.
"""
from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Hashable, Iterable, Mapping, Sequence
from itertools import permutations
from typing import Any

from evalcore.metrics.agreement import cohen_kappa
from evalcore.metrics.stability import MetricInputError, wilson_interval


def krippendorff_alpha(units: Sequence[Sequence[Hashable]]) -> float:
    """Krippendorff's alpha for nominal labels: each unit is the labels it got (any number;
    units with fewer than two are not pairable and are left out). NaN when undefined
    (every label the same).

    Coincidences o_ck = sum over units of the ordered pairs (c, k) of its labels divided
    by (m_u - 1); n_c = sum_k o_ck; alpha = 1 - (n - 1) * sum_{c != k} o_ck /
    sum_{c != k} n_c n_k (Krippendorff 2011, "Computing Krippendorff's Alpha-Reliability").
    """
    coincide: Counter[tuple[Hashable, Hashable]] = Counter()
    for labels in units:
        m = len(labels)
        if m < 2:
            continue
        for a, b in permutations(labels, 2):
            coincide[(a, b)] += 1 / (m - 1)
    if not coincide:
        raise MetricInputError("Krippendorff's alpha needs a unit with two or more labels.")
    totals: Counter[Hashable] = Counter()
    for (a, _), value in coincide.items():
        totals[a] += value
    n = math.fsum(totals.values())
    disagree = math.fsum(v for (a, b), v in coincide.items() if a != b)
    chance = math.fsum(totals[a] * totals[b] for a in totals for b in totals if a != b)
    if chance == 0:
        return math.nan
    return 1 - (n - 1) * disagree / chance


def agreement(ratings: Mapping[Hashable, Mapping[str, Hashable]]) -> dict[str, Any]:
    """{"method", "value", "pairs"} over the items rated by two or more people
    (`ratings[item][reviewer] = label`): Cohen's kappa when exactly two people rated
    them, Krippendorff's alpha when more did; value None (method "none") when no item
    was rated twice, or when the figure is undefined (everyone gave one label)."""
    shared = {item: r for item, r in ratings.items() if len(r) >= 2}
    people = sorted({p for r in shared.values() for p in r})
    if not shared:
        return {"method": "none", "value": None, "pairs": 0, "reviewers": people}
    if len(people) == 2:
        first, second = people
        value = cohen_kappa([r[first] for r in shared.values()],
                            [r[second] for r in shared.values()])
        method = "cohen_kappa"
    else:
        value = krippendorff_alpha([list(r.values()) for r in shared.values()])
        method = "krippendorff_alpha"
    return {"method": method, "value": None if math.isnan(value) else value,
            "pairs": len(shared), "reviewers": people}


def share_with_interval(kept: int, n: int) -> dict[str, Any]:
    """{"kept", "n", "share", "low", "high"}: kept of n with its 95% Wilson interval."""
    low, high = wilson_interval(kept, n)
    return {"kept": kept, "n": n, "share": kept / n, "low": low, "high": high}


def precision_by(records: Iterable[tuple[Iterable[Hashable], bool]]) -> dict[Hashable, Any]:
    """{group: share_with_interval} from (the groups an item belongs to, kept?) records:
    an item with swaps from two sources counts once in each."""
    counts: dict[Hashable, list[int]] = defaultdict(lambda: [0, 0])
    for groups, kept in records:
        for group in dict.fromkeys(groups):
            counts[group][0] += int(kept)
            counts[group][1] += 1
    return {g: share_with_interval(k, n) for g, (k, n) in sorted(counts.items(), key=str)}


def judge_accuracy(pairs: Sequence[tuple[bool, bool]]) -> dict[str, Any]:
    """The judge against people over (judge's verdict: answer correct?, people say the
    judge is right?) pairs: accuracy with its interval, the confusion matrix
    {"judge_<c>_people_<c>": count} and Cohen's kappa between judge and people."""
    if not pairs:
        raise MetricInputError("judge accuracy needs at least one reviewed verdict")
    judge = [j for j, _ in pairs]
    people = [j if right else not j for j, right in pairs]
    matrix = Counter((j, p) for j, p in zip(judge, people))
    name = {True: "correct", False: "incorrect"}
    kappa = cohen_kappa(judge, people)
    return {**share_with_interval(sum(right for _, right in pairs), len(pairs)),
            "confusion": {f"judge_{name[j]}_people_{name[p]}": matrix[(j, p)]
                          for j in (True, False) for p in (True, False)},
            "kappa": None if math.isnan(kappa) else kappa}
