"""Stored runs for the Results page and the CLI: the run list (filtered and paged in
SQL, `store.run_browse`), one run's details and the first calls of a run as a table.
pandas is imported inside functions to keep `import evalcore` fast."""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from itertools import islice
from typing import TYPE_CHECKING, Any

from sqlalchemy.engine import Engine

from evalcore.dataset import get_dataset
from evalcore.metrics.cost import call_cost, prices_of
from evalcore.report.export import CALL_COLUMNS, iter_call_dicts
from evalcore.report.timing import active_seconds, elapsed_seconds
from evalcore.runner.start import is_stale, waiting_text
from evalcore.store import call_usage, queries, run_items
from evalcore.store.jobs import busy_workers
from evalcore.store.run_browse import run_filter_values, run_page

if TYPE_CHECKING:
    import pandas as pd

RUN_COLUMNS = ("id", "kind", "status", "name", "model", "judge", "dataset", "rounds", "done",
               "total", "progress", "errors", "retries", "cancel_requested", "stale",
               "created_at", "started_at", "finished_at", "duration_s")


def _duration_s(run: Any, now: datetime) -> float | None:
    return elapsed_seconds(run, now)


def runs_frame(runs: Iterable[Any], datasets: Mapping[int, str] | None = None,
               now: datetime | None = None, *, workers_busy: bool = False) -> pd.DataFrame:
    """One row per run (the store's Run rows) for the browser, in the order given.

    `datasets` maps dataset ids to names (ids are shown when missing); `stale` marks a
    queued/running run whose process is gone (a queued one is not while `workers_busy`:
    it waits its turn); `duration_s` runs to now for a live run.
    """
    import pandas as pd

    now = now or datetime.now(UTC)
    names = datasets or {}
    rows = []
    for run in runs:
        rows.append({
            "id": int(run.id), "kind": run.kind, "status": run.status, "name": run.name,
            "model": run.model, "judge": run.judge,
            "dataset": (names.get(run.dataset_id, str(run.dataset_id))
                        if run.dataset_id is not None else ""),
            "rounds": run.rounds, "done": run.done, "total": run.total,
            "progress": min(run.done / run.total, 1.0) if run.total else 0.0,
            "errors": run.errors, "retries": run.retries,
            "cancel_requested": bool(run.cancel_requested), "stale": is_stale(run, now, workers_busy=workers_busy),
            "created_at": run.created_at, "started_at": run.started_at,
            "finished_at": run.finished_at, "duration_s": _duration_s(run, now)})
    return pd.DataFrame(rows, columns=list(RUN_COLUMNS))


PAGE_SIZE = 100


def run_list(engine: Engine, *, kind: Sequence[str] = (), status: Sequence[str] = (),
             model: Sequence[str] = (), dataset: Sequence[str] = (), limit: int = PAGE_SIZE,
             offset: int = 0, now: datetime | None = None) -> tuple[pd.DataFrame, int]:
    """One page of the run list, newest first, filtered and paged in SQL, reading the
    summary columns only; returns (`runs_frame` rows, runs matching the filters)."""
    rows, total = run_page(engine, kind=kind, status=status, model=model, dataset=dataset,
                           limit=limit, offset=offset)
    names = {r.dataset_id: r.dataset_name for r in rows if r.dataset_name is not None}
    busy = any(r.status == "queued" for r in rows) and bool(busy_workers(engine))
    return runs_frame(rows, names, now=now, workers_busy=busy), total


def run_filter_options(engine: Engine) -> dict[str, list[str]]:
    """The distinct kinds, statuses, models and dataset names of stored runs (for filters)."""
    return run_filter_values(engine)


def run_details(engine: Engine, run_id: int) -> dict[str, Any]:
    """What the details view shows: the run's settings (spec and model snapshots, which
    hold env var names, never keys), progress, timing (elapsed `duration_s`, and
    `active_s` without the pauses, `report.timing`), token usage and errors."""
    run = queries.get_run(engine, run_id)
    now = datetime.now(UTC)
    dataset = None
    if run.dataset_id is not None:
        try:
            dataset = get_dataset(engine, int(run.dataset_id)).name
        except Exception:  # noqa: BLE001 - a deleted dataset must not hide the run
            dataset = f"#{run.dataset_id} (deleted)"
    config = run.config or {}
    return {
        "id": run.id, "kind": run.kind, "status": run.status, "name": run.name,
        "model": run.model, "judge": run.judge, "rounds": run.rounds, "dataset": dataset,
        "created_by": run.created_by,
        "spec": queries.redact_secrets(config.get("spec", {})),
        "models": queries.redact_secrets(config.get("models", {})),
        "items": len(run_items.run_item_ids(engine, run_id)),
        "progress": queries.progress(engine, run_id),
        "stale": is_stale(run, now, workers_busy=bool(busy_workers(engine))),
        "waiting": waiting_text(engine, run, now),
        "timing": {"created_at": run.created_at, "started_at": run.started_at,
                   "finished_at": run.finished_at, "heartbeat_at": run.heartbeat_at,
                   "duration_s": _duration_s(run, now),
                   "active_s": active_seconds(engine, run_id)},
        "usage": call_usage.call_stats(engine, run_id),
        "error": run.error,
    }


def calls_frame(engine: Engine, run_id: int, limit: int = 500, *,
                errors_only: bool = False) -> pd.DataFrame:
    """The first `limit` calls of a run (prompt, answer, score, reason, latency, tokens,
    error, attempts, and cost from the run's model prices; None without a price),
    optionally only those that ended in an error."""
    import pandas as pd

    run = queries.get_run(engine, run_id)  # RunError for an unknown run
    rows = list(islice(iter_call_dicts(engine, run_id, errors_only=errors_only,
                                       batch=max(min(limit, 1000), 1)), max(limit, 0)))
    frame = pd.DataFrame(rows, columns=list(CALL_COLUMNS))
    models = (run.config or {}).get("models") or {}
    frame["cost"] = [call_cost(r["prompt_tokens"], r["completion_tokens"],
                               *prices_of(models.get(r["model"] or run.model, {})))
                     for r in rows]
    return frame


_PASS_WORDS = {"answer": "answers", "judge": "judge verdicts", "retried": "failed attempts sent again",
               "rejudge": "re-judgements", "analysis": "judge ratings",
               "meaning": "meaning checks", "variant": "option-order and template calls"}


def calls_text(by_pass: Mapping[str, int]) -> str:
    """'500 answers, 50 re-judgements': a run's stored calls by what they were for, the
    run's own answers first (a bare total counted re-judging as answers)."""
    parts = [f"{n:,} {_PASS_WORDS.get(name, name)}" for name, n in by_pass.items() if n]
    return ", ".join(parts) if parts else "none"

