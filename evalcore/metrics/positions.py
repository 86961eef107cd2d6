"""Option-order and prompt-template sensitivity of choice answers: pure figures.

- Circular accuracy (MMBench's CircularEval): an item counts right only if it is right
  under every order of its options it was asked in; a model that picks a slot rather
  than an answer loses it.
- Position bias: per slot (A, B, ...), the share of answers that chose it against the
  share of asked orders whose right option sat there; a chi-square goodness-of-fit test
  (scipy) says whether the model's choices follow the slots more than its answers
  explain. The null: a right answer sits where the right option is, a wrong one on any
  other slot alike (expected count of slot s = acc * right_s + (1 - acc) * (n - right_s)
  / (k - 1), acc the share of reads that were right). Against the right-answer counts
  alone, a model that is often wrong was "biased" towards every slot that never held
  the answer (p = 0 on 8 BBQ reads); under every rotation of the options both nulls are
  the uniform one.
- Items whose answer follows the slot: the same slot chosen under every order (with at
  least two orders asked), whatever option sat in it.
- Template sensitivity: accuracy per template with Wilson intervals, the spread
  (best - worst), the worst template, and an exact McNemar test (binomial on the
  discordant items) between the best and the worst template on the items both answered.
"""
from __future__ import annotations

from typing import Any, Mapping, Optional, Sequence

from evalcore.metrics.stability import MetricInputError, wilson_interval


def slot_label(index: int) -> str:
    """0 -> "A", 25 -> "Z", 26 -> "27" (beyond the alphabet, the 1-based number)."""
    return chr(ord("A") + index) if 0 <= index < 26 else str(index + 1)


def circular_accuracy(per_item: Mapping[Any, Sequence[Optional[bool]]]) -> dict[str, Any]:
    """Items right under every asked order / items with at least one verdict; a None
    verdict (the call failed) leaves that order out. Plain accuracy: the first order."""
    items = {k: [v for v in vs if v is not None] for k, vs in per_item.items()}
    items = {k: vs for k, vs in items.items() if vs}
    n = len(items)
    right = sum(all(vs) for vs in items.values())
    first = [vs[0] for k, vs in per_item.items() if vs and vs[0] is not None]
    low, high = wilson_interval(right, n) if n else (None, None)
    plow, phigh = wilson_interval(sum(first), len(first)) if first else (None, None)
    return {"circular_accuracy": right / n if n else None, "circular_ci": [low, high],
            "plain_accuracy": sum(first) / len(first) if first else None,
            "plain_ci": [plow, phigh], "circular_items": n}


def position_bias(chosen: Sequence[Optional[int]], right: Sequence[int],
                  slots: int) -> tuple[dict[str, dict[str, float]], Optional[float]]:
    """({slot: {"chosen": share, "right": share}}, chi-square p) over asked orders.

    `chosen[i]`: the slot answered in order i (None: no option read, left out of both
    sides); `right[i]`: the slot holding the right option. p is None when nothing was
    chosen or the null leaves fewer than two possible slots (no test possible)."""
    if len(chosen) != len(right):
        raise MetricInputError("chosen and right slots differ in length.")
    pairs = [(c, r) for c, r in zip(chosen, right) if c is not None]
    if any(not 0 <= c < slots or not 0 <= r < slots for c, r in pairs):
        raise MetricInputError(f"a slot is outside 0..{slots - 1}.")
    n = len(pairs)
    chosen_n = [sum(c == s for c, _ in pairs) for s in range(slots)]
    right_n = [sum(r == s for _, r in pairs) for s in range(slots)]
    table = {slot_label(s): {"chosen": chosen_n[s] / n if n else 0.0,
                             "right": right_n[s] / n if n else 0.0} for s in range(slots)}
    if not n:
        return table, None
    acc = sum(c == r for c, r in pairs) / n
    expected = [acc * right_n[s] + (1 - acc) * (n - right_n[s]) / (slots - 1)
                for s in range(slots)]
    return table, chi_square_p(chosen_n, expected)


def chi_square_p(observed: Sequence[int], expected: Sequence[float]) -> Optional[float]:
    """Goodness of fit of `observed` to `expected` counts (scipy); cells expected 0 are
    left out (the null makes them impossible: they are observed 0 too). None with fewer
    than two cells left."""
    from scipy.stats import chisquare

    keep = [i for i, e in enumerate(expected) if e > 0]
    if len(keep) < 2:
        return None
    obs, exp = [observed[i] for i in keep], [expected[i] for i in keep]
    total = sum(obs)
    return float(chisquare(obs, [e * total / sum(exp) for e in exp]).pvalue)


def slot_followers(chosen_by_item: Mapping[Any, Sequence[Optional[int]]]) -> list[Any]:
    """Items asked in two or more orders that chose one slot in all of them."""
    out = []
    for key, slots in chosen_by_item.items():
        seen = [s for s in slots if s is not None]
        if len(seen) >= 2 and len(seen) == len(slots) and len(set(seen)) == 1:
            out.append(key)
    return out


def mcnemar(first: Sequence[Optional[bool]], second: Sequence[Optional[bool]]
            ) -> dict[str, Any]:
    """Exact McNemar test on paired verdicts (items where both are known): b = right
    only under `first`, c = right only under `second`, p = two-sided binomial test of
    b in b + c at 1/2 (statsmodels' `mcnemar(exact=True)`); p = 1 without discordance."""
    from scipy.stats import binomtest

    if len(first) != len(second):
        raise MetricInputError("paired verdicts differ in length.")
    pairs = [(a, b) for a, b in zip(first, second) if a is not None and b is not None]
    b = sum(1 for x, y in pairs if x and not y)
    c = sum(1 for x, y in pairs if y and not x)
    p = 1.0 if b + c == 0 else float(binomtest(b, b + c, 0.5).pvalue)
    return {"b": b, "c": c, "paired_items": len(pairs), "p": min(1.0, p)}


def template_figures(per_template: Mapping[str, Sequence[Optional[bool]]]) -> dict[str, Any]:
    """Accuracy per template (items aligned by position), intervals, spread, worst and
    best template and McNemar between them. Needs at least one template."""
    if not per_template:
        raise MetricInputError("no template to compare.")
    acc: dict[str, Optional[float]] = {}
    ci: dict[str, list[Optional[float]]] = {}
    for name, verdicts in per_template.items():
        known = [v for v in verdicts if v is not None]
        acc[name] = sum(known) / len(known) if known else None
        ci[name] = list(wilson_interval(sum(known), len(known))) if known else [None, None]
    ranked = sorted((v, name) for name, v in acc.items() if v is not None)
    out: dict[str, Any] = {"template_accuracy": acc, "template_ci": ci,
                           "template_spread": None, "worst_template": None,
                           "best_template": None, "template_mcnemar": None}
    if ranked:
        worst, best = ranked[0][1], ranked[-1][1]
        out.update(template_spread=ranked[-1][0] - ranked[0][0], worst_template=worst,
                   best_template=best)
        if worst != best:
            out["template_mcnemar"] = mcnemar(per_template[best], per_template[worst])
    return out
