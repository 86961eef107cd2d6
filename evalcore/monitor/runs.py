"""The one function that makes a scheduled run: today's start action of its kind.

(When `actions.create_run(kind, params)` exists, this becomes one call to it.) The run is
named after its schedule and due time, so a job taken over after its worker died finds
the run the dead one made instead of making a second (`store.schedules.scheduled_run_named`).
"""
from __future__ import annotations

from datetime import datetime
from typing import Any, Mapping

from evalcore.auth.identity import Actor

KINDS = ("stability", "robustness", "fairness")


def run_name(schedule_id: int, row_id: int, due_at: datetime) -> str:
    """The name of the run a schedule makes at `due_at`: unique per due time (`row_id` is
    its `schedule_run` row)."""
    return f"schedule {schedule_id} #{row_id} @ {due_at:%Y-%m-%d %H:%M:%S}"


def schedule_actor(created_by: str, schedule_id: int) -> Actor:
    """Who starts a scheduled run: the schedule, on behalf of the evaluator who made it
    (the audit log says 'schedule 3 (alice@...)')."""
    return Actor(email="", name=f"schedule {schedule_id} ({created_by or 'local'})",
                 role="evaluator")


def start_scheduled_run(engine: Any, kind: str, params: Mapping[str, Any], *, name: str,
                        actor: Actor, models_path: Any) -> int:
    """Queue the run of one due time with the action of its kind; returns its id."""
    from evalcore import actions

    options = dict(params)
    if kind == "stability":
        from evalcore.runner.plan import RunSpec

        return actions.start_run(actor, engine, RunSpec(kind="stability", name=name, **options),
                                 models_path)
    if kind == "fairness":
        return actions.start_fairness_run(actor, engine, name=name, models_path=models_path,
                                          **options)
    if kind == "robustness":
        return actions.start_robustness(actor, engine, name=name, models_path=models_path,
                                        **options)
    raise ValueError(f"kind {kind!r} cannot be scheduled; one of {', '.join(KINDS)}")
