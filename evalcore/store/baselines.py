"""The stored baseline of each dataset (or suite) and model: the run a team calls
"production". Gates, the trend and the monitoring view compare against it by default.
Each change is a new row, so the history is the trend's marks; the newest row rules."""
from __future__ import annotations

from typing import Any, Optional

from sqlalchemy import select
from sqlalchemy.engine import Row

from evalcore.errors import RunError
from evalcore.store import run_state
from evalcore.store.db import Bind, reading, transaction
from evalcore.store.monitor_tables import Baseline
from evalcore.store.tables import Dataset, Run
from evalcore.store.types import utcnow

BASELINE = Baseline.__table__
DATASET = Dataset.__table__
RUN = Run.__table__

USABLE = ("done",)


def set_baseline(conn: Bind, run_id: int, set_by: str = "") -> Row:
    """Mark run `run_id` (finished) as the baseline of its dataset and model."""
    with transaction(conn) as tx:
        found = run_state.runs_with_state(
            tx, run_state.select_runs().where(RUN.c.id == run_id))
        if not found:
            raise RunError(f"run {run_id} not found; list runs with `python -m evalcore runs "
                           "list`")
        run = found[0]
        if run.status not in USABLE or run.dataset_id is None:
            raise RunError(f"run {run_id} is {run.status}; only a finished (done) run of a "
                           "dataset can be a baseline")
        row_id = tx.execute(BASELINE.insert().values(
            dataset_id=int(run.dataset_id), model=run.model, run_id=run_id, set_by=set_by,
            set_at=utcnow()).returning(BASELINE.c.id)).scalar_one()
        return tx.execute(select(BASELINE).where(BASELINE.c.id == row_id)).one()


def current_baseline(conn: Bind, dataset_id: int, model: str) -> Optional[Row]:
    """The baseline in force for (dataset, model), or None."""
    with reading(conn) as tx:
        return tx.execute(
            select(BASELINE).where(BASELINE.c.dataset_id == dataset_id, BASELINE.c.model == model)
            .order_by(BASELINE.c.id.desc()).limit(1)).first()


def baseline_for_run(conn: Bind, run_id: int) -> Optional[int]:
    """The stored baseline run of `run_id`'s dataset and model (None if none is set or the
    run is its own baseline: a run is not gated against itself)."""
    with reading(conn) as tx:
        run = tx.execute(select(RUN.c.dataset_id, RUN.c.model).where(RUN.c.id == run_id)
                           ).first()
    if run is None or run.dataset_id is None:
        return None
    row = current_baseline(conn, int(run.dataset_id), run.model)
    if row is None or int(row.run_id) == int(run_id):
        return None
    return int(row.run_id)


def baseline_history(conn: Bind, dataset_id: int, model: Optional[str] = None
                     ) -> list[Row]:
    """Every baseline change of a dataset (one model's, or all), oldest first."""
    query = select(BASELINE).where(BASELINE.c.dataset_id == dataset_id)
    if model:
        query = query.where(BASELINE.c.model == model)
    with reading(conn) as tx:
        return list(tx.execute(query.order_by(BASELINE.c.id)).all())


def baseline_info(conn: Bind, dataset_id: int, model: str) -> dict[str, Any]:
    """What `baseline show` and the monitoring view print: the run in force and history."""
    with reading(conn) as tx:
        name = tx.execute(select(DATASET.c.name).where(DATASET.c.id == dataset_id)
                            ).scalar_one()
    history = baseline_history(conn, dataset_id, model)
    rows = [{"run_id": b.run_id, "set_by": b.set_by, "set_at": b.set_at.isoformat()}
            for b in history]
    return {"dataset": name, "model": model,
            "run_id": rows[-1]["run_id"] if rows else None, "history": rows}


def baselines_in_force(conn: Bind) -> list[dict[str, Any]]:
    """Every (dataset, model) with a stored baseline: the run in force, who set it and
    when, and how many changes its history holds (the Monitoring page's table)."""
    with reading(conn) as tx:
        rows = list(tx.execute(select(BASELINE).order_by(BASELINE.c.id)).all())
        names = {int(i): str(n) for i, n in tx.execute(select(DATASET.c.id, DATASET.c.name))}
    latest: dict[tuple[int, str], dict[str, Any]] = {}
    for b in rows:
        key = (int(b.dataset_id), b.model)
        changes = latest.get(key, {}).get("changes", 0) + 1
        latest[key] = {"dataset": names.get(key[0], f"#{key[0]} (deleted)"), "model": b.model,
                       "run_id": int(b.run_id), "set_by": b.set_by,
                       "set_at": b.set_at.isoformat(), "changes": changes}
    return list(latest.values())
