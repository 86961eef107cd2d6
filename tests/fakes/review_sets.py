"""Attack sets written straight to the store for review-queue tests: each item with the
flags, language and swap details the test chooses, so expected figures come by hand."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def seed_attack_set(engine: Any, n: int, *, level: str = "word", name: str = "set",
                    flagged: Sequence[int] = (), language: str = "en",
                    details: Sequence[dict[str, Any]] | None = None) -> tuple[int, list[int]]:
    """An attack set of `n` items (positions in `flagged` carry a flag; `details[i]` is
    item i's `attack_details`); returns (set id, attack item ids in source order)."""
    from evalcore.store.db import session_scope
    from evalcore.store.tables import AttackItem, AttackSet, Dataset, Item

    with session_scope(engine) as session:
        source = Dataset(name=f"{name}-src", format="test", task_type="choice", language=language)
        derived = Dataset(name=f"{name}-att", format="test_attacked", task_type="choice",
                          language=language)
        session.add_all([source, derived])
        session.flush()
        clean = [Item(dataset_id=source.id, idx=i, question=f"question {i}", task_type="choice",
                      choices=["yes", "no"], language=language) for i in range(n)]
        attacked = [Item(dataset_id=derived.id, idx=i, question=f"question {i} attacked",
                         task_type="choice", choices=["yes", "no"], language=language,
                         meta={"attack_level": level, "attack_details": {
                             "language": language, **((details or [{}] * n)[i])}})
                    for i in range(n)]
        session.add_all(clean + attacked)
        session.flush()
        attack_set = AttackSet(name=name, source_dataset_id=source.id, dataset_id=derived.id,
                               level=level, seed=1, item_count=n)
        session.add(attack_set)
        session.flush()
        rows = [AttackItem(attack_set_id=attack_set.id, source_item_id=c.id,
                           attacked_item_id=a.id, original=c.question, attacked=a.question,
                           flags=["low_similarity"] if i in flagged else [])
                for i, (c, a) in enumerate(zip(clean, attacked))]
        session.add_all(rows)
        session.flush()
        return int(attack_set.id), [int(r.id) for r in rows]  # type: ignore[arg-type]
