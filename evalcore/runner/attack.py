"""Attack-set generation as a job: the set is validated and created (empty) when the job
is queued, so pages can point at it at once; any worker then fills it in, one batch of
items per fenced transaction (`perturb.sets.generate_attack_items_async`): a takeover
continues with the items not stored yet, none lost or stored twice."""
from __future__ import annotations

from typing import Any, Optional, Union

from sqlalchemy.engine import Engine


class _Stop(Exception):
    """Raised from the progress callback to stop after the batch just stored."""


def create_attack_job(engine: Engine, *, dataset: Union[str, int], level: str, seed: int = 0,
                      params: Optional[dict[str, Any]] = None, translator: Optional[str] = None,
                      name: Optional[str] = None, created_by: str = "",
                      limit: Optional[int] = None) -> int:
    """Check the request, create the (empty) attack set and queue its generation; returns
    the job id. `translator` is a spec ("llm:MODEL", "google") for sentence level."""
    from evalcore.perturb.sets import create_attack_set, get_attack_set

    set_id = create_attack_set(engine, dataset=dataset, level=level, seed=seed, params=params,
                               translator=translator, name=name, created_by=created_by,
                               limit=limit)
    return _queue(engine, get_attack_set(engine, set_id), created_by)


def attack_set_job(engine: Engine, set_id: int) -> int:
    """The newest generation job of an attack set (one is made for a set that has none)."""
    from evalcore.perturb.sets import get_attack_set
    from evalcore.store.jobs import list_jobs

    jobs = [j for j in list_jobs(engine, kind="attack", limit=1000) if j.attack_set_id == set_id]
    if jobs:
        return int(jobs[0].id)
    attack_set = get_attack_set(engine, set_id)
    return _queue(engine, attack_set, attack_set.created_by)


def _queue(engine: Engine, attack_set: Any, created_by: str) -> int:
    from evalcore.store import jobs

    total = (attack_set.params or {}).get("total", 0)
    return jobs.create_job(engine, "attack", attack_set_id=int(attack_set.id),
                           params={"attack_set_id": int(attack_set.id)}, created_by=created_by,
                           label=f"{attack_set.level} attack set {attack_set.name}",
                           total=int(total or 0))


async def attack_job(ctx: Any) -> dict[str, Any]:
    """The job handler: generate the set's missing items, batch by batch, fenced."""
    from evalcore.perturb.sets import generate_attack_items_async
    from evalcore.runner.kinds import ProgressPump
    from evalcore.store.jobs import hold

    set_id = int(ctx.job.attack_set_id)

    async with ProgressPump(ctx) as pump:
        def progress(done: int, total: int) -> None:
            pump(done, total)
            if ctx.draining.is_set() or ctx.cancelled.is_set():
                raise _Stop()

        try:
            await generate_attack_items_async(ctx.engine, set_id, on_progress=progress,
                                              fence=lambda conn: hold(conn, ctx.fence))
        except _Stop:
            return {"status": "drained" if ctx.draining.is_set() else "cancelled",
                    "attack_set_id": set_id}
    return {"attack_set_id": set_id}
