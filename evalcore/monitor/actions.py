"""The monitoring changes, checked and recorded like every action (`evalcore.actions`):
schedules by evaluators and up ('schedule'), the baseline by reviewers and admins
('baseline'), each change in the audit log."""
from __future__ import annotations

import asyncio
import tomllib
import uuid
from pathlib import Path
from typing import Any, Mapping, Optional, Union

from evalcore.actions import _check, _record
from evalcore.store.db import transaction
from evalcore.auth.identity import Actor
from evalcore.dataset import get_dataset
from evalcore.kinds import get_kind
from evalcore.metrics.gate import GateError, load_gate_config
from evalcore.monitor.alerts import build_message, deliver
from evalcore.monitor.channels import shown
from evalcore.monitor.runs import schedulable
from evalcore.providers.registry import get_model
from evalcore.store.baselines import current_baseline, set_baseline as _set
from evalcore.store.queries import get_run
from evalcore.store.schedules import (add_schedule as _add, delete_schedule as _delete,
                                      edit_schedule as _edit, get_schedule, set_paused)


def gate_dict(source: Union[None, str, Path, Mapping[str, Any]]) -> dict[str, Any]:
    """A gate config as the dict the schedule stores (checked with `load_gate_config`):
    from a TOML file, TOML text or a dict; {} = the kind's default gate."""
    if source is None or source == "":
        return {}
    if isinstance(source, Mapping):
        data = dict(source)
    else:
        path = Path(str(source))
        if "\n" not in str(source) and path.suffix == ".toml":
            if not path.is_file():
                raise GateError(f"gate config {path} not found; copy data/gate.example.toml")
            text = path.read_text(encoding="utf-8")
        else:
            text = str(source)
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise GateError(f"{source}: not valid TOML ({exc})") from None
    load_gate_config(data)
    return data


def _check_params(engine: Any, kind: str, params: Mapping[str, Any], models_path: Any) -> None:
    """Refuse a schedule whose runs could never start (unknown dataset, model or option):
    the kind's own spec builder reads the options now, as it will at each due time."""
    if kind not in schedulable():
        raise ValueError(f"kind {kind!r} cannot be scheduled; one of {', '.join(schedulable())}")
    get_model(models_path, str(params["model"]))
    if params.get("dataset"):  # a builder that leaves the dataset to the run's start
        get_dataset(engine, params["dataset"])
    get_kind(kind).build(engine, params)


def add_schedule(actor: Actor, engine: Any, kind: str, params: dict[str, Any], *,
                 models_path: Any, every_s: Optional[int] = None, cron: Optional[str] = None,
                 gate: Any = None, channels: Optional[list[dict[str, Any]]] = None) -> Any:
    """Store a schedule (evaluators and up); its runs start when they fall due."""
    _check(engine, actor, "schedule", "add_schedule")
    _check_params(engine, kind, params, models_path)
    with transaction(engine) as conn:
        row = _add(conn, kind=kind, params=params, every_s=every_s, cron=cron,
                   gate=gate_dict(gate), channels=list(channels or []),
                   created_by=actor.attribution())
        _record(conn, actor, "schedule.add", "schedule", row.id, kind=kind,
                every_s=every_s, cron=cron, channels=shown(row.channels) or None)
    return row


def pause_schedule(actor: Actor, engine: Any, schedule_id: int, paused: bool = True) -> Any:
    """Pause (or with paused=False resume) a schedule, for evaluators and up."""
    action = "pause" if paused else "resume"
    _check(engine, actor, "schedule", f"{action}_schedule", schedule_id)
    with transaction(engine) as conn:
        row = set_paused(conn, schedule_id, paused)
        _record(conn, actor, f"schedule.{action}", "schedule", schedule_id)
    return row


def edit_schedule(actor: Actor, engine: Any, schedule_id: int, *, models_path: Any = None,
                  every_s: Optional[int] = None, cron: Optional[str] = None, gate: Any = None,
                  channels: Optional[list[dict[str, Any]]] = None,
                  params: Optional[dict[str, Any]] = None) -> Any:
    """Change a schedule's period, gate, channels or run options (None = unchanged), for
    evaluators and up; the audit event names what changed."""
    _check(engine, actor, "schedule", "edit_schedule", schedule_id)
    changes: dict[str, Any] = {}
    if every_s or cron:
        changes.update(every_s=every_s, cron=cron)
    if gate is not None:
        changes["gate"] = gate_dict(gate)
    if channels is not None:
        changes["channels"] = list(channels)
    if params is not None:
        row = get_schedule(engine, schedule_id)
        merged = {**row.params, **params}
        _check_params(engine, row.kind, merged, models_path)
        changes["params"] = merged
    with transaction(engine) as conn:
        row = _edit(conn, schedule_id, **changes)
        _record(conn, actor, "schedule.edit", "schedule", schedule_id, changed=sorted(changes),
                channels=shown(row.channels) if channels is not None else None)
    return row


def delete_schedule(actor: Actor, engine: Any, schedule_id: int) -> Any:
    """Delete a schedule (its runs stay), for evaluators and up."""
    _check(engine, actor, "schedule", "delete_schedule", schedule_id)
    with transaction(engine) as conn:
        row = _delete(conn, schedule_id)
        _record(conn, actor, "schedule.delete", "schedule", schedule_id, kind=row.kind)
    return row


def set_baseline(actor: Actor, engine: Any, run_id: int) -> Any:
    """Mark a finished run as the baseline of its dataset and model, for reviewers and
    admins; the previous one stays in the history (the trend's marks)."""
    _check(engine, actor, "baseline", "set_baseline", run_id)
    run = get_run(engine, run_id)
    before = current_baseline(engine, int(run.dataset_id or 0), run.model)
    if before is not None and int(before.run_id) == int(run_id):
        return before  # already in force: no second history row (a doubled trend mark)
    with transaction(engine) as conn:
        row = _set(conn, run_id, set_by=actor.attribution())
        _record(conn, actor, "baseline.set", "run", run_id, dataset=row.dataset_id,
                model=row.model, previous=before.run_id if before else None)
    return row


def test_alert(actor: Actor, engine: Any, schedule_id: int) -> list[dict[str, Any]]:
    """Send a test message to each channel of a schedule now (evaluators and up); the
    deliveries are recorded like real ones, under their own event."""
    _check(engine, actor, "schedule", "test_alert", schedule_id)
    row = get_schedule(engine, schedule_id)
    params = row.params
    message = build_message(event="test", suite=str(params.get("dataset") or
                                                    params.get("suite") or ""),
                            model=str(params.get("model", "")), run_id=None, verdict="test",
                            checks=[], schedule_id=schedule_id)
    results = asyncio.run(deliver(engine, f"test:{uuid.uuid4().hex}", row.channels, message,
                                  schedule_id=schedule_id))
    _record(engine, actor, "schedule.test_alert", "schedule", schedule_id,
            sent=sum(r["status"] == "sent" for r in results), channels=len(results))
    return results


test_alert.__test__ = False  # type: ignore[attr-defined]  # not a pytest test
