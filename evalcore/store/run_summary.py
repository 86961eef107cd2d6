"""What a finished run's figures need, computed once (`RunSummary`): a run of a million
calls is counted when it is first read after it ended, and every later read (its page,
`runs show`, compare, leaderboard, trend, the trust report) reads one row.

A row is keyed by the run's state: status, progress (done, errors, retries), when it
finished, and its newest call's id. Calls are only ever added (a re-judging pass adds
its verdicts, a resume or a retry of failed calls adds the calls it makes, and a retry
first sets the failed ones aside and requeues the run, which ends again later) and are
deleted only with their run, so any change to what the figures count changes the key,
and the next read computes again: a stale row is not used. The newest id is one index
lookup; a count of the calls would read a million index entries at every read. (What the
newest id cannot see: two processes adding calls to one finished run at once on
PostgreSQL, whose ids may commit out of order; a read between the two commits stores
figures without the earlier one's calls until the run's next call: only passes that
add verdicts to a finished run, a re-judge or a meaning judge, run at the same time.)
Runs still going are always computed (their key changes with every call).

What compares several finished runs (their paired tests) is stored too, under the
first run, keyed by every run's state (`pair_summary`).
"""
from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

import msgspec
from sqlalchemy import and_, delete, func, insert, select
from sqlalchemy.engine import Engine
from sqlalchemy.exc import SQLAlchemyError

from evalcore.store.db import reading, transaction
from evalcore.store.tables import Call, RunSummary

CALL = Call.__table__
RUN_SUMMARY = RunSummary.__table__

FINISHED = ("done", "failed", "cancelled")


def state_key(engine: Engine, run: Any) -> str:
    """The run's state as a string: what stored figures must have been computed at."""
    with reading(engine) as conn:
        newest = conn.execute(select(func.max(CALL.c.id)).where(CALL.c.run_id == run.id)
                              ).scalar()
    return "|".join(str(x) for x in (run.status, run.done, run.errors, run.retries,
                                     run.finished_at, newest))


def _where(run_id: int, name: str) -> Any:
    return and_(RUN_SUMMARY.c.run_id == run_id, RUN_SUMMARY.c.name == name)


def stored(engine: Engine, run_id: int, name: str, key: str) -> Any:
    """What was stored under `name` for the run if computed in state `key`, else None."""
    with reading(engine) as conn:
        row = conn.execute(select(RUN_SUMMARY.c.state, RUN_SUMMARY.c.data)
                           .where(_where(run_id, name))).first()
    # msgspec parses a summary of 10,000 questions several times faster than json
    return msgspec.json.decode(row.data) if row is not None and row.state == key else None


def store(engine: Engine, run_id: int, name: str, key: str, data: Any) -> None:
    """Replace what is stored under `name` for the run (nothing is stored when `data`
    would read back different from JSON). A database this process cannot
    write to (a read-only user, a lock held too long) only means the next read computes
    again."""
    text = json.dumps(data, ensure_ascii=False, default=str)
    if json.loads(text) != data:  # a tuple, a numpy integer, a NaN: read back, it differs
        return
    try:
        with transaction(engine) as conn:
            conn.execute(delete(RUN_SUMMARY).where(_where(run_id, name)))
            conn.execute(insert(RUN_SUMMARY).values(run_id=run_id, name=name, state=key,
                                                    data=text))
    except SQLAlchemyError:
        pass  # a cache: the figures were computed and are returned all the same


def summary(engine: Engine, run: Any, name: str, compute: Callable[[], Any]) -> Any:
    """The run's figures `name`: stored ones computed in its current state, else
    `compute()` (stored for next time when the run has finished, if it survives a JSON
    round trip unchanged: string keys, no tuples, no NaN; else it is computed each time)."""
    return pair_summary(engine, [run], name, compute)


def pair_summary(engine: Engine, runs: Sequence[Any], name: str,
                 compute: Callable[[], Any]) -> Any:
    """`summary` of several runs together (a comparison's paired tests): stored under
    the first run, named after the others too, in the state of every one of them;
    computed each time while any of them has not finished."""
    if any(run.status not in FINISHED for run in runs):
        return compute()
    key = "/".join(state_key(engine, run) for run in runs)
    owner = int(runs[0].id)
    if len(runs) > 1:
        name = f"{name}@{','.join(str(run.id) for run in runs[1:])}"
    found = stored(engine, owner, name, key)
    if found is None:
        found = compute()
        store(engine, owner, name, key, found)
    return found
