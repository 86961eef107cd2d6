"""The writes of an attack set: a whole set (an imported file), an empty generated set,
and one generated batch, each all or nothing in one transaction.

What the rows mean (the derived questions, the lineage in the derived dataset's meta) is
the perturb layer's: it hands those in as functions called inside the transaction, once
the ids they need exist. `fence(conn)` runs first in each transaction; raising there (a
job whose lease was taken over) writes nothing.
"""
from __future__ import annotations

from typing import Any, Callable, Optional

from sqlmodel import Session

from evalcore.dataset.records import ParsedDataset, Question
from evalcore.errors import EvalcoreError
from evalcore.store import attack_sets as q
from evalcore.store.datasets import insert_items
from evalcore.store.db import Bind, session_scope
from evalcore.store.tables import AttackSet, Dataset, Item

Fence = Callable[[Any], None]
"""Called with the SQLAlchemy connection inside each write transaction, before anything is
written; raising aborts (rolls back) that transaction. The job engine checks its lease's
fencing token here, so a worker whose lease was taken over cannot write."""

Rows = list[dict[str, Any]]


class SetNameTaken(EvalcoreError):
    """An attack set of the wanted name exists already; `set_id` is its id."""

    def __init__(self, name: str, set_id: int) -> None:
        super().__init__(f"an attack set named {name!r} already exists (id {set_id})")
        self.name, self.set_id = name, set_id


def free_name(session: Session, wanted: str, table: Any) -> str:
    """`wanted`, or `wanted-2`, `wanted-3` ... when `table` (Dataset or AttackSet) has it."""
    taken = q.names_starting(session, wanted, table)
    if wanted not in taken:
        return wanted
    n = 2
    while f"{wanted}-{n}" in taken:
        n += 1
    return f"{wanted}-{n}"


def set_name(session: Session, wanted: Optional[str], default: str) -> str:
    """`wanted` (SetNameTaken when a set has it), else `default` made free."""
    if wanted:
        clash = q.set_named(session, wanted)
        if clash is not None:
            raise SetNameTaken(wanted, clash)
        return wanted
    return free_name(session, default, AttackSet)


def choose_set_name(bind: Bind, wanted: Optional[str], default: str) -> str:
    """`set_name` in a read of its own: the name a set would get now."""
    with session_scope(bind, write=False) as session:
        return set_name(session, wanted, default)


def store_attack_set(bind: Bind, *, source: Any, clean_name: str, rows: Optional[Rows],
                     rows_of: Optional[Callable[[list[Item]], Rows]], name: Optional[str],
                     default_name: Callable[[str], str], fields: dict[str, Any],
                     derive: Callable[[AttackSet, Any, Rows], ParsedDataset],
                     fence: Optional[Fence] = None) -> AttackSet:
    """The clean dataset (when `source` is a ParsedDataset, stored as `clean_name` made
    free), the attack set (`fields`; named `name` or `default_name(source's name)`), its
    derived dataset (`derive(set, source, rows)`) and the attack items, in one transaction.
    `rows_of(clean items)` makes the rows inside it when the clean dataset may be new."""
    with session_scope(bind) as session:
        if fence is not None:
            fence(session.connection())
        if isinstance(source, ParsedDataset):
            source = q.insert_dataset(session, source, free_name(session, clean_name, Dataset))
        if rows_of is not None:
            rows = rows_of(q.dataset_items(session, int(source.id)))
        assert rows is not None
        attack_set = AttackSet(name=set_name(session, name, default_name(source.name)),
                               source_dataset_id=source.id, item_count=len(rows), **fields)
        session.add(attack_set)
        session.flush()
        derived = derive(attack_set, source, rows)
        dataset = q.insert_dataset(session, derived,
                                   free_name(session, f"attack:{attack_set.name}", Dataset))
        attack_set.dataset_id = dataset.id
        session.add(attack_set)
        q.insert_attack_items(session, int(attack_set.id), int(dataset.id), rows)  # type: ignore[arg-type]
        session.flush()
        session.refresh(attack_set)
    return attack_set


def create_empty_attack_set(bind: Bind, *, source: Any, name: Optional[str],
                            default_name: str, fields: Callable[[int], dict[str, Any]],
                            derived: Callable[[AttackSet], dict[str, Any]]) -> int:
    """A generated set before its items: the set (`fields(items in the source)`, which may
    refuse) and its empty derived dataset (`derived(set)`: format, meta ...), linked, in
    one transaction; returns the set's id."""
    with session_scope(bind) as session:
        values = fields(q.count_items(session, int(source.id)))
        attack_set = AttackSet(name=set_name(session, name, default_name),
                               source_dataset_id=source.id, item_count=0, **values)
        session.add(attack_set)
        session.flush()
        dataset = Dataset(name=free_name(session, f"attack:{attack_set.name}", Dataset),
                          task_type=source.task_type, language=source.language,
                          source_file="", sha256="", item_count=0, **derived(attack_set))
        session.add(dataset)
        session.flush()
        attack_set.dataset_id = dataset.id
        session.add(attack_set)
        return int(attack_set.id)  # type: ignore[arg-type]


def append_attack_items(bind: Bind, set_id: int, rows: Rows,
                        questions: Callable[[str], list[Question]],
                        fence: Optional[Fence] = None) -> bool:
    """One generated batch: the derived items (`questions(the set's level)`), the attack
    items and the counts, in one transaction; False (nothing written) if the set or its
    derived dataset is gone."""
    with session_scope(bind) as session:
        if fence is not None:
            fence(session.connection())
        attack_set = session.get(AttackSet, set_id)
        if attack_set is None or attack_set.dataset_id is None:
            return False
        insert_items(session, int(attack_set.dataset_id), questions(attack_set.level))
        q.insert_attack_items(session, set_id, attack_set.dataset_id, rows)
        q.add_to_counts(session, set_id, attack_set.dataset_id, len(rows))
    return True
