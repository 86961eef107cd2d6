"""Accuracy over a set of scores, with unreadable replies counted in the open.

Three kinds of score are kept apart, because mixing them hides what went wrong:

- judged: `correct` is True or False;
- invalid: judged False because no single answer could be read from the reply (no number,
  no option, both labels, two options: `rules.is_invalid`). By default they stay in the
  denominator as wrong, as the method scores unreadable answers 0; `invalid="exclude"`
  drops them to measure accuracy on readable replies only. Either way `invalid` is reported;
- unjudged: `correct is None` (no reference, reference unreadable). Never in the
  denominator; reported as `unjudged`.

Standard library only (plus the scorer records), so the CLI can import it at start-up.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Literal, Optional

from evalcore.metrics.stability import MetricInputError
from evalcore.scorers.base import Score
from evalcore.scorers.rules import is_invalid

InvalidPolicy = Literal["wrong", "exclude"]


@dataclass(frozen=True)
class AccuracySummary:
    """Counts behind an accuracy, and the accuracy itself (None when nothing was judged)."""

    accuracy: Optional[float]
    correct: int
    counted: int
    """The denominator: judged scores, minus invalid ones under `invalid="exclude"`."""
    invalid: int
    unjudged: int
    total: int
    why_none: str = ""
    """Why `accuracy` is None, for the report; empty when it is a number."""


def summarize_accuracy(scores: Iterable[Score], *,
                       invalid: InvalidPolicy = "wrong") -> AccuracySummary:
    """Count correct / invalid / unjudged scores and compute the accuracy.

    Never raises on empty input: the report shows `why_none` instead.
    """
    if invalid not in ("wrong", "exclude"):
        raise ValueError(f"invalid={invalid!r}; use 'wrong' or 'exclude'")
    scores = list(scores)
    judged = [s for s in scores if s.correct is not None]
    n_invalid = sum(1 for s in judged if is_invalid(s))
    counted = len(judged) - (n_invalid if invalid == "exclude" else 0)
    correct = sum(1 for s in judged if s.correct)
    why = ""
    if not scores:
        why = "no scores: nothing was answered in this selection"
    elif not judged:
        why = f"none of the {len(scores)} scores has a verdict (no reference to compare with)"
    elif counted == 0:
        why = f"all {len(judged)} judged replies are invalid and invalid='exclude' drops them"
    return AccuracySummary(accuracy=correct / counted if counted else None, correct=correct,
                           counted=counted, invalid=n_invalid,
                           unjudged=len(scores) - len(judged), total=len(scores), why_none=why)


def accuracy(scores: Iterable[Score], *, invalid: InvalidPolicy = "wrong") -> float:
    """Share of correct scores among the counted ones (see the module docstring).

    Raises:
        MetricInputError: nothing to count (empty input, no verdicts, or all invalid and
            excluded); the message says which.
    """
    summary = summarize_accuracy(scores, invalid=invalid)
    if summary.accuracy is None:
        raise MetricInputError(f"accuracy is undefined: {summary.why_none}")
    return summary.accuracy
