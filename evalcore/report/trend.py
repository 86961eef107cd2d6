"""One metric over time across a dataset's (or suite's) runs, per model: the continuous
monitoring the fairness method asks for, for any kind.

Per model the finished runs that measure the metric, oldest first. The baseline is the
model's stored baseline (`store.baselines`, `baseline set RUN`), else its oldest such
run, unless one is given; each baseline change is a mark (`baseline_marks`). Each later run is paired with the baseline
on their shared items (`compare_runs` / `compare.paired_test`, Wilcoxon); a point is a
`regression` only when that test is significant and the run is worse than the baseline
(a metric where lower is better is worse when it rises). With a gate config, each point
carries its gate verdict against the baseline (`gates.gate_any`).
"""
from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any, Optional

from sqlalchemy.engine import Engine

from evalcore.dataset import get_dataset
from evalcore.errors import EvalcoreError
from evalcore.kinds import directions
from evalcore.report.compare_runs import ALPHA, compare_runs
from evalcore.report.stability_charts import time_axis
from evalcore.report.gates import gate_any
from evalcore.report.leaderboard import dataset_runs
from evalcore.report.run_figures import run_figures
from evalcore.store.baselines import baseline_history


def _aware(moment: datetime) -> datetime:
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _paired(engine: Engine, baseline: int, run_id: int) -> Optional[dict[str, Any]]:
    try:
        return compare_runs(engine, [baseline, run_id])["tests"][0]
    except EvalcoreError:
        return None


def _direction(metric: str) -> str:
    """Which way is better, as the metric's kind declares it (`MetricSpec.better`)."""
    return directions().get(metric, "higher")


def trend(engine: Engine, dataset: str | int, metric: str, *, model: Optional[str] = None,
          baseline: Optional[int] = None, gate: Any = None, since: Optional[datetime] = None,
          alpha: float = ALPHA) -> dict[str, Any]:
    """{dataset, metric, better, series: {model: [point, ...]}}; a point holds run_id,
    created_at, value, low, high, baseline (bool), test (the paired finding vs the
    baseline), regression (bool), gate (passed or None). `since` keeps runs created then
    or later (a given baseline is kept whatever its date)."""
    ds = get_dataset(engine, dataset)
    better = _direction(metric)
    series: dict[str, list[dict[str, Any]]] = {}
    runs = sorted(dataset_runs(engine, int(ds.id)),
                  key=lambda r: (_aware(r["created_at"]), r["id"]))  # oldest first
    for run in runs:
        if run["status"] != "done" or (model is not None and run["model"] != model):
            continue
        if since is not None and run["id"] != baseline and _aware(run["created_at"]) < _aware(since):
            continue
        figures = run_figures(engine, int(run["id"]))
        value = figures["metrics"].get(metric)
        if not isinstance(value, (int, float)):
            continue
        interval = figures["intervals"].get(metric) or {}
        series.setdefault(run["model"], []).append({
            "run_id": int(run["id"]), "kind": run["kind"], "created_at": run["created_at"],
            "value": float(value), "low": interval.get("low"), "high": interval.get("high")})

    marks = [{"model": b.model, "run_id": b.run_id, "set_by": b.set_by, "set_at": b.set_at}
             for b in baseline_history(engine, int(ds.id), model)]
    stored = {m["model"]: m["run_id"] for m in marks}  # the newest change of each model
    for name, points in series.items():
        ids = [p["run_id"] for p in points]
        base = (baseline if baseline in ids else stored.get(name) if stored.get(name) in ids
                else ids[0])
        for p in points:
            p["baseline"] = p["run_id"] == base
            test = None if p["baseline"] else _paired(engine, base, p["run_id"])
            p["test"] = test["finding"] if test else None
            base_value = next(q["value"] for q in points if q["run_id"] == base)
            worse = p["value"] > base_value if better == "lower" else p["value"] < base_value
            p["regression"] = bool(test and test["significant"] and worse)
            p["gate"] = (gate_any(engine, p["run_id"], gate,
                                  baseline_id=None if p["baseline"] else base).passed
                         if gate is not None else None)
    return {"dataset": ds.name, "metric": metric, "better": better, "alpha": alpha,
            "series": series, "baseline_marks": marks}


def trend_figure(result: Mapping[str, Any]) -> Any:
    """The metric over time per model, intervals as error bars; the baseline as a
    diamond, a failed gate as a red x, a regression as a red circle."""
    import plotly.graph_objects as go

    fig = go.Figure()
    for model, points in result["series"].items():
        fig.add_trace(go.Scatter(
            x=[p["created_at"] for p in points], y=[p["value"] for p in points],
            mode="lines+markers", name=model,
            error_y={"type": "data", "symmetric": False,
                     "array": [(p["high"] - p["value"]) if p["high"] is not None else 0
                               for p in points],
                     "arrayminus": [(p["value"] - p["low"]) if p["low"] is not None else 0
                                    for p in points]},
            marker={"symbol": ["diamond" if p["baseline"] else
                               "x" if p["gate"] is False else "circle" for p in points],
                    "size": [14 if p["baseline"] or p["regression"] or p["gate"] is False
                             else 8 for p in points],
                    "line": {"width": [3 if p["regression"] else 0 for p in points],
                             "color": "#d73027"}},
            customdata=[[p["run_id"], "baseline" if p["baseline"] else
                         ("REGRESSION" if p["regression"] else ""),
                         {True: "gate passed", False: "gate FAILED", None: ""}[p["gate"]]]
                        for p in points],
            hovertemplate="run %{customdata[0]}: %{y:.3f} %{customdata[1]} "
                          "%{customdata[2]}<extra>" + str(model) + "</extra>"))
    fig.update_layout(title=f"{result['metric']} over time on {result['dataset']} "
                            f"({result['better']} is better)",
                      xaxis_title="run created", yaxis_title=result["metric"],
                      margin={"t": 50, "b": 40, "l": 40, "r": 10})
    time_axis(fig, [p["created_at"] for points in result["series"].values() for p in points])
    for mark in result.get("baseline_marks", []):  # each baseline change, as a line
        fig.add_vline(x=mark["set_at"], line_dash="dot", line_color="#888")
        fig.add_annotation(x=mark["set_at"], yref="paper", y=1, showarrow=False,
                           text=f"baseline: run {mark['run_id']}", font={"size": 10})
    return fig
