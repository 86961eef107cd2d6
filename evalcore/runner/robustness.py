"""A robustness run's spec: the clean questions and their approved attacked versions, together.

One run holds both sides, so they share the model, the prompt, the scorer and the N
rounds of the stability engine. Its items are the clean items that have at least one
approved attacked version (each asked once, even when several sets attack it) followed
by the approved attacked items. The pairs (attack item, clean item, attacked item, set,
level, attacked text as approved) are frozen into the run's spec (`extra["pairs"]`): a
later review or edit does not change what a finished run compares, and the report can
show the text that was asked.
"""
from __future__ import annotations

from typing import Any, Optional, Sequence, Union

from sqlalchemy.engine import Engine

from evalcore.dataset import get_dataset
from evalcore.errors import RunError
from evalcore.perturb.review import list_attack_items
from evalcore.perturb.sets import get_attack_set
from evalcore.runner.plan import RunSpec, run_spec


def robustness_pairs(engine: Engine, attack_set_ids: Sequence[Union[int, str]]
                     ) -> tuple[Any, list[list[Any]]]:
    """(source dataset, [[attack_item_id, clean_item_id, attacked_item_id, set_id, level,
    attacked text]]) of the approved items."""
    if not attack_set_ids:
        raise RunError("choose at least one attack set (--attack-set ID)")
    sets = [get_attack_set(engine, s) for s in attack_set_ids]
    sources = {s.source_dataset_id for s in sets}
    if len(sources) != 1:
        names = ", ".join(f"{s.name} (dataset {s.source_dataset_id})" for s in sets)
        raise RunError(f"the attack sets come from different datasets: {names}; "
                       "a robustness run compares one dataset with its attacked versions")
    pairs: list[list[Any]] = []
    for attack_set in sets:
        approved = list_attack_items(engine, int(attack_set.id), status="approved")
        approved = [a for a in approved if a.attacked_item_id is not None]
        if not approved:
            raise RunError(f"attack set '{attack_set.name}' (id {attack_set.id}) has no approved "
                           "items; review it first (Attacks page, or `attacks approve "
                           f"{attack_set.id} --unflagged` for its unflagged ones)")
        pairs += [[a.id, a.source_item_id, a.attacked_item_id, attack_set.id, attack_set.level,
                   a.attacked] for a in approved]
    return get_dataset(engine, sources.pop()), pairs


def robustness_spec(engine: Engine, *, attack_set_ids: Sequence[Union[int, str]],
                    model: str, rounds: int, dataset: Union[str, int, None] = None,
                    judge: str = "rules", prompt_style: str = "zero",
                    template: Optional[str] = None, schedule: str = "question",
                    concurrency: Optional[int] = None, temperature: Optional[float] = None,
                    name: str = "", created_by: str = "", kind: str = "robustness"
                    ) -> tuple[RunSpec, list[int]]:
    """The spec of a robustness run over the sets' approved items, and its items (the
    clean ones, then the attacked ones)."""
    source, pairs = robustness_pairs(engine, attack_set_ids)
    if dataset is not None and get_dataset(engine, dataset).id != source.id:
        raise RunError(f"the attack sets were made from dataset '{source.name}', not "
                       f"{dataset!r}; pick sets of that dataset or leave --dataset out")
    clean_ids = list(dict.fromkeys(p[1] for p in pairs))
    attacked_ids = list(dict.fromkeys(p[2] for p in pairs))
    set_ids = list(dict.fromkeys(p[3] for p in pairs))
    spec = run_spec(dict(kind=kind, dataset=source.name, model=model, rounds=rounds,
                         judge=judge, prompt_style=prompt_style, template=template,
                         schedule=schedule, concurrency=concurrency,
                         temperature=temperature, name=name, created_by=created_by,
                         extra={"attack_set_ids": set_ids, "pairs": pairs}))
    return spec, clean_ids + attacked_ids

