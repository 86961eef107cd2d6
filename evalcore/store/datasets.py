"""The reads and writes of datasets and their items (`evalcore.dataset`'s catalog and
importer, attack sets, question numbers).

Functions taking a `conn` run inside the caller's transaction (an import, a delete: all
or nothing), a Connection or an ORM Session alike (Core statements; rows come back); on
an Engine, they open a short transaction of their own.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Optional, Union

from sqlalchemy import delete, func, insert, select, update
from sqlalchemy.engine import Connection, Row

from evalcore.dataset.records import Question
from evalcore.store.db import Bind, reading
from evalcore.store.tables import AttackSet, Call, Dataset, Item, Run

ATTACK_SET = AttackSet.__table__
CALL = Call.__table__
DATASET = Dataset.__table__
ITEM = Item.__table__
RUN = Run.__table__


def list_datasets(conn: Bind) -> list[Row]:
    """Every stored dataset, oldest first."""
    with reading(conn) as tx:
        return list(tx.execute(select(DATASET).order_by(DATASET.c.id)).all())


def _by_id(conn: Any, dataset_id: int) -> Optional[Row]:
    return conn.execute(select(DATASET).where(DATASET.c.id == dataset_id)).first()


def find_dataset(conn: Any, name_or_id: Union[str, int]) -> Optional[Row]:
    """A dataset by name, or by id (an int, or digits when no dataset has that name)."""
    if isinstance(name_or_id, int):
        return _by_id(conn, name_or_id)
    found = dataset_named(conn, name_or_id)
    if found is None and name_or_id.strip().isdigit():
        found = _by_id(conn, int(name_or_id))
    return found


def dataset_names(conn: Any) -> list[str]:
    """Every dataset's name, sorted (for "known datasets: ..." errors)."""
    return list(conn.execute(select(DATASET.c.name).order_by(DATASET.c.name)).scalars())


def dataset_named(conn: Any, name: str) -> Optional[Row]:
    """The dataset called `name`, if any."""
    return conn.execute(select(DATASET).where(DATASET.c.name == name)).first()


def stamp_creator(conn: Connection, dataset_id: int, who: str) -> None:
    """Who imported a dataset, written in the import's own transaction."""
    conn.execute(update(DATASET).where(DATASET.c.id == dataset_id).values(created_by=who))


def dataset_id_named(conn: Bind, name: str) -> Optional[int]:
    """The id of the dataset called `name`, in a transaction of its own."""
    with reading(conn) as tx:
        return tx.execute(select(DATASET.c.id).where(DATASET.c.name == name)).scalar()


def same_content(conn: Any, sha256: str, fmt: str,
                 mapping: dict[str, Any] | None = None) -> Optional[Row]:
    """A dataset already imported from the same bytes read the same way: the same format
    and, for a mapped file, the same column mapping (the same bytes read with another task
    type or reference column are another dataset)."""
    rows = conn.execute(select(DATASET).where(DATASET.c.sha256 == sha256,
                                              DATASET.c.format == fmt))
    for row in rows:
        if mapping is None or (row.meta or {}).get("mapping") == mapping:
            return row
    return None


def load_items(conn: Bind, dataset_id: int, limit: Optional[int] = None) -> list[Row]:
    """The stored items of a dataset in file order, the first `limit` if given."""
    query = select(ITEM).where(ITEM.c.dataset_id == dataset_id).order_by(ITEM.c.idx)
    if limit is not None:
        query = query.limit(limit)
    with reading(conn) as tx:
        return list(tx.execute(query).all())


def insert_items(session: Any, dataset_id: int, questions: Sequence[Question]) -> None:
    """The items of `questions`, in one multi-row insert."""
    if not questions:
        return
    session.execute(insert(ITEM), [
        {"dataset_id": dataset_id, "idx": q.idx, "question": q.question, "reference": q.reference,
         "choices": q.choices, "task_type": q.task_type, "language": q.language, "meta": q.meta}
        for q in questions])


def set_item_language(session: Any, dataset_id: int, positions: Sequence[int],
                      language: str) -> None:
    """Give the items at `positions` (idx) the dataset's language."""
    for start in range(0, len(positions), 500):
        session.execute(update(ITEM).where(
            ITEM.c.dataset_id == dataset_id,
            ITEM.c.idx.in_(positions[start:start + 500]))
            .values(language=language))


def dataset_users(conn: Any, dataset_id: int) -> tuple[list[Any], list[int]]:
    """([(attack set id, name)], [run id]) of what still needs the dataset."""
    sets = [tuple(row) for row in conn.execute(select(ATTACK_SET.c.id, ATTACK_SET.c.name).where(
        (ATTACK_SET.c.source_dataset_id == dataset_id) | (ATTACK_SET.c.dataset_id == dataset_id)
    ))]
    used = select(ITEM.c.id).where(ITEM.c.dataset_id == dataset_id)
    run_ids = sorted(set(conn.execute(select(RUN.c.id).where(RUN.c.dataset_id == dataset_id))
                         .scalars())
                     | set(conn.execute(select(CALL.c.run_id).where(
                         CALL.c.item_id.in_(used)).distinct()).scalars()))
    return sets, run_ids


def delete_dataset_rows(session: Any, dataset_id: int) -> None:
    """Delete a dataset and its items (the caller checked `dataset_users`)."""
    session.execute(delete(ITEM).where(ITEM.c.dataset_id == dataset_id))
    session.execute(delete(DATASET).where(DATASET.c.id == dataset_id))


def item_positions(conn: Bind, item_ids: Iterable[int]) -> dict[int, int]:
    """{item id: 0-based position in its dataset} of the given database item ids."""
    ids = sorted({int(i) for i in item_ids})
    found: dict[int, int] = {}
    with reading(conn) as tx:  # also inside a caller's transaction (a review clash)
        for start in range(0, len(ids), 500):  # stay under bound-parameter limits
            query = select(ITEM.c.id, ITEM.c.idx).where(ITEM.c.id.in_(ids[start:start + 500]))
            found.update({int(i): int(x) for i, x in tx.execute(query)})
    return found


def item_texts(conn: Bind, dataset_id: int, limit: Optional[int] = None
               ) -> list[tuple[str, Any]]:
    """(question, choices) of a dataset's items in file order, the first `limit` if given."""
    query = (select(ITEM.c.question, ITEM.c.choices).where(ITEM.c.dataset_id == dataset_id)
             .order_by(ITEM.c.idx))
    if limit is not None:
        query = query.limit(limit)
    with reading(conn) as tx:
        return [(q, choices) for q, choices in tx.execute(query)]


def task_types(conn: Bind, dataset_id: int) -> set[str]:
    """The distinct task types of a dataset's items."""
    query = select(ITEM.c.task_type).where(ITEM.c.dataset_id == dataset_id).distinct()
    with reading(conn) as tx:
        return {str(t) for (t,) in tx.execute(query)}


def dataset_with_items(conn: Bind, dataset_id: int, item_ids: Sequence[int]
                       ) -> tuple[Optional[Row], dict[int, Row]]:
    """(a dataset by id, None if gone; {item id: item row} of `item_ids`), in one read."""
    found: dict[int, Row] = {}
    with reading(conn) as tx:
        dataset = _by_id(tx, dataset_id)
        ids = list(item_ids)
        for start in range(0, len(ids), 500):  # stay under bound-parameter limits
            chunk = ids[start:start + 500]
            for row in tx.execute(select(ITEM).where(ITEM.c.id.in_(chunk))):
                found[int(row.id)] = row
    return dataset, found


def names_by_id(conn: Bind, ids: Iterable[int]) -> dict[int, str]:
    """{dataset id: name} of the given ids (deleted ones are left out)."""
    with reading(conn) as tx:
        return {int(i): n for i, n in tx.execute(
            select(DATASET.c.id, DATASET.c.name).where(DATASET.c.id.in_(list(ids))))}


def catalog_rows(conn: Bind) -> tuple[set[int], list[tuple[int, str, str]], int]:
    """(ids of the datasets derived from attack sets, (id, format, task type) of every
    dataset, how many attack sets there are), in one read."""
    with reading(conn) as tx:
        derived = {int(i) for (i,) in tx.execute(
            select(ATTACK_SET.c.dataset_id).where(ATTACK_SET.c.dataset_id.is_not(None)))}
        formats = [(int(i), str(f), str(t)) for i, f, t in tx.execute(
            select(DATASET.c.id, DATASET.c.format, DATASET.c.task_type))]
        count = int(tx.execute(select(func.count(ATTACK_SET.c.id))).scalar_one())
    return derived, formats, count
