"""How sure the clean-vs-attacked figures of a robustness run are.

Accuracy clean and attacked each get a clustered interval, and their paired difference
(attacked minus clean, per pair) gets one too, with `metrics.uncertainty.clustered_mean`.
The rows are the pairs (one clean question, one attacked version, N rounds each, a
missing round counted as wrong as in `metrics.robustness`); the clusters are the clean
questions, because the versions of one question attacked by several sets share its
difficulty. The point figures are therefore exactly the level's `accuracy_clean`,
`accuracy_attacked` and minus its `accuracy_drop`; PDR is not touched.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from evalcore.metrics.robustness import PairedOutcome
from evalcore.metrics.uncertainty import clustered_mean


def clean_vs_attacked(pairs: Sequence[PairedOutcome], clusters: Sequence[Any] | None = None,
                      *, alpha: float = 0.05) -> dict[str, Any]:
    """{"clean": {accuracy, accuracy_se, accuracy_ci}, "attacked": {...}, "paired":
    {diff, diff_se, diff_ci, n, moved, clusters}}; `clusters` labels each pair with its
    clean question (each pair its own cluster when None)."""
    labels = list(clusters) if clusters is not None else [p.key for p in pairs]
    if len(labels) != len(pairs):
        raise ValueError(f"{len(pairs)} pairs but {len(labels)} cluster labels")
    clean = [p.clean_rate for p in pairs]
    attacked = [p.attacked_rate for p in pairs]
    diffs = [a - c for c, a in zip(clean, attacked)]

    def accuracy(rates: list[float]) -> dict[str, Any]:
        figures = clustered_mean(rates, labels, alpha=alpha, bounds=(0.0, 1.0))
        return {"accuracy": figures["mean"], "accuracy_se": figures["se"],
                "accuracy_ci": figures["ci"]}

    paired = clustered_mean(diffs, labels, alpha=alpha, bounds=(-1.0, 1.0))
    return {"clean": accuracy(clean), "attacked": accuracy(attacked),
            "paired": {"diff": paired["mean"], "diff_se": paired["se"], "diff_ci": paired["ci"],
                       "n": len(diffs), "clusters": paired["clusters"],
                       "moved": (sum(1 for d in diffs if d != 0) / len(diffs)
                                 if diffs else None)}}


def drop_words(paired: Mapping[str, Any]) -> str | None:
    """'attacked questions score 6.0 points lower, 95% CI 2.1 to 9.9: a real drop at 95%.'
    for a reader who is no statistician; None without an interval."""
    diff, ci = paired.get("diff"), paired.get("diff_ci")
    if diff is None or ci is None:
        return None
    low, high = ci[0] * 100, ci[1] * 100
    if diff < 0:
        head, low, high = f"score {-diff * 100:.1f} points lower", -high, -low
    elif diff > 0:
        head = f"score {diff * 100:.1f} points higher"
    else:
        head = "score the same as the clean ones"
    real = not ci[0] <= 0 <= ci[1]
    verdict = (("a real drop" if diff < 0 else "a real gain") + " at 95%" if real
               else "not distinguishable from no change at this size")
    moved = paired.get("moved")
    share = f"; {moved:.0%} of the questions moved" if moved is not None else ""
    return f"Attacked questions {head}, 95% CI {low:.1f} to {high:.1f}: {verdict}{share}."

