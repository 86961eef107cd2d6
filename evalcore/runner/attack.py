"""Attack-set generation as a job: validated and queued by `create_attack_job`, done by
any worker (`attack_job`), with its progress stored on the job as it goes."""
from __future__ import annotations

from typing import Any, Optional, Union

from sqlalchemy.engine import Engine


def create_attack_job(engine: Engine, *, dataset: Union[str, int], level: str, seed: int = 0,
                      params: Optional[dict[str, Any]] = None, translator: Optional[str] = None,
                      name: Optional[str] = None, created_by: str = "",
                      limit: Optional[int] = None) -> int:
    """Check the request (dataset, level, parameters) and queue the generation; returns
    the job id. `translator` is a spec ("llm:MODEL", "google") for sentence level."""
    from evalcore.dataset import get_dataset
    from evalcore.perturb.sets import _resolved, normalize_level
    from evalcore.store import jobs

    level = normalize_level(level)
    _resolved(level, params)  # unknown parameters fail now, on the page, not in a worker
    source = get_dataset(engine, dataset)
    request = {"dataset": int(source.id), "level": level, "seed": seed, "params": params,
               "translator": translator, "name": name, "created_by": created_by,
               "limit": limit}
    total = min(limit, source.item_count) if limit else source.item_count
    return jobs.create_job(engine, "attack", params=request, created_by=created_by,
                           label=f"{level} attack on {source.name}", total=total)


async def attack_job(ctx: Any) -> dict[str, Any]:
    """The job handler: generate the set and store it; returns {"attack_set_id"}."""
    from evalcore.perturb.sets import generate_attack_set
    from evalcore.runner.kinds import ProgressPump

    async with ProgressPump(ctx) as pump:
        attack_set = await generate_attack_set(ctx.engine, **ctx.job.params, on_progress=pump)
    return {"attack_set_id": int(attack_set.id)}
