"""The reads and writes of datasets and their items (`evalcore.dataset`'s catalog and
importer, attack sets, question numbers).

Functions taking a `Session` run inside the caller's transaction (an import, a delete:
all or nothing); functions taking an `Engine` open their own short one.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Optional, Union

from sqlalchemy import delete, func, insert, select, update
from sqlalchemy.engine import Connection, Engine
from sqlmodel import Session
from sqlmodel import select as orm_select

from evalcore.dataset.records import Question
from evalcore.store.db import reader, session_scope
from evalcore.store.tables import AttackSet, Call, Dataset, Item, Run


def list_datasets(engine: Engine) -> list[Dataset]:
    """Every stored dataset, oldest first."""
    with session_scope(engine) as session:
        return list(session.exec(orm_select(Dataset).order_by(Dataset.id)).all())  # type: ignore[arg-type]


def find_dataset(session: Session, name_or_id: Union[str, int]) -> Optional[Dataset]:
    """A dataset by name, or by id (an int, or digits when no dataset has that name)."""
    if isinstance(name_or_id, int):
        return session.get(Dataset, name_or_id)
    found = session.exec(orm_select(Dataset).where(Dataset.name == name_or_id)).first()
    if found is None and name_or_id.strip().isdigit():
        found = session.get(Dataset, int(name_or_id))
    return found


def dataset_names(session: Session) -> list[str]:
    """Every dataset's name, sorted (for "known datasets: ..." errors)."""
    return list(session.exec(orm_select(Dataset.name).order_by(Dataset.name)).all())


def dataset_named(session: Session, name: str) -> Optional[Dataset]:
    """The dataset called `name`, if any."""
    return session.exec(orm_select(Dataset).where(Dataset.name == name)).first()


def stamp_creator(conn: Connection, dataset_id: int, who: str) -> None:
    """Who imported a dataset, written in the import's own transaction."""
    conn.execute(update(Dataset).where(Dataset.id == dataset_id).values(created_by=who))  # type: ignore[arg-type]


def dataset_id_named(engine: Engine, name: str) -> Optional[int]:
    """The id of the dataset called `name`, in a transaction of its own."""
    with session_scope(engine) as session:
        return session.exec(orm_select(Dataset.id).where(Dataset.name == name)).first()


def same_content(session: Session, sha256: str, fmt: str) -> Optional[Dataset]:
    """A dataset already imported from the same bytes read as the same format."""
    return session.exec(orm_select(Dataset).where(Dataset.sha256 == sha256,
                                                  Dataset.format == fmt)).first()


def load_items(engine: Engine, dataset_id: int, limit: Optional[int] = None) -> list[Item]:
    """The stored items of a dataset in file order, the first `limit` if given."""
    query = orm_select(Item).where(Item.dataset_id == dataset_id).order_by(Item.idx)  # type: ignore[arg-type]
    if limit is not None:
        query = query.limit(limit)
    with session_scope(engine) as session:
        return list(session.exec(query).all())


def insert_items(session: Session, dataset_id: int, questions: Sequence[Question]) -> None:
    """The items of `questions`, in one multi-row insert."""
    if not questions:
        return
    session.execute(insert(Item), [
        {"dataset_id": dataset_id, "idx": q.idx, "question": q.question, "reference": q.reference,
         "choices": q.choices, "task_type": q.task_type, "language": q.language, "meta": q.meta}
        for q in questions])


def set_item_language(session: Session, dataset_id: int, positions: Sequence[int],
                      language: str) -> None:
    """Give the items at `positions` (idx) the dataset's language."""
    for start in range(0, len(positions), 500):
        session.execute(update(Item).where(  # type: ignore[arg-type]
            Item.dataset_id == dataset_id,
            Item.idx.in_(positions[start:start + 500]))  # type: ignore[attr-defined]
            .values(language=language))


def dataset_users(session: Session, dataset_id: int) -> tuple[list[Any], list[int]]:
    """([(attack set id, name)], [run id]) of what still needs the dataset."""
    sets = list(session.exec(orm_select(AttackSet.id, AttackSet.name).where(
        (AttackSet.source_dataset_id == dataset_id) | (AttackSet.dataset_id == dataset_id)
    )).all())
    used = orm_select(Item.id).where(Item.dataset_id == dataset_id)
    run_ids = sorted(set(session.exec(orm_select(Run.id).where(Run.dataset_id == dataset_id)).all())
                     | set(session.exec(orm_select(Call.run_id).where(
                         Call.item_id.in_(used)).distinct()).all()))  # type: ignore[union-attr]
    return sets, run_ids


def delete_dataset_rows(session: Session, dataset_id: int) -> None:
    """Delete a dataset and its items (the caller checked `dataset_users`)."""
    session.execute(delete(Item).where(Item.dataset_id == dataset_id))  # type: ignore[arg-type]
    session.execute(delete(Dataset).where(Dataset.id == dataset_id))  # type: ignore[arg-type]


def item_positions(engine: Engine, item_ids: Iterable[int]) -> dict[int, int]:
    """{item id: 0-based position in its dataset} of the given database item ids."""
    ids = sorted({int(i) for i in item_ids})
    found: dict[int, int] = {}
    with reader(engine).connect() as conn:
        for start in range(0, len(ids), 500):  # stay under bound-parameter limits
            query = select(Item.id, Item.idx).where(Item.id.in_(ids[start:start + 500]))  # type: ignore[union-attr]
            found.update({int(i): int(x) for i, x in conn.execute(query)})
    return found


def item_texts(engine: Engine, dataset_id: int, limit: Optional[int] = None
               ) -> list[tuple[str, Any]]:
    """(question, choices) of a dataset's items in file order, the first `limit` if given."""
    query = (select(Item.question, Item.choices).where(Item.dataset_id == dataset_id)
             .order_by(Item.idx))
    if limit is not None:
        query = query.limit(limit)
    with reader(engine).connect() as conn:
        return [(q, choices) for q, choices in conn.execute(query)]


def task_types(engine: Engine, dataset_id: int) -> set[str]:
    """The distinct task types of a dataset's items."""
    query = select(Item.task_type).where(Item.dataset_id == dataset_id).distinct()
    with reader(engine).connect() as conn:
        return {str(t) for (t,) in conn.execute(query)}


def dataset_with_items(engine: Engine, dataset_id: int, item_ids: Sequence[int]
                       ) -> tuple[Optional[Dataset], dict[int, Item]]:
    """(a dataset by id, None if gone; {item id: Item} of `item_ids`), in one read."""
    found: dict[int, Item] = {}
    with session_scope(engine, write=False) as session:
        dataset = session.get(Dataset, dataset_id)
        ids = list(item_ids)
        for start in range(0, len(ids), 500):  # stay under bound-parameter limits
            chunk = ids[start:start + 500]
            for row in session.exec(orm_select(Item).where(Item.id.in_(chunk))):  # type: ignore[union-attr]
                found[int(row.id)] = row  # type: ignore[arg-type]
    return dataset, found


def names_by_id(engine: Engine, ids: Iterable[int]) -> dict[int, str]:
    """{dataset id: name} of the given ids (deleted ones are left out)."""
    with reader(engine).connect() as conn:
        return {int(i): n for i, n in conn.execute(
            select(Dataset.id, Dataset.name).where(Dataset.id.in_(list(ids))))}  # type: ignore[union-attr]


def catalog_rows(engine: Engine) -> tuple[set[int], list[tuple[int, str]], int]:
    """(ids of the datasets derived from attack sets, (id, format) of every dataset, how
    many attack sets there are), in one read."""
    with reader(engine).connect() as conn:
        derived = {int(i) for (i,) in conn.execute(
            select(AttackSet.dataset_id).where(AttackSet.dataset_id.is_not(None)))}  # type: ignore[union-attr]
        formats = [(int(i), str(f)) for i, f in conn.execute(select(Dataset.id, Dataset.format))]
        count = int(conn.execute(select(func.count(AttackSet.id))).scalar_one())
    return derived, formats, count
