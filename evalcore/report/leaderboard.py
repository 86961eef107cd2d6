"""A dataset's (or fairness suite's) leaderboard: one row per model that ran on it.

Per model, the latest finished run of each kind (`evalcore.kinds`) on the dataset,
unless runs are chosen (where two kinds give one figure, the kind with the higher
`precedence` wins): accuracy and mean success rate (stability run; else the
robustness run's clean accuracy), mG-Pass@N (right in most of N rounds; `sort=
"mg_pass_at_k"` ranks by it), perfect and flaky shares, PDR per attack level,
fairness score and level, and over the runs used: errors, tokens, cost and mean latency.
Rates carry their intervals as `<metric>_low` / `<metric>_high` (see `run_figures`);
`runs` names the run behind each kind, so every figure can be traced.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Optional

from sqlalchemy.engine import Engine

from evalcore.dataset import get_dataset
from evalcore.kinds import all_kinds, find_kind, kind_names
from evalcore.report.run_figures import run_figures
from evalcore.store import run_browse

RATE_COLUMNS = ("accuracy", "mean_success_rate", "mg_pass_at_k", "perfect_share", "flaky_share",
                "pdr",
                "pdr_char", "pdr_word", "pdr_sentence", "accuracy_attacked")
COLUMNS = ("model", *RATE_COLUMNS, "fairness_score", "fairness_level", "errors", "tokens",
           "cost", "mean_latency_ms", "runs")


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


def _own_columns() -> list[str]:
    """The kinds' own headline figures (`EvalKind.headline`) that are no column yet."""
    return list(dict.fromkeys(name for kind in all_kinds().values() for name in kind.headline
                              if name not in COLUMNS))


def _row(model: str, figures: dict[str, dict[str, Any]],
         own: Sequence[str] = ()) -> dict[str, Any]:
    row: dict[str, Any] = {"model": model, "runs": {k: f["run"]["id"] for k, f in figures.items()}}

    def precedence(kind: str) -> int:
        found = find_kind(kind)
        return found.precedence if found else 0

    source = {name: kind for kind in sorted(figures, key=precedence)  # the highest wins
              for name in figures[kind].get("metrics", {})}
    for name in (*RATE_COLUMNS, *own):
        fig = figures.get(source.get(name, ""), {})
        row[name] = fig.get("metrics", {}).get(name)
        interval = fig.get("intervals", {}).get(name) or {}
        row[f"{name}_low"], row[f"{name}_high"] = interval.get("low"), interval.get("high")
    for name in ("fairness_score", "fairness_level"):
        row[name] = figures.get(source.get(name, ""), {}).get("metrics", {}).get(name)
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
    own = _own_columns()
    rows = [_row(model, {kind: run_figures(engine, run_id) for kind, run_id in kinds.items()},
                 own)
            for model, kinds in choice.items()]
    lower_better = sort.startswith("pdr") or sort in ("flaky_share", "errors", "cost",
                                                      "mean_latency_ms")

    def key(row: dict[str, Any]) -> tuple[bool, float]:
        value: Optional[float] = row.get(sort)
        if value is None:
            return True, 0.0
        return False, float(value) if lower_better else -float(value)

    rows.sort(key=key)
    return {"dataset": ds.name, "dataset_id": int(ds.id), "sort": sort, "rows": rows,
            "columns": [*COLUMNS[:len(RATE_COLUMNS) + 1], *own,
                        *COLUMNS[len(RATE_COLUMNS) + 1:]]}
