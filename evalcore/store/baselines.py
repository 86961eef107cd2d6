"""The stored baseline of each dataset (or suite) and model: the run a team calls
"production". Gates, the trend and the monitoring view compare against it by default.
Each change is a new row, so the history is the trend's marks; the newest row rules."""
from __future__ import annotations

from typing import Any, Optional

from sqlalchemy import select
from sqlmodel import Session

from evalcore.errors import RunError
from evalcore.store import run_state
from evalcore.store.db import reader, session_scope
from evalcore.store.monitor_tables import Baseline
from evalcore.store.tables import Dataset, Run, utcnow

USABLE = ("done",)


def set_baseline(engine: Any, run_id: int, set_by: str = "") -> Baseline:
    """Mark run `run_id` (finished) as the baseline of its dataset and model."""
    with session_scope(engine) as session:
        found = run_state.runs_with_state(session, select(Run).where(Run.id == run_id))
        if not found:
            raise RunError(f"run {run_id} not found; list runs with `python -m evalcore runs "
                           "list`")
        run = found[0]
        if run.status not in USABLE or run.dataset_id is None:
            raise RunError(f"run {run_id} is {run.status}; only a finished (done) run of a "
                           "dataset can be a baseline")
        row = Baseline(dataset_id=int(run.dataset_id), model=run.model, run_id=run_id,
                       set_by=set_by, set_at=utcnow())
        session.add(row)
        session.flush()
        session.refresh(row)
    return row


def current_baseline(engine: Any, dataset_id: int, model: str) -> Optional[Baseline]:
    """The baseline in force for (dataset, model), or None."""
    with Session(reader(engine)) as session:
        return session.scalars(
            select(Baseline).where(Baseline.dataset_id == dataset_id, Baseline.model == model)
            .order_by(Baseline.id.desc()).limit(1)).first()  # type: ignore[union-attr]


def baseline_for_run(engine: Any, run_id: int) -> Optional[int]:
    """The stored baseline run of `run_id`'s dataset and model (None if none is set or the
    run is its own baseline: a run is not gated against itself)."""
    with Session(reader(engine)) as session:
        run = session.get(Run, run_id)
    if run is None or run.dataset_id is None:
        return None
    row = current_baseline(engine, int(run.dataset_id), run.model)
    if row is None or int(row.run_id) == int(run_id):
        return None
    return int(row.run_id)


def baseline_history(engine: Any, dataset_id: int, model: Optional[str] = None
                     ) -> list[Baseline]:
    """Every baseline change of a dataset (one model's, or all), oldest first."""
    query = select(Baseline).where(Baseline.dataset_id == dataset_id)
    if model:
        query = query.where(Baseline.model == model)
    with Session(reader(engine)) as session:
        return list(session.scalars(query.order_by(Baseline.id)))  # type: ignore[arg-type]


def baseline_info(engine: Any, dataset_id: int, model: str) -> dict[str, Any]:
    """What `baseline show` and the monitoring view print: the run in force and history."""
    with Session(reader(engine)) as session:
        name = session.get(Dataset, dataset_id).name  # type: ignore[union-attr]
    history = baseline_history(engine, dataset_id, model)
    rows = [{"run_id": b.run_id, "set_by": b.set_by, "set_at": b.set_at.isoformat()}
            for b in history]
    return {"dataset": name, "model": model,
            "run_id": rows[-1]["run_id"] if rows else None, "history": rows}


def baselines_in_force(engine: Any) -> list[dict[str, Any]]:
    """Every (dataset, model) with a stored baseline: the run in force, who set it and
    when, and how many changes its history holds (the Monitoring page's table)."""
    with Session(reader(engine)) as session:
        rows = list(session.scalars(select(Baseline).order_by(Baseline.id)))  # type: ignore[arg-type]
        names = {int(i): str(n) for i, n in session.execute(select(Dataset.id, Dataset.name))}
    latest: dict[tuple[int, str], dict[str, Any]] = {}
    for b in rows:
        key = (int(b.dataset_id), b.model)
        changes = latest.get(key, {}).get("changes", 0) + 1
        latest[key] = {"dataset": names.get(key[0], f"#{key[0]} (deleted)"), "model": b.model,
                       "run_id": int(b.run_id), "set_by": b.set_by,
                       "set_at": b.set_at.isoformat(), "changes": changes}
    return list(latest.values())
