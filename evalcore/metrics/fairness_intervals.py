"""How sure a fairness group's rate is: intervals clustered by counterfactual pair.

Every answer of one pair comes from the same filled template (one prompt per group, asked
`samples` times), so the rows of a group inside one pair are not independent draws: a
pair is a cluster. A group's rate (share of positive decisions, of stereotyped or
refused answers) or mean figure (sentiment, score) gets the cluster-robust standard
error of `metrics.uncertainty.clustered_mean` over pairs, not over calls; a suite with
few pairs gets a wide interval, as it should. Rows without the figure are left out, as
the group's rate leaves them out.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from evalcore.metrics.uncertainty import clustered_mean

RATES: dict[str, str] = {"selection_rate": "decision", "stereotype_rate": "stereotype",
                         "refusal_rate": "refusal"}
"""Group figure -> the 0/1 row column it is the share of."""
MEANS: dict[str, str] = {"sentiment": "sentiment", "score": "score"}
"""Group figure -> the row column it is the mean of (no bounds on its interval)."""


def group_intervals(rows: Sequence[Mapping[str, Any]], groups: Sequence[Any], *,
                    cluster: str = "pair_id", alpha: float = 0.05
                    ) -> dict[Any, dict[str, dict[str, Any]]]:
    """{group: {figure: {mean, se, ci, n, clusters}}} for the figures in RATES and MEANS,
    rows clustered by `cluster` (the counterfactual pair)."""
    if len(rows) != len(groups):
        raise ValueError(f"{len(rows)} rows but {len(groups)} group labels")
    out: dict[Any, dict[str, dict[str, Any]]] = {}
    for group in dict.fromkeys(g for g in groups if g is not None):
        mine = [r for r, g in zip(rows, groups) if g == group]
        figures: dict[str, dict[str, Any]] = {}
        for figure, column in (*RATES.items(), *MEANS.items()):
            kept = [r for r in mine if r.get(column) is not None]
            if not kept:
                continue
            figures[figure] = clustered_mean(
                [float(r[column]) for r in kept], [r.get(cluster) for r in kept], alpha=alpha,
                bounds=(0.0, 1.0) if figure in RATES else None)
        out[group] = figures
    return out


def interval_text(figures: Mapping[str, Any] | None, digits: int = 2) -> str:
    """'0.42 (95% CI 0.31 to 0.53, 12 pairs)' or '0.42 (one pair: no interval)' or ''."""
    if not figures or figures.get("mean") is None:
        return ""
    mean = f"{figures['mean']:.{digits}f}"
    if figures.get("ci") is None:
        return f"{mean} (one pair: no interval)"
    low, high = figures["ci"]
    return f"{mean} (95% CI {low:.{digits}f} to {high:.{digits}f}, {figures['clusters']} pairs)"
