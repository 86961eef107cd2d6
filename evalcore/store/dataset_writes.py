"""The write of an imported dataset: its row, its items in batches, then what is known
only once every row is read (count, language, meta), all in one transaction, so a bad
row or a crash leaves no half-imported dataset behind.

The checks a user acts on (same content imported before, a name taken, no rows) are the
dataset layer's: it hands them in as functions called inside the transaction.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from sqlmodel import Session

from evalcore.dataset.records import Question
from evalcore.store.datasets import insert_items, set_item_language
from evalcore.store.db import Bind, session_scope
from evalcore.store.tables import Dataset

Finish = Callable[[int], tuple[str, dict[str, Any], list[int]]]
"""Called with the number of items stored: (the dataset's language, its meta, the idx of
the items to give that language); raising there rolls the whole import back."""


def store_dataset(bind: Bind, fields: dict[str, Any], batches: Iterable[list[Question]], *,
                  check: Callable[[Session], None], finish: Finish,
                  on_progress: Callable[[int], None] | None = None) -> Dataset:
    """`check(session)` (refuse before anything is written), the dataset row (`fields`),
    each batch of items (`on_progress(items stored)` after each), then `finish`'s
    language and meta and the count; returns the dataset row."""
    with session_scope(bind) as session:
        check(session)
        dataset = Dataset(language="", item_count=0, meta={}, **fields)
        session.add(dataset)
        session.flush()
        count = 0
        for batch in batches:
            insert_items(session, int(dataset.id), batch)  # type: ignore[arg-type]
            count += len(batch)
            if on_progress is not None:
                on_progress(count)
        dataset.language, dataset.meta, undecided = finish(count)
        set_item_language(session, int(dataset.id), undecided,  # type: ignore[arg-type]
                          dataset.language)
        dataset.item_count = count
        session.add(dataset)
    return dataset
