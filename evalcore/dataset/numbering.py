"""The one number a user sees for a question: "Q1" for the first question of its dataset.

Pages, figures, reports and the CLI all label a question with `question_label(idx)`,
where `idx` is the item's 0-based position in its source file (`Item.idx`). Database ids
(`Item.id`, attack item ids) keep counting across datasets and mean nothing to a reader;
a 0-based index reads as "question 0". Exports keep their `item_idx` / `item_id` columns
(machine-readable, documented), only the text people read uses this label.
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Optional

from evalcore.store.datasets import item_positions as positions

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine

PREFIX = "Q"


def question_label(idx: Optional[int]) -> str:
    """'Q1' for the item at 0-based position 0 of its dataset; '?' when unknown."""
    if idx is None:
        return "?"
    return f"{PREFIX}{int(idx) + 1}"


def item_positions(engine: "Engine", item_ids: Iterable[int]) -> dict[int, int]:
    """{item id: 0-based position in its dataset} of the given database item ids."""
    return positions(engine, item_ids)
