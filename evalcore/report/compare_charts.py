"""Plotly figures of two stability runs compared (`compare.compare_stability`'s dict).

`distributions_figure`: the two 0..N histograms side by side, in percent of each run's
questions (the runs may have different question counts and N), bins coloured as in
`figures.bin_colour`. `rates_scatter`: each matched question's success rate in run A
against run B; rates are multiples of 1/N, so identical points are merged into one
marker sized by how many questions it holds. `interval_figure`: any figures with
their intervals as error bars (compare, leaderboard, trust report). Plotly is imported inside the functions.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Optional

from evalcore.report.stability_charts import bin_colour

if TYPE_CHECKING:
    import plotly.graph_objects as go


def _label(side: Mapping[str, Any], letter: str) -> str:
    return f"{letter}: run #{side['run_id']} {side['model']} (N = {side['repetition_count']})"


def distributions_figure(comparison: Mapping[str, Any]) -> go.Figure:
    """Two bar charts, run A left and run B right: percent of questions right j of N times."""
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    sides = (("A", comparison["a"]), ("B", comparison["b"]))
    fig = make_subplots(rows=1, cols=2, shared_yaxes=True,
                        subplot_titles=[_label(side, letter) for letter, side in sides])
    for col, (letter, side) in enumerate(sides, start=1):
        n = int(side["repetition_count"])
        dist = side["distribution"]
        counts = [int(dist["distribution_counts"].get(str(j), 0)) for j in range(n + 1)]
        percent = [float(dist["distribution_percent"].get(str(j), 0.0)) for j in range(n + 1)]
        fig.add_trace(go.Bar(
            x=list(range(n + 1)), y=percent, name=letter, customdata=counts,
            marker_color=[bin_colour(j, n) for j in range(n + 1)], marker_line_color="#555",
            marker_line_width=0.5,
            hovertemplate=f"run {letter}: right %{{x}} of {n}<br>%{{y:.1f}}% "
                          "(%{customdata} questions)<extra></extra>"), row=1, col=col)
        fig.update_xaxes(title_text="correct rounds", range=[-0.5, n + 0.5],
                         dtick=1 if n <= 20 else None, row=1, col=col)
    fig.update_yaxes(title_text="% of questions", row=1, col=1)
    fig.update_layout(title="Questions by number of correct rounds", showlegend=False,
                      bargap=0.1, margin={"t": 70, "b": 40, "l": 40, "r": 10})
    return fig


def rates_scatter(comparison: Mapping[str, Any]) -> go.Figure:
    """Per-question success rate, run A (x) against run B (y), with the line y = x.

    Points above the line are questions B gets right more often.
    """
    import plotly.graph_objects as go

    points = Counter((q["rate_a"], q["rate_b"]) for q in comparison["questions"])
    xs = [p[0] for p in points]
    ys = [p[1] for p in points]
    counts = list(points.values())
    biggest = max(counts, default=1)
    colours = ["#1a9850" if y > x else "#d73027" if y < x else "#777" for x, y in points]
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=[0, 1], y=[0, 1], mode="lines", name="same rate",
                             line={"color": "#aaa", "dash": "dash"}, hoverinfo="skip"))
    fig.add_trace(go.Scatter(
        x=xs, y=ys, mode="markers", name="questions", customdata=counts,
        marker={"size": [8 + 22 * (c / biggest) ** 0.5 for c in counts], "color": colours,
                "opacity": 0.75, "line": {"color": "#333", "width": 0.5}},
        hovertemplate="A %{x:.2f} -> B %{y:.2f}: %{customdata} questions<extra></extra>"))
    a, b = comparison["a"], comparison["b"]
    fig.update_layout(title="Success rate per question",
                      xaxis_title=f"run A #{a['run_id']} ({a['model']})",
                      yaxis_title=f"run B #{b['run_id']} ({b['model']})",
                      xaxis_range=[-0.05, 1.05], yaxis_range=[-0.05, 1.05], showlegend=False,
                      margin={"t": 50, "b": 40, "l": 40, "r": 10})
    return fig


def interval_figure(labels: Sequence[str], values: Sequence[Optional[float]],
                    intervals: Sequence[Optional[Mapping[str, Any]]], title: str,
                    axis: str = "rate") -> go.Figure:
    """One point per label with its interval as an error bar (runs, models, levels).

    An unmeasured value is left out; a value without an interval has no bar. A rate's
    axis is 0..1 whatever the values: plotly's own range around an all-zero run is
    -1..1, which draws rates below zero.
    """
    import plotly.graph_objects as go

    shown = [(lab, v, i) for lab, v, i in zip(labels, values, intervals) if v is not None]
    fig = go.Figure(go.Scatter(
        x=[s[1] for s in shown], y=[s[0] for s in shown], mode="markers",
        marker={"size": 11, "color": "#2c7fb8"},
        error_x={"type": "data", "symmetric": False,
                 "array": [(i["high"] - v) if i else 0 for _, v, i in shown],
                 "arrayminus": [(v - i["low"]) if i else 0 for _, v, i in shown]},
        hovertemplate="%{y}: %{x:.3f}<extra></extra>"))
    if axis == "rate":
        fig.update_xaxes(range=[-0.02, 1.02], tickformat=".0%")
    fig.update_layout(title=title, xaxis_title=f"{axis} (95% interval)",
                      yaxis={"autorange": "reversed", "type": "category"},
                      height=120 + 40 * len(shown), margin={"t": 50, "b": 40, "l": 10, "r": 10})
    return fig


def distributions_overlay(result: Mapping[str, Any]) -> go.Figure:
    """2-8 stability runs: the share of questions right j of N times, one line per run,
    x as the share of rounds (j / N) so runs with different N overlay."""
    import plotly.graph_objects as go

    fig = go.Figure()
    for run in result["runs"]:
        counts = run.get("distribution") or []
        n, total = len(counts) - 1, sum(counts) or 1
        if n < 1:
            continue
        fig.add_trace(go.Scatter(
            x=[j / n for j in range(n + 1)], y=[100 * c / total for c in counts],
            mode="lines+markers", name=f"run {run['run']['id']} · {run['run']['model']} (N={n})",
            customdata=[[j, n, c] for j, c in enumerate(counts)],
            hovertemplate="right %{customdata[0]} of %{customdata[1]}: %{y:.1f}% "
                          "(%{customdata[2]} questions)<extra></extra>"))
    fig.update_layout(title="Questions by share of correct rounds",
                      xaxis_title="correct rounds / N", yaxis_title="% of questions",
                      xaxis_tickformat=".0%", margin={"t": 50, "b": 40, "l": 40, "r": 10})
    return fig
