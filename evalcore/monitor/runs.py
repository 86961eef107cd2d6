"""The one function that makes a scheduled run: `actions.create_run` of its kind.

The run is named after its schedule and due time, so a job taken over after its worker died finds
the run the dead one made instead of making a second (`store.schedules.scheduled_run_named`).
"""
from __future__ import annotations

from datetime import datetime
from typing import Any, Mapping

from evalcore import actions
from evalcore.auth.identity import Actor
from evalcore.kinds import all_kinds

def run_name(schedule_id: int, row_id: int, due_at: datetime) -> str:
    """The name of the run a schedule makes at `due_at`: unique per due time (`row_id` is
    its `schedule_run` row)."""
    return f"schedule {schedule_id} #{row_id} @ {due_at:%Y-%m-%d %H:%M:%S}"


def schedule_actor(created_by: str, schedule_id: int) -> Actor:
    """Who starts a scheduled run: the schedule, on behalf of the evaluator who made it
    (the audit log says 'schedule 3 (alice@...)')."""
    return Actor(email="", name=f"schedule {schedule_id} ({created_by or 'local'})",
                 role="evaluator")


def schedulable() -> tuple[str, ...]:
    """The kinds a schedule can run: those whose module says how (`EvalKind.schedule`)."""
    return tuple(name for name, kind in all_kinds().items() if kind.schedule is not None)


def start_scheduled_run(engine: Any, kind: str, params: Mapping[str, Any], *, name: str,
                        actor: Actor, models_path: Any) -> int:
    """Queue the run of one due time (`actions.create_run`); returns its id."""
    return actions.create_run(actor, engine, kind, {**params, "name": name}, models_path)
