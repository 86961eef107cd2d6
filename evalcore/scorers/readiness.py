"""Whether a run's items can be judged the way it asks, checked before any model call.

A rules scorer compares a reply with the item's reference answer; an item without one
gets no verdict, and a whole dataset imported without a reference column would report
every question "failed" (mean success 0.000). The runner calls `require_references` when
it creates a run, so such a run is refused with a message that says what to do.
"""
from __future__ import annotations

from typing import Iterable

from evalcore.dataset.records import Question
from evalcore.errors import RunError
from evalcore.kinds import find_kind

LISTED = 5


def missing_references(questions: Iterable[Question]) -> list[int]:
    """Positions (item idx) of the questions with no usable reference answer."""
    return [q.idx for q in questions
            if q.reference is None or not str(q.reference).strip()
            or str(q.reference).strip().lower() in ("nan", "none", "null")]


def require_references(questions: Iterable[Question], *, dataset: str, judge: str,
                       kind: str) -> None:
    """Refuse a rules-judged run on items without a reference answer.

    Raises:
        RunError: naming the dataset, how many items lack a reference (and the first
            few), and the two ways out: a judge model, or a re-import with the column.
    """
    scored = find_kind(kind)  # kinds whose figures are verdicts against a reference
    if judge != "rules" or scored is None or not scored.needs_references:
        return
    questions = list(questions)
    missing = missing_references(questions)
    if not missing:
        return
    first = ", ".join(str(i) for i in missing[:LISTED])
    more = "" if len(missing) <= LISTED else f" and {len(missing) - LISTED} more"
    raise RunError(
        f"dataset {dataset!r}: {len(missing)} of {len(questions)} items have no reference "
        f"answer (items {first}{more}), so the rules judge cannot score them and every such "
        "question would read as failed. Use a judge model (--judge MODEL, or pick one on "
        "the page), or import the dataset again with its reference column mapped.")
