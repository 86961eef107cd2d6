"""The run list's queries: one filtered page of runs, the filter values, item ids by
position. Filtering, counting and paging run in SQL and read the summary columns only,
never `config` (model snapshots, item id lists) or calls."""
from __future__ import annotations

from types import SimpleNamespace
from typing import Any, Optional, Sequence

from sqlalchemy import func, select

from evalcore.store import run_state
from evalcore.store.db import Bind, reading
from evalcore.store.tables import Dataset, Item, Run

DATASET = Dataset.__table__
ITEM = Item.__table__
RUN = Run.__table__

SUMMARY_RUN_COLUMNS = ("id", "kind", "status", "name", "model", "judge", "dataset_id", "rounds",
                       "done", "total", "errors", "retries", "cancel_requested", "created_at",
                       "started_at", "finished_at", "heartbeat_at")
"""What the run list reads: never `config` (model snapshots, item id lists) or calls.
The state columns (status, cancel_requested, finished_at) are `store.run_state`'s."""


def _summary_columns() -> list[Any]:
    state = {c.name: c for c in run_state.STATE}
    return [state.get(c, RUN.c[c]) for c in SUMMARY_RUN_COLUMNS]


def _run_query(columns: Sequence[Any], *, kind: Sequence[str], status: Sequence[str],
               model: Sequence[str], dataset: Sequence[str]) -> Any:
    query = run_state.with_state(select(*columns).select_from(RUN)).outerjoin(
        DATASET, DATASET.c.id == RUN.c.dataset_id)
    for column, wanted in ((RUN.c.kind, kind), (run_state.STATUS, status), (RUN.c.model, model),
                           (DATASET.c.name, dataset)):
        if wanted:
            query = query.where(column.in_(list(wanted)))
    return query


def run_page(conn: Bind, *, kind: Sequence[str] = (), status: Sequence[str] = (),
             model: Sequence[str] = (), dataset: Sequence[str] = (), limit: int = 100,
             offset: int = 0) -> tuple[list[SimpleNamespace], int]:
    """(one page of runs newest first, each the summary columns plus `dataset_name`; how
    many runs match the filters). An empty filter keeps all."""
    filters = {"kind": kind, "status": status, "model": model, "dataset": dataset}
    query = (_run_query([*_summary_columns(), DATASET.c.name.label("dataset_name")], **filters)
             .order_by(RUN.c.id.desc()).limit(max(limit, 0)).offset(max(offset, 0)))
    count = _run_query([func.count(RUN.c.id)], **filters)
    with reading(conn) as tx:
        rows = [SimpleNamespace(**{**row._mapping, **run_state.state_row(row)})
                for row in tx.execute(query)]
        total = int(tx.execute(count).scalar_one())
    return rows, total


def run_filter_values(conn: Bind) -> dict[str, list[str]]:
    """The distinct kinds, statuses, models and dataset names of stored runs, sorted."""
    queries = {"kind": select(RUN.c.kind).distinct(),
               "status": run_state.with_state(select(run_state.STATUS).select_from(RUN)).distinct(),
               "model": select(RUN.c.model).distinct(),
               "dataset": select(DATASET.c.name).where(
                   DATASET.c.id.in_(select(RUN.c.dataset_id).distinct()))}
    with reading(conn) as tx:
        return {key: sorted(str(v) for (v,) in tx.execute(q) if v is not None)
                for key, q in queries.items()}


def item_ids_at(conn: Bind, dataset_id: int, positions: Sequence[int]) -> dict[int, int]:
    """{item idx: item id} of a dataset's items at `positions`."""
    query = select(ITEM.c.idx, ITEM.c.id).where(ITEM.c.dataset_id == dataset_id)
    wanted = set(positions)
    with reading(conn) as tx:
        return {int(pos): int(i) for pos, i in tx.execute(query) if pos in wanted}


def dataset_runs(conn: Bind, dataset_id: int) -> list[dict[str, Any]]:
    """Summary columns (no config blob) of the runs on a dataset, newest first."""
    query = (run_state.with_state(select(RUN.c.id, RUN.c.kind, RUN.c.model, RUN.c.created_at,
                                         *run_state.STATE).select_from(RUN))
             .where(RUN.c.dataset_id == dataset_id).order_by(RUN.c.id.desc()))
    with reading(conn) as tx:
        return [{"id": row.id, "kind": row.kind, "status": row.status, "model": row.model,
                 "created_at": row.created_at,
                 "finished_at": run_state.state_row(row)["finished_at"]}
                for row in tx.execute(query)]


def finished_runs_of(conn: Bind, model: str) -> list[tuple[int, str, Optional[int]]]:
    """(id, kind, dataset id) of a model's finished (done) runs, newest first."""
    query = (run_state.with_state(select(RUN.c.id, RUN.c.kind, RUN.c.dataset_id).select_from(RUN))
             .where(RUN.c.model == model, run_state.STATUS == "done")
             .order_by(RUN.c.id.desc()))
    with reading(conn) as tx:
        return [(int(i), str(k), d) for i, k, d in tx.execute(query)]
