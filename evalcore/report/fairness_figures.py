"""Plotly figures and verdict tables of a fairness report (no streamlit).

Each function takes the dict of `evalcore.report.fairness.fairness_report` (or the same
dict read back from its JSON) and returns a `plotly.graph_objects.Figure` or plain rows,
so the page, the CLI or a notebook draw the same thing. Plotly is imported lazily.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from evalcore.metrics.fairness import group_of

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
    fig = go.Figure(go.Bar(x=[g["group"] for g in groups],
                           y=[g["selection_rate"] for g in groups]))
    spd = block.get("spd")
    fig.update_layout(title=f"selection rate by {attribute}"
                            + (f" (SPD {spd:.3f})" if spd is not None else ""),
                      yaxis={"range": [0, 1], "title": "selection rate"})
    return fig


def gate_table(result: GateResult) -> list[dict[str, Any]]:
    """Rows of the gate verdict: check, value, threshold, passed, detail (for st.dataframe)."""
    return [{"check": c.name, "value": c.value, "threshold": c.threshold, "passed": c.passed,
             "detail": c.detail} for c in result.checks]


def group_table(report: Mapping[str, Any], attribute: str) -> list[dict[str, Any]]:
    """The per-group figures of one attribute, AUC included, as flat rows."""
    return [dict(g) for g in report["attributes"][attribute]["groups"]]


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
