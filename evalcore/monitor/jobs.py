"""The job of a schedule's due time (kind "schedule"), in two steps, each one job:

- `create`: make the due time's run (or find the one a dead predecessor made) and link it;
- `check`: once the run ended, gate it (the schedule's gate, or by default the kind's
  regression checks against the stored baseline of its dataset and model), record the
  verdict and its reason, and, if the gate failed or the run failed, alert each channel
  once (`monitor.alerts.deliver`).

Every write goes through `jobs.hold`, so a worker whose lease was taken over writes
nothing; a step repeated after a takeover finds what was done and does not redo it.
"""
from __future__ import annotations

import asyncio
from typing import Any

import msgspec

from evalcore.config import load_settings
from evalcore.masking import mask_text
from evalcore.metrics.gate import GateResult, load_gate_config
from evalcore.monitor.alerts import build_message, deliver
from evalcore.monitor.runs import run_name, schedule_actor, start_scheduled_run
from evalcore.report.gates import NO_BASELINE, baseline_gate, gate_any, gate_reason, verdict_of
from evalcore.runner.jobs import JobContext, handler
from evalcore.runner.outage import is_outage
from evalcore.store import datasets, jobs, queries, schedules
from evalcore.store.baselines import baseline_for_run
from evalcore.store.db import transaction


def _create(ctx: JobContext, row_id: int) -> dict[str, Any]:
    engine = ctx.engine
    row = schedules.get_schedule_run(engine, row_id)
    if row.run_id is not None:
        return {"run_id": row.run_id}
    schedule = schedules.get_schedule(engine, row.schedule_id)
    name = run_name(int(schedule.id), row_id, schedules.as_utc(row.due_at))
    # One transaction from the fence to the link: a worker paused between the look and
    # the insert (cut off from the database, stopped) cannot make a second run after its
    # job was taken over; the takeover's claim waits for this to commit or roll back.
    with transaction(engine) as conn:
        jobs.hold(conn, ctx.fence)
        run_id = schedules.scheduled_run_named(conn, name)
        if run_id is None:
            try:
                with conn.begin_nested():  # a refused run rolls back alone
                    run_id = start_scheduled_run(conn, schedule.kind, schedule.params,
                                                 name=name, actor=schedule_actor(
                                                     schedule.created_by, int(schedule.id)),
                                                 models_path=load_settings().models_path)
            except Exception as exc:  # noqa: BLE001 - recorded on the due time, alerted
                if is_outage(exc):
                    raise  # the database went, not the run: the job is given back
                reason = mask_text(f"the run could not be created: {type(exc).__name__}: "
                                   f"{exc}")
                schedules.update_schedule_run(conn, row_id, status="skipped",
                                              verdict="run failed", reason=reason)
                return {"status": "failed", "error": reason, "alert": True}
        schedules.update_schedule_run(conn, row_id, status="created", run_id=run_id)
    return {"run_id": run_id}


def _gate(engine: Any, schedule: Any, run: Any) -> tuple[str, list[dict[str, Any]], Any, str]:
    """(verdict, checks, baseline run id, reason) of a scheduled run that ended. Without a
    gate of its own a schedule is gated against the stored baseline (`baseline_gate`);
    before one is set its verdict is "not measured", never a pass."""
    if run.status != "done":
        return "run failed", [], None, str(run.error or f"the run ended {run.status}")
    config = load_gate_config(schedule.gate) if schedule.gate else baseline_gate(schedule.kind)
    baseline = baseline_for_run(engine, int(run.id)) if config.max_regression is not None \
        else None
    if baseline is None and not config.absolute:
        result = GateResult(passed=False, checks=[NO_BASELINE])
    else:
        result = gate_any(engine, int(run.id), config, baseline_id=baseline)
    checks = [msgspec.to_builtins(c) for c in result.checks]
    return verdict_of(result), checks, baseline, gate_reason(result)


async def _check(ctx: JobContext, row_id: int) -> dict[str, Any]:
    engine = ctx.engine
    row = await asyncio.to_thread(schedules.get_schedule_run, engine, row_id)
    schedule = await asyncio.to_thread(schedules.get_schedule, engine, row.schedule_id)
    run = await asyncio.to_thread(queries.get_run, engine, int(row.run_id))
    verdict, checks, baseline, reason = await asyncio.to_thread(_gate, engine, schedule, run)

    def store() -> None:
        with transaction(engine) as conn:
            jobs.hold(conn, ctx.fence)
            schedules.update_schedule_run(conn, row_id, verdict=verdict, checks=checks,
                                          baseline_id=baseline, reason=reason or None)

    await asyncio.to_thread(store)
    result: dict[str, Any] = {"run_id": run.id, "verdict": verdict}
    if verdict in ("fail", "run failed", "inconclusive") and schedule.channels:
        suite = await asyncio.to_thread(_dataset_name, engine, run.dataset_id)
        event = {"run failed": "run_failed", "inconclusive": "gate_inconclusive"}.get(
            verdict, "gate_failed")
        message = build_message(event=event, suite=suite, model=run.model, run_id=run.id,
                                verdict=verdict, checks=checks, baseline_id=baseline,
                                schedule_id=schedule.id, error=run.error)
        result["alerts"] = await deliver(engine, f"run:{run.id}:{event}", schedule.channels,
                                         message, run_id=run.id, schedule_id=schedule.id)
    return result


def _dataset_name(engine: Any, dataset_id: Any) -> str:
    if dataset_id is None:
        return "?"
    return datasets.names_by_id(engine, [int(dataset_id)]).get(int(dataset_id), "?")


@handler("schedule")
async def schedule_job(ctx: JobContext) -> dict[str, Any]:
    """One step of a schedule's due time (see the module's docstring)."""
    params = ctx.job.params or {}
    row_id = int(params["schedule_run"])
    if params.get("step") == "check":
        return await _check(ctx, row_id)
    result = await asyncio.to_thread(_create, ctx, row_id)
    if result.pop("alert", False):
        result["alerts"] = await _alert_not_created(ctx, row_id, result["error"])
    return result


async def _alert_not_created(ctx: JobContext, row_id: int, reason: str) -> list[dict[str, Any]]:
    """A due time whose run could not even be created (dataset or model gone): one alert."""
    schedule = await asyncio.to_thread(schedules.get_schedule,
                                       ctx.engine, (await asyncio.to_thread(
                                           schedules.get_schedule_run, ctx.engine, row_id)
                                                    ).schedule_id)
    if not schedule.channels:
        return []
    params = schedule.params
    message = build_message(event="run_failed", suite=str(params.get("dataset")
                                                          or params.get("suite") or ""),
                            model=str(params.get("model", "")), run_id=None,
                            verdict="run failed", checks=[], schedule_id=schedule.id,
                            error=reason)
    return await deliver(ctx.engine, f"due:{row_id}:run_failed", schedule.channels, message,
                         schedule_id=schedule.id)
