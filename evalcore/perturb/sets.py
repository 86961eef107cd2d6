"""Attack sets: attacked copies of a dataset with their lineage, stored for review and runs.

An attack set is stored as three things:

- an `AttackSet` row: source dataset, level (char, word, sentence), origin (generated or
  imported), seed and parameters (the lineage);
- a NEW derived `Dataset` (format "<source format>_attacked", meta["lineage"] naming the
  attack set and the source dataset) whose Items are the attacked questions, with the
  clean item's reference, choices, task type and language and meta["original_item_id"];
  so runs ask attacked questions like any other item;
- one `AttackItem` per question (status pending, the engine's checks and flags).

The work is split by what it is: `perturb.generate` (create and generate a set, in
batches a job can resume), `perturb.set_import` (the method's attacked CSVs, matched to a
clean dataset), `perturb.set_storage` (the rows a set is written as), `perturb.adapter`
(the engine's functions) and this module: the errors, finding, listing, describing and
deleting sets. Their SQL is in `evalcore.store.attack_sets`.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional, Union

from evalcore.errors import EvalcoreError
from evalcore.store import attack_sets as q

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine

    from evalcore.store.tables import AttackSet

LEVELS = ("char", "word", "sentence")
_LEVEL_ALIASES = {"character": "char", "char": "char", "word": "word", "sentence": "sentence"}


class AttackSetError(EvalcoreError):
    """An attack set cannot be created, imported, found or reviewed as asked."""


class DuplicateAttackFileError(AttackSetError):
    """The same attacked file was imported before, as set `existing` (#`existing_id`)."""

    def __init__(self, message: str, existing: str, existing_id: int) -> None:
        super().__init__(message)
        self.existing, self.existing_id = existing, existing_id


def normalize_level(level: str) -> str:
    """'char', 'word' or 'sentence' (accepts 'character' as the method's files spell it)."""
    found = _LEVEL_ALIASES.get((level or "").strip().lower())
    if found is None:
        raise AttackSetError(f"unknown attack level {level!r}; use one of {', '.join(LEVELS)}")
    return found


def attack_set_complete(attack_set: "AttackSet") -> bool:
    """Whether every item of a generated set is stored (imported sets always are)."""
    total = (attack_set.params or {}).get("total")
    return attack_set.origin != "generated" or total is None or attack_set.item_count >= total


def list_attack_sets(engine: "Engine", dataset: Union[str, int, None] = None) -> list["AttackSet"]:
    """Every attack set, oldest first; only those of one source dataset if given."""
    if dataset is None:
        return q.list_sets(engine)
    from evalcore.dataset import get_dataset

    return q.list_sets(engine, int(get_dataset(engine, dataset).id))  # type: ignore[arg-type]


def get_attack_set(engine: "Engine", id_or_name: Union[str, int]) -> "AttackSet":
    """An attack set by id (int or digits) or by name."""
    found, known = q.find_set(engine, id_or_name)
    if found is None:
        raise AttackSetError(f"no attack set {id_or_name!r}; known: "
                             f"{', '.join(known[:20]) or 'none yet'} (create one with "
                             "`attack --dataset NAME --level word` or `attacks import PATH`)")
    return found


def set_of_job(engine: "Engine", job_id: int) -> Optional["AttackSet"]:
    """The attack set an import job stored (params job_id), if any."""
    return next((s for s in list_attack_sets(engine)
                 if (s.params or {}).get("job_id") == int(job_id)), None)


def attack_set_info(engine: "Engine", attack_set: "AttackSet") -> dict[str, Any]:
    """A JSON-ready summary: lineage, counts by status and flags."""
    from evalcore.dataset import get_dataset
    from evalcore.perturb.review import review_progress

    source = get_dataset(engine, attack_set.source_dataset_id)
    return {"id": attack_set.id, "name": attack_set.name, "level": attack_set.level,
            "origin": attack_set.origin, "seed": attack_set.seed, "params": attack_set.params,
            "source_dataset_id": attack_set.source_dataset_id, "source_dataset": source.name,
            "dataset_id": attack_set.dataset_id, "items": attack_set.item_count,
            "created_by": attack_set.created_by,
            "created_at": attack_set.created_at.isoformat(),
            "review": review_progress(engine, int(attack_set.id))}


def delete_attack_set(engine: "Engine", id_or_name: Union[str, int]) -> "AttackSet":
    """Delete a set, its attack items and derived dataset; refuses while runs use them."""
    from evalcore.store.jobs import lease_alive, list_jobs

    attack_set = get_attack_set(engine, id_or_name)
    generating = [j for j in list_jobs(engine, kind="attack", limit=1000)
                  if j.attack_set_id == attack_set.id and lease_alive(j)]
    if generating:
        raise AttackSetError(f"attack set '{attack_set.name}' is being generated by "
                             f"{generating[0].owner}; cancel job {generating[0].id} first")
    used = q.delete_set(engine, attack_set)
    if used:
        raise AttackSetError(f"attack set '{attack_set.name}' was run in run(s) "
                             f"{', '.join(map(str, used[:10]))}; delete those runs first")
    return attack_set
