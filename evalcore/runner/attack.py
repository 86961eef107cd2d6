"""Attack sets as jobs.

Generation: the set is validated and created (empty) when the job is queued, so pages
can point at it at once; any worker then fills it in, one batch of items per fenced
transaction (`perturb.generate.generate_attack_items_async`): a takeover continues with the
items not stored yet, none lost or stored twice.

Import of an attacked file: the file is checked when the job is queued and its bytes kept
in the database (`store.uploads`), so a worker on any machine can import it; the import
is one fenced transaction, found again by a takeover (`perturb.sets.set_of_job`)."""
from __future__ import annotations

import asyncio
from typing import Any, Optional, Union

from sqlalchemy.engine import Engine

from evalcore.perturb import generate
from evalcore.perturb.generate import create_attack_set
from evalcore.perturb.set_import import import_attack_set, plan_import
from evalcore.perturb.sets import get_attack_set, set_of_job
from evalcore.runner.progress import ProgressPump
from evalcore.store import jobs
from evalcore.store.db import transaction
from evalcore.store.jobs import hold, list_jobs
from evalcore.store.uploads import delete_upload, load_upload, save_upload


class _Stop(Exception):
    """Raised from the progress callback to stop after the batch just stored."""


def _stopping(pump: Any, ctx: Any) -> Any:
    """A progress callback for synchronous work: feeds `pump`, and raises `_Stop` once the
    job is cancelled or its worker is stopping, so the work ends at its next step."""
    def progress(done: int, total: int) -> None:
        pump(done, total)
        if ctx.draining.is_set() or ctx.cancelled.is_set():
            raise _Stop()

    return progress


def create_attack_job(engine: Engine, *, dataset: Union[str, int], level: str, seed: int = 0,
                      params: Optional[dict[str, Any]] = None, translator: Optional[str] = None,
                      name: Optional[str] = None, created_by: str = "",
                      limit: Optional[int] = None) -> int:
    """Check the request, create the (empty) attack set and queue its generation; returns
    the job id. `translator` is a spec ("llm:MODEL", "google") for sentence level."""
    set_id = create_attack_set(engine, dataset=dataset, level=level, seed=seed, params=params,
                               translator=translator, name=name, created_by=created_by,
                               limit=limit)
    return _queue(engine, get_attack_set(engine, set_id), created_by)


def attack_set_job(engine: Engine, set_id: int) -> int:
    """The newest generation job of an attack set (one is made for a set that has none)."""
    jobs = [j for j in list_jobs(engine, kind="attack", limit=1000) if j.attack_set_id == set_id]
    if jobs:
        return int(jobs[0].id)
    attack_set = get_attack_set(engine, set_id)
    return _queue(engine, attack_set, attack_set.created_by)


def _queue(engine: Engine, attack_set: Any, created_by: str) -> int:
    total = (attack_set.params or {}).get("total", 0)
    return jobs.create_job(engine, "attack", attack_set_id=int(attack_set.id),
                           params={"attack_set_id": int(attack_set.id)}, created_by=created_by,
                           label=f"{attack_set.level} attack set {attack_set.name}",
                           total=int(total or 0))


async def attack_job(ctx: Any) -> dict[str, Any]:
    """The job handler: generate the set's missing items, batch by batch, fenced."""
    set_id = int(ctx.job.attack_set_id)

    async with ProgressPump(ctx) as pump:
        try:
            await generate.generate_attack_items_async(ctx.engine, set_id,
                                                       on_progress=_stopping(pump, ctx),
                                                       fence=lambda conn: hold(conn, ctx.fence))
        except _Stop:
            return {"status": "drained" if ctx.draining.is_set() else "cancelled",
                    "attack_set_id": set_id}
    return {"attack_set_id": set_id}


# ------------------------------------------------------------------ importing a file


def create_import_job(engine: Engine, data: bytes, *, filename: str, name: Optional[str] = None,
                      level: Optional[str] = None,
                      source_dataset: Union[str, int, None] = None, check: bool = True,
                      similarity: bool = True, allow_duplicate: bool = False,
                      created_by: str = "") -> int:
    """Check an attacked file at once (format, level, an earlier import of it, its clean
    dataset: `plan_import`, which raises what a user can act on), keep its bytes in the
    database and queue its import; returns the job id. The checks of every row and their
    e5 similarity, the slow part, run in the job."""
    parsed, level, _, _, _ = plan_import(engine, data, filename=filename, name=name,
                                         level=level, source_dataset=source_dataset,
                                         allow_duplicate=allow_duplicate)
    with transaction(engine) as conn:  # the bytes and their job, both or neither
        upload_id = save_upload(conn, data, filename)
        # The user's name (or none: the job picks a free one when it stores the set, so
        # two imports queued together never ask for the same default name).
        params = {"upload_id": upload_id, "filename": filename, "name": name,
                  "level": level, "source_dataset": source_dataset, "check": check,
                  "similarity": similarity, "allow_duplicate": allow_duplicate,
                  "created_by": created_by}
        return jobs.create_job(conn, "attack_import", params=params,
                               created_by=created_by,
                               label=f"import of {filename} ({level} level)",
                               total=len(parsed.questions) if check else 0)


async def import_job(ctx: Any) -> dict[str, Any]:
    """The job handler: import the uploaded file (all or nothing, fenced), then drop the
    upload. A takeover first looks for the set an earlier attempt stored."""
    engine, job_id, p = ctx.engine, int(ctx.job.id), dict(ctx.job.params)
    stored = await asyncio.to_thread(set_of_job, engine, job_id)
    if stored is None:
        filename, data = await asyncio.to_thread(load_upload, engine, int(p["upload_id"]))
        async with ProgressPump(ctx) as pump:
            try:
                stored = await asyncio.to_thread(
                    import_attack_set, engine, data, filename=filename, name=p.get("name"),
                    level=p.get("level"), source_dataset=p.get("source_dataset"),
                    check=bool(p.get("check", True)), similarity=bool(p.get("similarity", True)),
                    created_by=str(p.get("created_by") or ""),
                    allow_duplicate=bool(p.get("allow_duplicate")), job_id=job_id,
                    fence=lambda conn: hold(conn, ctx.fence),
                    on_progress=_stopping(pump, ctx))
            except _Stop:  # nothing was written: the import is one transaction
                if ctx.draining.is_set():
                    return {"status": "drained"}  # released: another worker imports it
                await asyncio.to_thread(delete_upload, engine, int(p["upload_id"]))
                return {"status": "cancelled"}
    await asyncio.to_thread(delete_upload, engine, int(p["upload_id"]))
    return {"attack_set_id": int(stored.id), "items": int(stored.item_count)}
