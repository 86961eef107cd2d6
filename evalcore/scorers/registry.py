"""Which scorer judges which task: a name -> scorer table and a task type -> name table.

Adding a scorer is one row in `SCORERS`; changing a task's default is one row in
`DEFAULT_SCORER`. No if-chains, so the pages can list the names and the runner can ask for
the default without knowing any scorer.
"""
from __future__ import annotations

from typing import Optional

from evalcore.dataset.records import TASK_TYPES, Question
from evalcore.errors import EvalcoreError
from evalcore.scorers import crows, rules, rules_choice, rules_labels, text
from evalcore.scorers.base import Score, Scorer

RULES: dict[str, Scorer] = {
    "numeric": rules.numeric,
    "choice": rules_choice.choice,
    "bias_choice": rules_choice.bias_choice,
    "sentiment": rules_labels.sentiment,
    "multi_tf": rules_labels.multi_tf,
    "exact_match": rules_labels.exact_match,
}
"""Rules scorers by name (SCORERS adds the text-similarity ones)."""

SCORERS: dict[str, Scorer] = {**RULES, "translation": text.translation,
                              "bias_pair": crows.bias_pair}
"""Every rules / text scorer by name."""

DEFAULT_SCORER: dict[str, str] = {
    "choice": "choice",
    "multi_tf": "multi_tf",
    "sentiment": "sentiment",
    "math": "numeric",
    "translation": "translation",
    "open": "exact_match",
    "bias_choice": "bias_choice",
    "bias_pair": "bias_pair",
}
"""The scorer a task type gets unless the user picks another."""


def scorer_names() -> list[str]:
    """Names accepted by `get_scorer` (for the CLI's choices and the pages' select boxes)."""
    return sorted(SCORERS)


def get_scorer(name: str) -> Scorer:
    """The scorer called `name`."""
    try:
        return SCORERS[name]
    except KeyError:
        raise EvalcoreError(
            f"unknown scorer {name!r}; use one of: {', '.join(scorer_names())}") from None


def rules_scorer(task_type: str) -> Scorer:
    """The default scorer for a task type (see `DEFAULT_SCORER`)."""
    try:
        return SCORERS[DEFAULT_SCORER[task_type]]
    except KeyError:
        raise EvalcoreError(
            f"no scorer for task type {task_type!r}; task types: {', '.join(TASK_TYPES)}"
        ) from None


def score_answer(answer: str, question: Question, scorer: Optional[str] = None) -> Score:
    """Judge one reply with `scorer` (a name) or the question's task-type default."""
    fn = get_scorer(scorer) if scorer else rules_scorer(question.task_type)
    return fn(answer, question)
