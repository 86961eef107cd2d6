"""Plotly figures and verdict tables of a fairness report (no streamlit).

Each function takes the dict of `evalcore.report.fairness.fairness_report` (or the same
dict read back from its JSON) and returns a `plotly.graph_objects.Figure` or plain rows,
so the page, the CLI or a notebook draw the same thing. Plotly is imported lazily.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from evalcore.metrics.fairness import group_of
from evalcore.metrics.fairness_intervals import interval_text

if TYPE_CHECKING:
    import plotly.graph_objects as go

    from evalcore.metrics.gate import GateResult

BOX_METRICS = {"sentiment": "sentiment (-1..1)", "score": "score (1-10)",
               "length": "answer length (words en / characters zh)",
               "professionalism": "professionalism (0..1)"}
"""Figures a box plot can show, with their axis titles."""
LEVEL_COLOURS = {"EXCELLENT": "#1a9850", "GOOD": "#91cf60", "ACCEPTABLE": "#fee08b",
                 "CONCERNING": "#fc8d59", "POOR": "#d73027"}


def box_by_group(report: Mapping[str, Any], metric: str, attribute: str) -> go.Figure:
    """One box per group of `attribute` for a per-answer figure (sentiment, score, length)."""
    import plotly.graph_objects as go

    if metric not in BOX_METRICS:
        raise ValueError(f"unknown metric {metric!r}; use one of {', '.join(BOX_METRICS)}")
    by: dict[str, list[float]] = {}
    for row in report.get("rows", []):
        group, value = group_of(row, attribute), row.get(metric)
        if group is not None and value is not None:
            by.setdefault(group, []).append(float(value))
    fig = go.Figure([go.Box(y=values, name=group, boxpoints="all", jitter=0.3)
                     for group, values in by.items()])
    fig.update_layout(title=f"{BOX_METRICS[metric]} by {attribute}", yaxis_title=metric,
                      xaxis_title=attribute, showlegend=False,
                      margin={"l": 40, "r": 20, "t": 50, "b": 40})
    return fig


def selection_rate_figure(report: Mapping[str, Any], attribute: str) -> go.Figure:
    """Share of positive decisions (score >= threshold) per group, with the SPD in the title."""
    import plotly.graph_objects as go

    block = report["attributes"][attribute]
    groups = [g for g in block["groups"] if g.get("selection_rate") is not None]
    cis = [((g.get("intervals") or {}).get("selection_rate") or {}).get("ci") for g in groups]
    fig = go.Figure(go.Bar(
        x=[g["group"] for g in groups], y=[g["selection_rate"] for g in groups],
        error_y={"type": "data", "symmetric": False,  # 95%, clustered by pair
                 "array": [ci[1] - g["selection_rate"] if ci else 0 for g, ci in zip(groups, cis)],
                 "arrayminus": [g["selection_rate"] - ci[0] if ci else 0
                                for g, ci in zip(groups, cis)]}))
    spd = block.get("spd")
    fig.update_layout(title=f"selection rate by {attribute}"
                            + (f" (SPD {spd:.3f})" if spd is not None else ""),
                      yaxis={"range": [0, 1], "title": "selection rate"})
    return fig


def gate_table(result: GateResult) -> list[dict[str, Any]]:
    """Rows of the gate verdict: check, result (pass / fail / not measured), value,
    threshold, detail (for st.dataframe)."""
    return [{"check": c.name, "result": c.status, "value": c.value, "threshold": c.threshold,
             "detail": c.detail} for c in result.checks]


def group_table(report: Mapping[str, Any], attribute: str) -> list[dict[str, Any]]:
    """The per-group figures of one attribute, AUC included, as flat rows: each interval
    (clustered by pair) as a '<figure> 95% CI' text column."""
    rows = []
    for group in report["attributes"][attribute]["groups"]:
        row = {k: v for k, v in group.items() if k != "intervals"}
        for figure, figures in (group.get("intervals") or {}).items():
            ci = figures.get("ci")
            row[f"{figure} 95% CI"] = (f"{ci[0]:.2f} to {ci[1]:.2f}" if ci
                                       else "one pair: no interval")
        rows.append(row)
    return rows


def rate_words(report: Mapping[str, Any], attribute: str,
               figure: str = "selection_rate") -> str | None:
    """'selection rate per group, 95% intervals over the 12 pairs: female 0.42 (95% CI
    0.31 to 0.53, 12 pairs); ...' for the page, or None when no group has the figure."""
    parts = [f"{g['group']} {interval_text(g['intervals'][figure])}"
             for g in report["attributes"][attribute]["groups"]
             if figure in (g.get("intervals") or {})]
    if not parts:
        return None
    return (f"{figure.replace('_', ' ').capitalize()} per group: " + "; ".join(parts)
            + ". The intervals count each counterfactual pair once (its rounds share one "
            "prompt), not each call.")


def effects_figure(report: Mapping[str, Any], limit: int = 20) -> go.Figure:
    """The strongest `limit` tested effects as horizontal bars of their rank-biserial r
    (-1: the group is lower in every pair, +1: higher), significant ones in red."""
    import plotly.graph_objects as go

    rows = [e for e in report.get("effects", []) if e.get("tested")][:limit][::-1]
    labels = [f"{e['attribute']} · {e['metric']} · {e['group']}" for e in rows]
    fig = go.Figure(go.Bar(
        x=[e["rank_biserial"] for e in rows], y=labels, orientation="h",
        marker_color=["#d73027" if e["significant"] else "#bbbbbb" for e in rows],
        customdata=[[e["median_difference"], e["p_adjusted"], e["n_pairs"]] for e in rows],
        hovertemplate="%{y}<br>r = %{x:.2f}<br>median difference %{customdata[0]:.3g}"
                      "<br>Holm p = %{customdata[1]:.2g}<br>%{customdata[2]} pairs"
                      "<extra></extra>"))
    fig.update_layout(title="Effects across pairs (rank-biserial r; red = significant, Holm)",
                      xaxis={"range": [-1.05, 1.05], "title": "rank-biserial r"},
                      height=140 + 22 * len(rows), margin={"l": 10, "r": 20, "t": 50, "b": 40})
    return fig
