"""Review queues a team shares: create, claim, decide, adjudicate (checked actions) and
the queues' reads."""
from __future__ import annotations

from evalcore.actions.review_queues import (
    create_review_queue,
    review_adjudicate,
    review_next,
    review_skip,
    review_stats,
    review_submit,
    review_undo,
)
from evalcore.store.review_queues import ITEMS, VERDICTS, list_queues

__all__ = ["ITEMS", "VERDICTS", "create_review_queue", "list_queues", "review_adjudicate",
           "review_next", "review_skip", "review_stats", "review_submit", "review_undo"]
