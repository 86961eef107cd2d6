"""A run's state has one owner: a run executed by the job queue shows its newest run
job's state (queued, running, cancel asked, how it ended), derived by `store.run_state`
on every read; no transition writes the run row, and no code in evalcore/ writes a run's
status anywhere else, so the two tables can never disagree."""
from __future__ import annotations

import ast
import time
from pathlib import Path

from sqlalchemy import select

from evalcore.store import jobs, queries, run_browse
from evalcore.store.db import reading
from evalcore.store.tables import Run

RUN = Run.__table__

ROOT = Path(__file__).resolve().parents[2] / "evalcore"
STATE = {"status", "error", "finished_at", "cancel_requested"}
OWNER = ROOT / "store" / "run_state.py"


def _run_with_job(store) -> tuple[int, int]:
    run = queries.create_run(store, kind="stability", model="m", total=4)
    return int(run.id), jobs.create_job(store, "run", run_id=int(run.id))


def _row(store, run_id: int) -> dict:
    """The run row as stored (no derivation)."""
    with reading(store) as conn:
        return dict(conn.execute(select(RUN).where(RUN.c.id == run_id)).one()._mapping)


def _shown(store, run_id: int) -> tuple:
    run = queries.get_run(store, run_id)
    return run.status, run.error, run.cancel_requested, run.finished_at is not None


def test_every_job_transition_shows_on_the_run_with_no_write_to_it(store):
    run_id, job_id = _run_with_job(store)
    stored = _row(store, run_id)
    seen = [_shown(store, run_id)]
    claimed = jobs.claim_job(store, "w1", lease_s=60)
    seen.append(_shown(store, run_id))
    jobs.release_job(store, jobs.Fence(job_id, claimed.token))
    seen.append(_shown(store, run_id))
    claimed = jobs.claim_job(store, "w1", lease_s=60)
    jobs.cancel_job(store, job_id)  # running: a cancel is asked, the worker stops later
    seen.append(_shown(store, run_id))
    jobs.finish_job(store, jobs.Fence(job_id, claimed.token), "cancelled", error="budget")
    seen.append(_shown(store, run_id))
    jobs.requeue_job(store, job_id)
    seen.append(_shown(store, run_id))
    jobs.cancel_job(store, job_id)  # queued: cancelled at once
    seen.append(_shown(store, run_id))
    assert seen == [("queued", None, False, False), ("running", None, False, False),
                    ("queued", None, False, False), ("running", None, True, False),
                    ("cancelled", "budget", True, True), ("queued", None, False, False),
                    ("cancelled", None, True, True)]
    assert _row(store, run_id) == stored


def test_an_abandoned_job_fails_its_run_with_the_job_error_and_no_write_to_it(store):
    run_id, job_id = _run_with_job(store)
    stored = _row(store, run_id)
    for n in range(3):  # every worker dies: the lease runs out each time
        assert jobs.claim_job(store, f"w{n}", lease_s=0.05).id == job_id
        time.sleep(0.1)
    assert jobs.claim_job(store, "w9") is None
    run = queries.get_run(store, run_id)
    assert run.status == "failed" and run.error.startswith("abandoned")
    assert [r.id for r in queries.list_runs(store, status="failed")] == [run_id]
    assert _row(store, run_id) == stored


def test_every_read_and_filter_uses_the_derived_status(store):
    run_id, job_id = _run_with_job(store)
    legacy = int(queries.create_run(store, kind="stability", model="m", status="done").id)
    claimed = jobs.claim_job(store, "w1", lease_s=60)
    jobs.finish_job(store, jobs.Fence(job_id, claimed.token), "done")
    assert {r.id: r.status for r in queries.list_runs(store)} == {run_id: "done",
                                                                  legacy: "done"}
    jobs.requeue_job(store, job_id)  # the stored row of the run never said anything else
    assert [r.id for r in queries.list_runs(store, status="done")] == [legacy]
    assert [r.id for r in queries.list_runs(store, status="queued")] == [run_id]
    rows, total = run_browse.run_page(store, status=["queued"])
    assert ([r.id for r in rows], total, rows[0].status) == ([run_id], 1, "queued")
    assert run_browse.run_filter_values(store)["status"] == ["done", "queued"]
    assert run_browse.finished_runs_of(store, "m") == [(legacy, "stability", None)]
    assert queries.progress(store, run_id)["status"] == "queued"


def test_a_run_without_a_job_keeps_its_stored_state(store):
    run = queries.create_run(store, kind="stability", model="m", status="running")
    assert queries.request_cancel(store, int(run.id)) is True
    again = queries.get_run(store, int(run.id))
    assert (again.status, again.cancel_requested) == ("running", True)


def test_cancelling_a_run_asks_its_job_and_leaves_the_run_row_alone(store):
    run_id, job_id = _run_with_job(store)
    stored = _row(store, run_id)
    assert queries.request_cancel(store, run_id) is True
    assert jobs.get_job(store, job_id).status == "cancelled"
    assert queries.get_run(store, run_id).status == "cancelled"
    assert queries.request_cancel(store, run_id) is False  # ended already
    assert _row(store, run_id) == stored


def _state_writes(path: Path) -> list[str]:
    """Places in `path` that write a run's state: `update_run`/`create_run` given a state
    field, `.values(...)` of an `update(Run)` naming one, `run.<state> = ...`, a mirror."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        where = f"{path.relative_to(ROOT.parent)}:{getattr(node, 'lineno', 0)}"
        if isinstance(node, (ast.Name, ast.Attribute, ast.FunctionDef)):
            name = getattr(node, "id", None) or getattr(node, "attr", None) or node.name  # type: ignore[attr-defined]
            if "mirror" in name.lower():
                found.append(f"{where} {name}")
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if (isinstance(target, ast.Attribute) and target.attr in STATE
                        and isinstance(target.value, ast.Name) and target.value.id == "run"):
                    found.append(f"{where} run.{target.attr} =")
        if not isinstance(node, ast.Call):
            continue
        named = {k.arg for k in node.keywords} & STATE
        func = node.func
        callee = getattr(func, "attr", None) or getattr(func, "id", None)
        if callee in ("update_run", "create_run") and named:
            found.append(f"{where} {callee}({', '.join(sorted(named))}=...)")
        if callee == "values" and named and _updates_run(func):
            found.append(f"{where} update(Run).values({', '.join(sorted(named))}=...)")
    return found


def _updates_run(func: ast.expr) -> bool:
    """Whether a `.values` attribute hangs off `update(Run)`, `update(RUN)` or
    `Run.__table__.update()`."""
    node = getattr(func, "value", None)
    while node is not None:
        if isinstance(node, ast.Call):
            callee = getattr(node.func, "id", None) or getattr(node.func, "attr", None)
            if callee == "update" and node.args and getattr(node.args[0], "id", None) in (
                    "Run", "RUN"):  # the ORM class or its Core table
                return True
            if (callee == "update" and isinstance(node.func, ast.Attribute)
                    and ("Run" in ast.dump(node.func.value)
                         or "'RUN'" in ast.dump(node.func.value))):
                return True
            node = node.func
        elif isinstance(node, ast.Attribute):
            node = node.value
        else:
            return False
    return False


def test_no_code_writes_a_runs_state_outside_run_state():
    """The mirror cannot come back: only `store/run_state.py` writes a run's state
    (the cancel of a run without a job); every other writer is the job's transitions."""
    found = [hit for path in sorted(ROOT.rglob("*.py")) if path != OWNER
             and "migrations" not in path.parts for hit in _state_writes(path)]
    assert found == []
    assert _state_writes(OWNER), "the scan no longer sees run_state's own write"


def test_resuming_a_stalled_run_queues_its_job_and_the_run_shows_it(store):
    from evalcore.runner.start import resume_run

    run_id, job_id = _run_with_job(store)
    jobs.claim_job(store, "dead", lease_s=0.01)  # its worker dies: the lease runs out
    time.sleep(0.05)
    assert queries.get_run(store, run_id).status == "running"
    assert resume_run(store, run_id) == job_id
    assert (queries.get_run(store, run_id).status, jobs.get_job(store, job_id).status) == (
        "queued", "queued")


def test_the_newest_run_job_is_found_through_the_run_id_index(tmp_path):
    """One index search per run: with `kind = 'run'` in the subquery's WHERE, SQLite
    searched the kind index (every run's job, once per run: 2,000 runs took 0.3 s)."""
    from evalcore.store import run_state
    from evalcore.store.db import make_engine

    engine = make_engine(f"sqlite:///{tmp_path / 'plan.db'}")
    query = run_state.with_state(select(run_state.STATUS).select_from(RUN)).distinct()
    compiled = query.compile(engine)
    params = tuple(compiled.params[name] for name in compiled.positiontup or ())
    with engine.connect() as conn:
        plan = " | ".join(str(row[-1]) for row in conn.exec_driver_sql(
            f"EXPLAIN QUERY PLAN {compiled}", params))
    assert "ix_job_run_id" in plan and "ix_job_kind" not in plan, plan


def test_a_runs_times_all_carry_their_zone_whichever_table_they_come_from(store):
    """An export's `finished_at` read without a zone while `created_at` had one: the end
    came from the job (naive on SQLite) and was read naive on PostgreSQL too."""
    run_id, job_id = _run_with_job(store)
    claimed = jobs.claim_job(store, "w1", lease_s=60)
    jobs.finish_job(store, jobs.Fence(job_id, claimed.token), "done")
    run = queries.get_run(store, run_id)
    listed = next(r for r in queries.list_runs(store) if r.id == run_id)
    for moment in (run.created_at, run.started_at, run.finished_at, listed.finished_at):
        assert moment is None or moment.utcoffset() is not None, (run, listed)
    assert run.finished_at is not None and run.finished_at >= run.created_at
