"""Plotly figures of a stability report: the 0..N histogram, pass^k / pass@k, classes, risk.

Every function takes the report dict of `evalcore.report.stability.stability_report`
(or the same dict read back from its JSON) and returns a `plotly.graph_objects.Figure`;
pages only hand it to `st.plotly_chart`, so the CLI or a notebook draws the same thing.

Colours follow the method: a bin of questions right j times out of N is green when all
rounds were right, light green at >= 80 %, yellow at >= 50 %, red below. The boundaries
come from `metrics.stability.classify` (integer arithmetic), so a bin's colour and the
class its questions are counted in can never disagree. Plotly is imported inside the
functions: importing this module (for `bin_colour`) stays cheap.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from evalcore.metrics.stability import CLASSES, RISK_LEVELS, classify

if TYPE_CHECKING:
    import plotly.graph_objects as go

GREEN = "#1a9850"
LIGHT_GREEN = "#91cf60"
YELLOW = "#fee08b"
RED = "#d73027"
DARK_RED = "#a50026"

CLASS_COLOURS: dict[str, str] = {"perfect": GREEN, "high": LIGHT_GREEN, "unstable": YELLOW,
                                 "severe": RED, "failed": DARK_RED}
"""Bar colour per stability class (severe and failed both read as red)."""
RISK_COLOURS: dict[str, str] = {"high_risk": RED, "borderline": YELLOW, "trusted": LIGHT_GREEN,
                                "perfect": GREEN}
CLASS_LABELS: dict[str, str] = {"perfect": "perfect (100%)", "high": "high (>= 80%)",
                                "unstable": "unstable (50-80%)", "severe": "severe (0-50%)",
                                "failed": "failed (0%)"}
RISK_LABELS: dict[str, str] = {"high_risk": "high risk (< 50%)", "borderline": "borderline (50-80%)",
                               "trusted": "trusted (>= 80%)", "perfect": "of which perfect (100%)"}


def bin_colour(correct: int, n_rounds: int) -> str:
    """The method's colour for questions right `correct` times of `n_rounds`."""
    cls = classify(correct, n_rounds)
    return {"perfect": GREEN, "high": LIGHT_GREEN, "unstable": YELLOW}.get(cls, RED)


def pass_k_value(summary: Mapping[str, Any], key: str, k: int) -> float:
    """pass^k or pass@k at `k`, NaN where no question had k answered rounds (rounds
    without a verdict left out): a gap in the curve and an empty cell, not an error."""
    value = (summary.get(key) or {}).get(str(k))
    return float("nan") if value is None else float(value)


def _rounds(report: Mapping[str, Any]) -> int:
    return int(report["repetition_count"])


def count_axis(fig: go.Figure, largest: int, ticks: int = 8) -> go.Figure:
    """Whole-number ticks on the y axis of a chart of counts (no "2.5 questions"): the
    smallest step of 1, 2, 5, 10, 20, 50 ... that keeps at most `ticks` ticks."""
    scale, step = 1, 1
    while largest / step > ticks:
        for factor in (1, 2, 5):
            step = factor * scale
            if largest / step <= ticks:
                break
        else:
            scale *= 10
    fig.update_yaxes(tickmode="linear", tick0=0, dtick=step, rangemode="tozero")
    return fig


SHORTEST_TIME_AXIS = timedelta(hours=1)
"""A time axis spans at least this: one run (or several minutes apart) otherwise gets
plotly's zoom to fractions of a second, ticks such as "18:07:21.0755"."""


def time_axis(fig: go.Figure, moments: Iterable[Any]) -> go.Figure:
    """A date axis in minutes, at least `SHORTEST_TIME_AXIS` wide around its points."""
    fig.update_xaxes(type="date", tickformat="%Y-%m-%d %H:%M",
                     hoverformat="%Y-%m-%d %H:%M:%S")
    known = [m for m in moments if isinstance(m, datetime)]
    if known and max(known) - min(known) < SHORTEST_TIME_AXIS:
        middle = min(known) + (max(known) - min(known)) / 2
        fig.update_xaxes(range=[middle - SHORTEST_TIME_AXIS / 2,
                                middle + SHORTEST_TIME_AXIS / 2])
    return fig


def distribution_figure(report: Mapping[str, Any]) -> go.Figure:
    """Bar chart of how many questions were right 0, 1, ..., N times, coloured per bin."""
    import plotly.graph_objects as go

    n = _rounds(report)
    dist = report["distribution"]
    counts = [int(dist["distribution_counts"].get(str(j), 0)) for j in range(n + 1)]
    percent = [float(dist["distribution_percent"].get(str(j), 0.0)) for j in range(n + 1)]
    fig = go.Figure(go.Bar(
        x=list(range(n + 1)), y=counts, marker_color=[bin_colour(j, n) for j in range(n + 1)],
        marker_line_color="#555", marker_line_width=0.5, customdata=percent,
        hovertemplate="right %{x} of " + str(n) + " rounds<br>%{y} questions "
                      "(%{customdata:.1f}%)<extra></extra>"))
    fig.update_layout(title=f"Questions by number of correct rounds (N = {n})",
                      xaxis_title="correct rounds", yaxis_title="questions",
                      bargap=0.1, showlegend=False, margin={"t": 50, "b": 40, "l": 40, "r": 10})
    fig.update_xaxes(range=[-0.5, n + 0.5], dtick=1 if n <= 20 else None)
    return count_axis(fig, max(counts, default=0))


def pass_k_figure(report: Mapping[str, Any]) -> go.Figure:
    """pass^k (all k answers right) and pass@k (at least one right) against k = 1..N.

    The gap between the two curves is the instability: for a perfectly stable model
    both lines are flat at the accuracy.
    """
    import plotly.graph_objects as go

    summary = report["summary"]
    ks = list(range(1, _rounds(report) + 1))
    fig = go.Figure()
    for key, name, colour in (("pass_hat_k", "pass^k (all k right)", RED),
                              ("pass_at_k", "pass@k (at least one right)", GREEN)):
        ys = [pass_k_value(summary, key, k) for k in ks]
        fig.add_trace(go.Scatter(x=ks, y=ys, name=name, mode="lines+markers", line_color=colour,
                                 hovertemplate="k=%{x}: %{y:.3f}<extra>" + name + "</extra>"))
    fig.update_layout(title="pass^k and pass@k", xaxis_title="k", yaxis_title="probability",
                      xaxis={"tickmode": "linear", "dtick": 1, "tick0": 1},
                      yaxis_range=[0, 1.02], legend={"orientation": "h", "y": -0.2},
                      margin={"t": 50, "b": 40, "l": 40, "r": 10})
    return fig


def _count_bars(counts: Mapping[str, int], order: tuple[str, ...], colours: Mapping[str, str],
                labels: Mapping[str, str], total: int, title: str) -> go.Figure:
    import plotly.graph_objects as go

    values = [int(counts.get(name, 0)) for name in order]
    percent = [100.0 * v / total if total else 0.0 for v in values]
    fig = go.Figure(go.Bar(
        x=[labels[name] for name in order], y=values,
        marker_color=[colours[name] for name in order], marker_line_color="#555",
        marker_line_width=0.5, customdata=percent, text=values, textposition="auto",
        hovertemplate="%{x}: %{y} questions (%{customdata:.1f}%)<extra></extra>"))
    fig.update_layout(title=title, yaxis_title="questions", showlegend=False,
                      margin={"t": 50, "b": 40, "l": 40, "r": 10})
    return count_axis(fig, max(values, default=0))


def class_figure(report: Mapping[str, Any]) -> go.Figure:
    """Questions per stability class (perfect, high, unstable, severe, failed)."""
    return _count_bars(report["summary"]["classes"], CLASSES, CLASS_COLOURS, CLASS_LABELS,
                       int(report["distribution"]["total_questions"]), "Stability classes")


def class_line(report: Mapping[str, Any]) -> str:
    """The stability classes in words, as the chart above draws them (the text a reader,
    or a browser test, can read): "1 perfect (100%), 2 high (>= 80%), ..."."""
    classes = report["summary"]["classes"]
    return ", ".join(f"{int(classes.get(name, 0))} {CLASS_LABELS[name]}" for name in CLASSES)


def risk_line(report: Mapping[str, Any]) -> str:
    """The risk levels in words, so the counts a reader adds up are on the page as text:
    "10 questions: 3 high risk, 2 borderline, 5 trusted (of which 4 perfect)"."""
    risk = report["summary"]["risk"]
    rated = sum(int(risk.get(name, 0)) for name in RISK_LEVELS[:3])
    line = (f"{rated} questions with a rate: {int(risk.get('high_risk', 0))} high risk, "
            f"{int(risk.get('borderline', 0))} borderline, {int(risk.get('trusted', 0))} "
            f"trusted (of which {int(risk.get('perfect', 0))} perfect)")
    incomplete = int(report["distribution"].get("incomplete", 0))
    return line + (f"; {incomplete} incomplete (no rate)" if incomplete else "")


def risk_figure(report: Mapping[str, Any]) -> go.Figure:
    """Questions per risk level (high risk, borderline, trusted: they add up to the
    questions with a rate); the perfect ones are drawn inside the trusted bar, as the
    method reports them: "trusted, of which perfect"."""
    import plotly.graph_objects as go

    risk = report["summary"]["risk"]
    total = int(report["distribution"]["total_questions"])
    levels = RISK_LEVELS[:3]  # high_risk, borderline, trusted (perfect is drawn inside)
    perfect = int(risk.get("perfect", 0))
    below = [int(risk.get(name, 0)) - (perfect if name == "trusted" else 0) for name in levels]
    labels = [RISK_LABELS[name] for name in levels]
    fig = go.Figure()
    fig.add_trace(go.Bar(
        x=labels, y=below, marker_color=[RISK_COLOURS[n] for n in levels],
        marker_line_color="#555", marker_line_width=0.5, name="",
        customdata=[int(risk.get(n, 0)) for n in levels],
        hovertemplate="%{x}: %{customdata} questions<extra></extra>"))
    fig.add_trace(go.Bar(
        x=[RISK_LABELS["trusted"]], y=[perfect], marker_color=RISK_COLOURS["perfect"],
        marker_line_color="#555", marker_line_width=0.5, name=RISK_LABELS["perfect"],
        text=[f"{perfect} perfect"], textposition="inside",
        hovertemplate="of which perfect: %{y}<extra></extra>"))
    fig.update_layout(title=f"Risk levels ({total} questions)", yaxis_title="questions",
                      barmode="stack", showlegend=False,
                      margin={"t": 50, "b": 40, "l": 40, "r": 10})
    return count_axis(fig, max(int(risk.get(n, 0)) for n in levels))
