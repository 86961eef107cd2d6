"""Which items a run asks: a dataset's items in file order, a run's stored items with
their prompts (stored by `add_run_items`), and their questions; one page of a dataset's
items for the browser. Each function opens its own short transaction, or works inside the
caller's (`store.db.transaction`)."""
from __future__ import annotations

import json
from typing import Any

from sqlalchemy import String, cast, func, insert, or_, select

from evalcore.dataset.records import Question
from evalcore.errors import RunError
from evalcore.store.db import Bind, reading, transaction
from evalcore.store.runs import get_run
from evalcore.store.tables import Item, RunItem
from evalcore.values import validated

ITEM = Item.__table__
RUN_ITEM = RunItem.__table__


def dataset_item_ids(conn: Bind, dataset_id: int, limit: int | None = None) -> list[int]:
    """Ids of a dataset's items in file order, the first `limit` if given."""
    query = select(ITEM.c.id).where(ITEM.c.dataset_id == dataset_id).order_by(ITEM.c.idx)
    if limit is not None:
        query = query.limit(limit)
    with reading(conn) as tx:
        return list(tx.execute(query).scalars())


def list_items(conn: Bind, dataset_id: int, *, search: str = "", offset: int = 0,
               limit: int = 50) -> tuple[list[dict[str, Any]], int]:
    """One page of a dataset's items in file order, and how many match `search`.

    `search` is a case-insensitive substring of the question, the reference, an option or
    the row's own id column (kept in `meta`), or the item's number ("3" or "Q3").
    Filtering, counting and paging run in the database: a 200k-item dataset is never
    loaded to show 50 rows.
    """
    where = [ITEM.c.dataset_id == dataset_id]
    text = search.strip()
    if text:
        found = [ITEM.c.question.icontains(text, autoescape=True),
                 ITEM.c.reference.icontains(text, autoescape=True),
                 ITEM.c.meta["id"].as_string().icontains(text, autoescape=True)]
        options = cast(ITEM.c.choices, String)  # the JSON text: non-ASCII may be \u-escaped
        found += [options.icontains(form, autoescape=True)
                  for form in dict.fromkeys((text, json.dumps(text)[1:-1]))]
        number = text[1:] if text[:1] in ("q", "Q") else text  # "3" or "Q3", as pages label it
        if number.isdigit():
            found.append(ITEM.c.idx == int(number) - 1)
        where.append(or_(*found))
    columns = (ITEM.c.idx, ITEM.c.question, ITEM.c.reference, ITEM.c.choices, ITEM.c.task_type,
               ITEM.c.language)
    with reading(conn) as tx:
        total = int(tx.execute(select(func.count(ITEM.c.id)).where(*where)).scalar_one())
        rows = tx.execute(select(*columns).where(*where).order_by(ITEM.c.idx)
                            .offset(max(offset, 0)).limit(max(limit, 0))).all()
    return [{"number": r.idx + 1, "question": r.question, "reference": r.reference,
             "choices": r.choices, "task_type": r.task_type, "language": r.language}
            for r in rows], total


def run_item_ids(conn: Bind, run_id: int) -> list[int]:
    """A run's item ids in the order it asks them: its run_item rows, else (runs made
    before them) `config["item_ids"]`, else every item of its dataset."""
    query = (select(RUN_ITEM.c.item_id).where(RUN_ITEM.c.run_id == run_id)
             .order_by(RUN_ITEM.c.position))
    with reading(conn) as tx:
        ids = list(tx.execute(query).scalars())
    if ids:
        return ids
    run = get_run(conn, run_id)
    wanted = run.config.get("item_ids")
    if wanted is not None:
        return list(wanted)
    if run.dataset_id is None:
        raise RunError(f"run {run_id} has neither a dataset nor stored items; "
                       "start it again with a dataset")
    return dataset_item_ids(conn, run.dataset_id)


def run_prompts(conn: Bind, run_id: int) -> dict[int, str]:
    """{item_id: the prompt the run sends} for the items whose prompt is stored."""
    query = select(RUN_ITEM.c.item_id, RUN_ITEM.c.prompt).where(RUN_ITEM.c.run_id == run_id,
                                                          RUN_ITEM.c.prompt.is_not(None))
    with reading(conn) as tx:
        return {item_id: prompt for item_id, prompt in tx.execute(query)}


def questions_by_id(conn: Bind, item_ids: list[int], *, what: str) -> dict[int, Any]:
    """{item_id: Question} in the order of `item_ids`; RunError naming `what` if some
    are no longer in the database."""
    found: dict[int, Any] = {}
    with reading(conn) as tx:
        for start in range(0, len(item_ids), 500):  # stay under bound-parameter limits
            chunk = item_ids[start:start + 500]
            for item in tx.execute(select(ITEM).where(ITEM.c.id.in_(chunk))):
                found[item.id] = item
    missing = [i for i in item_ids if i not in found]
    if missing:
        raise RunError(f"{what}: {len(missing)} item(s) are no longer in the database "
                       f"(first ids {missing[:5]}); was the dataset deleted?")
    return {i: validated(Question, found[i], fail=lambda why, i=i: RunError(  # stored rows
        f"{what}: stored item {i} is not a valid question ({why}); import its dataset again"))
        for i in item_ids}


def run_questions(conn: Bind, run_id: int) -> dict[int, Any]:
    """{item_id: Question} of a run in the order the run asks them (`run_item_ids`)."""
    return questions_by_id(conn, run_item_ids(conn, run_id), what=f"run {run_id}")


def add_run_items(conn: Bind, run_id: int, items: list[tuple[int, str | None]]) -> None:
    """Store a run's questions in order with their rendered prompts ([(item_id, prompt)])."""
    rows = [{"run_id": run_id, "position": n, "item_id": item_id, "prompt": prompt}
            for n, (item_id, prompt) in enumerate(items)]
    with transaction(conn) as tx:
        for start in range(0, len(rows), 1000):
            tx.execute(insert(RUN_ITEM), rows[start:start + 1000])
