"""What the monitoring view and `schedules list` show, from one function each, so the page
and the CLI cannot disagree: per schedule its period, next due time, the runs it made
with their verdicts and alert deliveries, and each gated figure over time against its
threshold and the baseline's value (read from the checks stored at each gate)."""
from __future__ import annotations

from typing import Any

from evalcore.monitor.channels import shown
from evalcore.report.stability_charts import time_axis
from evalcore.store.alerts import deliveries
from evalcore.store.schedules import every_label, list_schedules, run_statuses, schedule_runs


def _iso(moment: Any) -> Any:
    return moment.isoformat() if moment is not None else None


def schedule_info(engine: Any, schedule: Any, *, recent: int = 10) -> dict[str, Any]:
    """One schedule as the CLI's JSON and the page's table row: id, kind, every,
    next_due, paused, runs (the run ids it made), last (its newest due times: `status`
    the due time's own, "created" once it made its run or "skipped"; `run_status` that
    run's status, from `store.run_state`, None for a due time without a run or a deleted
    run; `verdict` the gate's)."""
    rows = schedule_runs(engine, int(schedule.id))
    statuses = run_statuses(engine, [int(r.run_id) for r in rows[-recent:]
                                     if r.run_id is not None])
    sent = {}
    for d in deliveries(engine, schedule_id=int(schedule.id)):
        if d["run_id"] is not None:
            sent.setdefault(d["run_id"], []).append(d)
    last = [{"due_at": _iso(r.due_at), "status": r.status, "run_id": r.run_id,
             "run_status": statuses.get(int(r.run_id)) if r.run_id is not None else None,
             "verdict": r.verdict, "reason": r.reason, "baseline_id": r.baseline_id,
             "alerts": [{k: d[k] for k in ("channel", "status", "error")}
                        for d in sent.get(r.run_id, [])]}
            for r in rows[-recent:]]
    return {"id": int(schedule.id), "kind": schedule.kind, "params": dict(schedule.params),
            "every": every_label(schedule.every_s, schedule.cron),
            "next_due": None if schedule.paused else _iso(schedule.next_due_at),
            "paused": bool(schedule.paused), "channels": shown(schedule.channels),
            "gate": dict(schedule.gate) or "default", "created_by": schedule.created_by,
            "runs": [r.run_id for r in rows if r.run_id is not None],
            "skipped": sum(r.status == "skipped" for r in rows), "last": last}


def row_state(row: dict[str, Any]) -> str:
    """A due time in one word for the page and the CLI: the gate's verdict once checked,
    else its run's status ("running", "failed"), else the due time's ("skipped")."""
    verdict = row.get("verdict")
    if verdict and verdict != "checking":
        return str(verdict)
    return str(row.get("run_status") or row.get("status") or "")


def monitoring(engine: Any) -> list[dict[str, Any]]:
    """Every schedule's `schedule_info`, oldest schedule first."""
    return [schedule_info(engine, s) for s in list_schedules(engine)]


def figure_series(engine: Any, schedule_id: int) -> dict[str, list[dict[str, Any]]]:
    """{check name: [{run_id, due_at, value, limit, baseline, passed}]}: each gated figure
    of the schedule's gated runs, oldest first (checks that did not apply left out). `limit`
    is a check's bound (a regression check's: the baseline's value moved by the allowed
    regression); a regression check's `baseline` is the baseline run's value."""
    series: dict[str, list[dict[str, Any]]] = {}
    for row in schedule_runs(engine, schedule_id):
        for check in row.checks or []:
            name = str(check.get("name", ""))
            if name.endswith("_status") or not check.get("counted", True):
                continue  # a check that did not apply has no figure to draw
            # a check stored before checks carried their baseline held it in threshold
            old_regression = name.startswith("regression:") and "baseline" not in check
            series.setdefault(name, []).append({
                "run_id": row.run_id, "due_at": _iso(row.due_at), "value": check.get("value"),
                "limit": None if old_regression else check.get("threshold"),
                "baseline": check.get("threshold") if old_regression else check.get("baseline"),
                "passed": bool(check.get("passed"))})
    return series


def series_figure(name: str, points: list[dict[str, Any]]) -> Any:
    """One gated figure over the schedule's runs, with its bound and baseline lines."""
    import plotly.graph_objects as go

    fig = go.Figure()
    fig.add_trace(go.Scatter(
        x=[p["due_at"] for p in points], y=[p["value"] for p in points], name=name,
        mode="lines+markers", customdata=[p["run_id"] for p in points],
        marker={"symbol": ["circle" if p["passed"] else "x" for p in points], "size": 10},
        hovertemplate="run %{customdata}: %{y:.4g}<extra></extra>"))
    for key, title in (("limit", "allowed bound"), ("baseline", "baseline")):
        if any(p[key] is not None for p in points):
            fig.add_trace(go.Scatter(x=[p["due_at"] for p in points],
                                     y=[p[key] for p in points], name=title,
                                     mode="lines", line={"dash": "dash"}))
    fig.update_layout(title=name, height=280, margin={"t": 40, "b": 30, "l": 40, "r": 10})
    return time_axis(fig, [p["due_at"] for p in points])
