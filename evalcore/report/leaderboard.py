"""A dataset's (or fairness suite's) leaderboard: one row per model that ran on it.

Per model, the latest finished run of each kind (`evalcore.kinds`) on the dataset,
unless runs are chosen (where two kinds give one figure, the kind with the higher
`precedence` wins). The columns are the figures the kinds declare as leaderboard columns
(`MetricSpec.column`: the accuracy, mean success rate, mG-Pass@N, perfect and flaky
shares, PDR per attack level, fairness score and level, ...), then over the runs used:
errors, tokens, cost and mean latency. A figure carries its interval as `<metric>_low` /
`<metric>_high` (the run's figures, `run_figures`); `intervals` says how each was made;
`runs` names the run behind each kind, so every figure can be traced. The order
follows the sort figure's direction (`MetricSpec.better`).
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Optional

from sqlalchemy.engine import Engine

from evalcore.dataset import get_dataset
from evalcore.kinds import directions, find_kind, kind_names, metric_specs
from evalcore.kinds._metric import TAIL
from evalcore.report.run_figures import figure_metrics, run_figures
from evalcore.store import run_browse


def dataset_runs(engine: Engine, dataset_id: int) -> list[dict[str, Any]]:
    """Summary columns (no config blob) of the runs on a dataset, newest first."""
    return run_browse.dataset_runs(engine, dataset_id)


def chosen_runs(runs: Sequence[dict[str, Any]], pinned: Sequence[int] = ()
                ) -> dict[str, dict[str, int]]:
    """{model: {kind: run id}}: the newest done run per model and kind, where a pinned
    run replaces its model's run of that kind."""
    known = kind_names()
    chosen: dict[str, dict[str, int]] = {}
    for run in runs:  # newest first
        if run["kind"] in known and run["status"] == "done":
            chosen.setdefault(run["model"], {}).setdefault(run["kind"], int(run["id"]))
    by_id = {int(r["id"]): r for r in runs}
    for run_id in pinned:
        run = by_id.get(int(run_id))
        if run is not None and run["kind"] in known:
            chosen.setdefault(run["model"], {})[run["kind"]] = int(run_id)
    return chosen


def metric_columns() -> list[str]:
    """The figures the kinds declare as leaderboard columns, in listing order."""
    return [name for name, spec in metric_specs().items() if spec.column]


def _row(model: str, figures: dict[str, dict[str, Any]],
         columns: Sequence[str]) -> dict[str, Any]:
    row: dict[str, Any] = {"model": model, "runs": {k: f["run"]["id"] for k, f in figures.items()}}

    def precedence(kind: str) -> int:
        found = find_kind(kind)
        return found.precedence if found else 0

    found = {}  # name -> Metric of the kind with the highest precedence that has it
    for kind in sorted(figures, key=precedence):
        found.update({m.name: m for m in figure_metrics(figures[kind])})
    methods: dict[str, str] = {}
    for name in columns:
        metric = found.get(name)
        row[name] = metric.value if metric else None
        interval = (metric.interval if metric else None) or {}
        row[f"{name}_low"], row[f"{name}_high"] = interval.get("low"), interval.get("high")
        if interval.get("method"):
            methods[name] = interval["method"]
    row["intervals"] = methods
    used = [f["metrics"] for f in figures.values()]
    row["errors"] = sum(m["errors"] for m in used)
    row["tokens"] = sum(m["tokens"] for m in used)
    costs = [m["cost"] for m in used]
    row["cost"] = None if any(c is None for c in costs) else sum(costs)
    calls = sum(m["calls"] for m in used)
    latencies = [(m["mean_latency_ms"], m["calls"]) for m in used if m["mean_latency_ms"]]
    row["mean_latency_ms"] = (sum(v * n for v, n in latencies) / sum(n for _, n in latencies)
                              if latencies and calls else None)
    return row


def leaderboard(engine: Engine, dataset: str | int, *, runs: Sequence[int] = (),
                sort: str = "accuracy") -> dict[str, Any]:
    """The leaderboard of `dataset` (name or id): `rows` (one per model, best `sort` first,
    unmeasured last) and `columns`."""
    ds = get_dataset(engine, dataset)
    choice = chosen_runs(dataset_runs(engine, int(ds.id)), runs)
    columns = metric_columns()
    rows = [_row(model, {kind: run_figures(engine, run_id) for kind, run_id in kinds.items()},
                 columns)
            for model, kinds in choice.items()]
    lower_better = directions().get(sort) == "lower"

    def key(row: dict[str, Any]) -> tuple[bool, float]:
        value: Optional[float] = row.get(sort)
        if not isinstance(value, (int, float)):
            return True, 0.0
        return False, float(value) if lower_better else -float(value)

    rows.sort(key=key)
    return {"dataset": ds.name, "dataset_id": int(ds.id), "sort": sort, "rows": rows,
            "columns": ["model", *columns, *TAIL, "runs"]}


def board_table(board: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The leaderboard as a table to show: each figure's value, its bounds (`_low`,
    `_high`) and its 95% interval in words as a column of its own ("0.650 to 0.768"),
    then the usage columns and the runs."""
    table = []
    for row in board["rows"]:
        line: dict[str, Any] = {"model": row["model"]}
        for name in board["columns"][1:-1]:
            line[name] = row.get(name)
            if f"{name}_low" in row:
                low, high = row[f"{name}_low"], row[f"{name}_high"]
                line[f"{name}_low"], line[f"{name}_high"] = low, high
                line[f"{name} 95% interval"] = ("-" if low is None else
                                                f"{low:.3f} to {high:.3f}")
        line["runs"] = ", ".join(f"{k} #{v}" for k, v in row["runs"].items())
        table.append(line)
    return table
