"""The scorer contract: every scorer turns (answer, question) into a `Score`."""
from __future__ import annotations

from typing import Callable, Optional

import msgspec

from evalcore.dataset.records import Question


class Score(msgspec.Struct, kw_only=True):
    """A judgement of one answer.

    `value` is in [0, 1] (1 = fully right; graded scorers such as ROUGE give fractions);
    `correct` is the 0/1 verdict the stability method counts, None when the answer
    could not be judged (e.g. no reference); `reason` says why, for the drill-down.
    Built per answer by trusted scorer code, so the plain (unchecked) constructor.
    """

    value: float
    correct: Optional[bool]
    reason: str
    extracted: Optional[str] = None
    """What the scorer read from the answer (a number, an option index ...), if anything."""


Scorer = Callable[[str, Question], Score]
"""A rules scorer: pure, fast, no I/O (embedding scorers load their model once, lazily)."""
