"""The reads and writes of attack sets: named queries for `evalcore.perturb`'s set modules.

Functions taking a `Session` run inside the caller's transaction (a generated batch, an
imported set: all or nothing: `store.attack_set_writes`); those taking a `conn` join the
caller's transaction, or open a short one of their own on an Engine.
Nothing here raises the perturb layer's errors: a query returns what it found (None, a
clash id, the runs that use a set) and the caller words the error.
"""
from __future__ import annotations

from typing import Any, Optional, Union

from sqlalchemy import delete, func, insert, update
from sqlmodel import Session, select

from evalcore.dataset.records import ParsedDataset
from evalcore.store.datasets import insert_items
from evalcore.store.db import Bind, session_scope
from evalcore.store.tables import (
    AttackItem,
    AttackSet,
    Call,
    Dataset,
    Item,
    Job,
    ReviewEvent,
)


def count_items(session: Session, dataset_id: int) -> int:
    """How many items a dataset holds."""
    return int(session.exec(select(func.count(Item.id))
                            .where(Item.dataset_id == dataset_id)).one())


def dataset_items(session: Session, dataset_id: int) -> list[Item]:
    """A dataset's items (the clean items an imported file is matched against)."""
    return list(session.exec(select(Item).where(Item.dataset_id == dataset_id)))


def stored_sources(conn: Bind, set_id: int) -> set[int]:
    """The source item ids a set already holds (a resumed generation skips them)."""
    with session_scope(conn, write=False) as session:
        return set(session.exec(select(AttackItem.source_item_id)
                                .where(AttackItem.attack_set_id == set_id)))


def add_to_counts(session: Session, set_id: int, dataset_id: int, n: int) -> None:
    """Count `n` more items on the set and its derived dataset (atomic increments)."""
    session.execute(update(AttackSet).where(AttackSet.id == set_id)  # type: ignore[arg-type]
                    .values(item_count=AttackSet.item_count + n))
    session.execute(update(Dataset).where(Dataset.id == dataset_id)  # type: ignore[arg-type]
                    .values(item_count=Dataset.item_count + n))


def insert_dataset(session: Session, parsed: ParsedDataset, name: str) -> Dataset:
    """A dataset row named `name` and its items."""
    dataset = Dataset(name=name, format=parsed.format, task_type=parsed.task_type,
                      language=parsed.language, source_file=parsed.source_file,
                      sha256=parsed.sha256, item_count=len(parsed.questions), meta=parsed.meta)
    session.add(dataset)
    session.flush()
    insert_items(session, int(dataset.id), parsed.questions)  # type: ignore[arg-type]
    return dataset


def insert_attack_items(session: Session, attack_set_id: int, dataset_id: int,
                        rows: list[dict[str, Any]]) -> None:
    """One pending attack item per row, linked to the derived item of the same index."""
    by_idx = {idx: item_id for idx, item_id in
              session.exec(select(Item.idx, Item.id).where(Item.dataset_id == dataset_id))}
    session.execute(insert(AttackItem), [
        {"attack_set_id": attack_set_id, "source_item_id": r["source"].id,
         "attacked_item_id": by_idx[r.get("idx", r["source"].idx)],
         "original": r["source"].question, "attacked": r["attacked"],
         "attack_num": r["attack_num"], "pairs": r["pairs"], "similarity": r["similarity"],
         "flags": r["flags"], "status": "pending", "reviewer": "", "reviewed_at": None,
         "edited": False, "note": ""} for r in rows])


def names_starting(session: Session, wanted: str, table: Any) -> set[str]:
    """The names in `table` (Dataset or AttackSet) that start with `wanted`."""
    return set(session.exec(select(table.name).where(table.name.startswith(wanted))))


def set_named(session: Session, name: str) -> Optional[int]:
    """The id of the attack set called `name`, if any."""
    return session.exec(select(AttackSet.id).where(AttackSet.name == name)).first()


def list_sets(conn: Bind, source_dataset_id: Optional[int] = None) -> list[AttackSet]:
    """Every attack set, oldest first; only those of one source dataset if given."""
    query = select(AttackSet).order_by(AttackSet.id)  # type: ignore[arg-type]
    if source_dataset_id is not None:
        query = query.where(AttackSet.source_dataset_id == source_dataset_id)
    with session_scope(conn, write=False) as session:
        return list(session.exec(query).all())


def find_set(conn: Bind, id_or_name: Union[str, int]) -> tuple[Optional[AttackSet],
                                                                   list[str]]:
    """(the set by id or name, None if there is none; and "id:name" of every set when
    not found, for the error)."""
    with session_scope(conn, write=False) as session:
        found = None
        if isinstance(id_or_name, int) or str(id_or_name).strip().isdigit():
            found = session.get(AttackSet, int(id_or_name))
        if found is None:
            found = session.exec(select(AttackSet).where(AttackSet.name == str(id_or_name))).first()
        if found is not None:
            return found, []
        return None, [f"{s.id}:{s.name}" for s in
                      session.exec(select(AttackSet).order_by(AttackSet.id)).all()]  # type: ignore[arg-type]


def delete_set(conn: Bind, attack_set: AttackSet) -> list[int]:
    """Delete a set, its jobs, review events, attack items and derived dataset in one
    transaction, unless runs asked its items: then delete nothing and return those runs."""
    with session_scope(conn) as session:
        used = session.exec(select(Call.run_id).join(Item, Item.id == Call.item_id)
                            .where(Item.dataset_id == attack_set.dataset_id).distinct()).all()
        if used:
            return list(used)
        session.execute(delete(Job).where(Job.attack_set_id == attack_set.id))  # type: ignore[arg-type]
        session.execute(delete(ReviewEvent).where(  # type: ignore[arg-type]
            ReviewEvent.attack_set_id == attack_set.id))
        session.execute(delete(AttackItem).where(  # type: ignore[arg-type]
            AttackItem.attack_set_id == attack_set.id))
        session.execute(delete(AttackSet).where(AttackSet.id == attack_set.id))  # type: ignore[arg-type]
        session.execute(delete(Item).where(Item.dataset_id == attack_set.dataset_id))  # type: ignore[arg-type]
        session.execute(delete(Dataset).where(Dataset.id == attack_set.dataset_id))  # type: ignore[arg-type]
    return []


def items_and_sets(conn: Bind, set_ids: list[int]
                   ) -> tuple[dict[int, AttackItem], dict[int, AttackSet]]:
    """({attack item id: item}, {set id: set}) of the given sets, in one read."""
    with session_scope(conn, write=False) as session:
        items = {a.id: a for a in session.exec(select(AttackItem).where(
            AttackItem.attack_set_id.in_(set_ids)))}  # type: ignore[attr-defined]
        sets = {s.id: s for s in session.exec(select(AttackSet).where(
            AttackSet.id.in_(set_ids)))}  # type: ignore[union-attr]
    return items, sets  # type: ignore[return-value]
