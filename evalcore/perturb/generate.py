"""Generated attack sets: validate and store an empty set, then attack its source items.

Generated sets are written incrementally so a job can be killed and resumed:
`create_attack_set` validates and stores the set with an empty derived dataset, then
`generate_attack_items` attacks and stores the items in batches (`BATCH_SIZE`), each in its
own transaction, skipping source items the set already holds (unique per set).
"""
from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Optional, Union

import evalcore.perturb as perturb
from evalcore.config import load_settings
from evalcore.dataset import get_dataset, load_items
from evalcore.dataset.records import Question
from evalcore.perturb.params import check_swap_judge
from evalcore.perturb.set_storage import (
    Fence,
    append,
    default_set_name,
    derived_format,
    lineage,
    named_set_refused,
    row_from_result,
)
from evalcore.perturb.sets import AttackSetError, get_attack_set, normalize_level
from evalcore.perturb.swap_judge import judge_label
from evalcore.providers.client import run_closing_clients
from evalcore.store import attack_sets as q
from evalcore.store.attack_set_writes import create_empty_attack_set
from evalcore.store.tables import AttackSet
from evalcore.values import validated

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine

__all__ = ["BATCH_SIZE", "Fence", "create_attack_set", "generate_attack_items",
           "generate_attack_items_async", "generate_attack_set", "make_attack_set"]

BATCH_SIZE = 50
"""Items attacked and stored per transaction: a killed generation loses at most one batch
of work, and the next `generate_attack_items` continues after the last stored batch."""


def create_attack_set(engine: "Engine", *, dataset: Union[str, int], level: str,
                      seed: int = 0, params: Optional[dict[str, Any]] = None,
                      translator: Optional[str] = None, name: Optional[str] = None,
                      created_by: str = "", limit: Optional[int] = None,
                      models_path: Optional[Path] = None) -> int:
    """Validate the request and store the (empty) attack set; returns its id.

    The row and its empty derived dataset are written at once, so a job can point at the
    set before any item exists; `generate_attack_items` fills it in. `translator` is a
    spec ("llm:MODEL", "google"), kept in the lineage for the sentence level; a word
    attack's `swap_judge` must be a model of `models_path` (default: the settings').
    """
    level = normalize_level(level)
    resolved = _resolved(level, params)  # unknown params fail here, before any work
    if resolved.get("swap_judge"):
        check_swap_judge(resolved, models_path or load_settings().models_path)
    if translator is not None and not isinstance(translator, str):
        raise AttackSetError("give the translator as a spec ('llm:MODEL' or 'google') so the "
                             "set's lineage can name it")
    if level == "sentence" and not translator:
        raise AttackSetError("the sentence attack needs a translator: 'llm:MODEL' (one of "
                             "your models back-translates) or 'google' (online)")
    if limit is not None and limit < 1:
        raise AttackSetError(f"limit must be at least 1 (got {limit})")
    source = get_dataset(engine, dataset)

    def fields(count: int) -> dict[str, Any]:
        total = min(count, limit) if limit is not None else count
        if not total:
            raise AttackSetError(f"dataset {source.name!r} has no items to attack")
        spec = {"params": dict(params or {}), "resolved": resolved,
                "translator": translator, "limit": limit, "total": total}
        if level == "word":  # which judge made the swaps: a model, "embedded" or none
            spec["swap_judge"] = judge_label(resolved)
        return {"level": level, "origin": "generated", "seed": seed, "params": spec,
                "created_by": created_by}

    def derived(attack_set: AttackSet) -> dict[str, Any]:
        return {"format": derived_format(source.format),
                "meta": {"lineage": lineage(attack_set, source), "attack_level": level}}

    with named_set_refused():
        return create_empty_attack_set(
            engine, source=source, name=name,
            default_name=default_set_name(source.name, level, seed), fields=fields,
            derived=derived)


async def generate_attack_items_async(engine: "Engine", set_id: int, *,
                                      on_progress: Optional[Callable[[int, int], None]] = None,
                                      fence: Optional[Fence] = None, translator: Any = None,
                                      models_path: Optional[Path] = None,
                                      batch_size: int = BATCH_SIZE) -> AttackSet:
    """Attack the set's source items not stored yet, `batch_size` per transaction.

    Source items already in the set are skipped, so a killed generation continues where
    it stopped, with no item lost or stored twice (each item's attack is seeded by its own
    index, so the result is the same as one uninterrupted pass). `on_progress(done,
    total)` follows each stored batch (done counts earlier batches too); an exception it
    raises stops the generation after that batch. `translator` overrides the lineage's
    spec with a translator object (tests, pages holding one).
    """
    attack_set = await asyncio.to_thread(get_attack_set, engine, set_id)
    if attack_set.origin != "generated":
        raise AttackSetError(f"attack set '{attack_set.name}' was imported; there is nothing "
                             "to generate")
    spec = attack_set.params or {}
    items = await asyncio.to_thread(load_items, engine, int(attack_set.source_dataset_id),
                                    spec.get("limit"))
    stored = await asyncio.to_thread(q.stored_sources, engine, int(attack_set.id))  # type: ignore[arg-type]
    todo = [item for item in items if item.id not in stored]
    total, done = len(items), len(items) - len(todo)
    if on_progress:
        on_progress(done, total)
    if todo and translator is None and spec.get("translator"):
        if models_path is None:
            models_path = load_settings().models_path
        translator = perturb.make_translator(spec["translator"], models_path=models_path)
    attack = perturb.attack_questions  # through the package: tests replace it there
    judged = {"models_path": models_path} if (spec.get("resolved") or {}).get(
        "swap_judge") and models_path is not None else {}
    for start in range(0, len(todo), max(1, batch_size)):
        batch = todo[start:start + max(1, batch_size)]
        questions = [validated(Question, item, fail=lambda why: AttackSetError(  # stored rows
            f"set '{attack_set.name}': an item of its source dataset is not a valid question "
            f"({why}); import that dataset again")) for item in batch]
        results = await attack(questions,
                               attack_set.level, seed=attack_set.seed or 0,
                               params=spec.get("params"), translator=translator, **judged)
        if len(results) != len(batch):
            raise AttackSetError(f"the {attack_set.level} attack returned {len(results)} "
                                 f"results for {len(batch)} questions of set "
                                 f"'{attack_set.name}'")
        rows = [row_from_result(item, result) for item, result in zip(batch, results)]
        await asyncio.to_thread(append, engine, int(attack_set.id), rows, fence)  # type: ignore[arg-type]
        done += len(batch)
        if on_progress:
            on_progress(done, total)
    return await asyncio.to_thread(get_attack_set, engine, int(attack_set.id))  # type: ignore[arg-type]


def generate_attack_items(engine: "Engine", set_id: int, *,
                          on_progress: Optional[Callable[[int, int], None]] = None,
                          fence: Optional[Fence] = None, **kwargs: Any) -> AttackSet:
    """`generate_attack_items_async` from synchronous code (a worker, the CLI)."""
    return run_closing_clients(generate_attack_items_async(
        engine, set_id, on_progress=on_progress, fence=fence, **kwargs))


async def generate_attack_set(engine: "Engine", *, dataset: Union[str, int], level: str,
                              seed: int = 0, params: Optional[dict[str, Any]] = None,
                              translator: Any = None, models_path: Optional[Path] = None,
                              name: Optional[str] = None, created_by: str = "",
                              limit: Optional[int] = None,
                              on_progress: Optional[Callable[..., None]] = None) -> AttackSet:
    """`create_attack_set` then `generate_attack_items_async`, on a running loop (pages).

    `translator` is a spec ("llm:MODEL", "google") or a translator object (sentence level).
    """
    spec = translator if isinstance(translator, str) or translator is None else None
    if level == "sentence" and translator is not None and spec is None:
        spec = getattr(translator, "name", "") or type(translator).__name__
    set_id = await asyncio.to_thread(
        create_attack_set, engine, dataset=dataset, level=level, seed=seed, params=params,
        translator=spec, name=name, created_by=created_by, limit=limit,
        models_path=models_path)
    return await generate_attack_items_async(
        engine, set_id, on_progress=on_progress, models_path=models_path,
        translator=None if isinstance(translator, str) else translator)


def make_attack_set(engine: "Engine", **kwargs: Any) -> AttackSet:
    """`generate_attack_set` from synchronous code (the CLI): runs its own event loop."""
    return run_closing_clients(generate_attack_set(engine, **kwargs))


def _resolved(level: str, params: Optional[dict[str, Any]]) -> dict[str, Any]:
    """Every parameter the attack used, defaults included (the lineage must not depend on
    defaults that may change later)."""
    resolve = getattr(perturb, "resolve_params", None)
    return dict(resolve(level, params)) if resolve is not None else dict(params or {})
