"""Replies judged wrong that contain the reference: a sign the scorer, not the model, failed.

A file read with the wrong task type (numbers read as "open", compared as whole text) turns
"The answer is 90." against "90" into a wrong verdict, and the run reports 0% with nothing
else amiss. When most wrong verdicts are of replies that contain their reference, the
report says so, so the user checks the dataset's task type before trusting the figure.
"""
from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from typing import Any

TEXT_TASKS = ("open", "math", "translation", "sentiment")
"""Task types whose reference is the answer's text (a choice's reference is an index)."""
MIN_REPLIES = 3
"""Fewer wrong replies than this say nothing about the scorer."""


def _normal(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def contains_reference(reply: str, reference: str) -> bool:
    """Whether `reference` appears in `reply` as a whole word or number ("90" is in
    "The answer is 90." but not in "905"); Chinese text, with no spaces, as a substring."""
    ref, text = _normal(reference), _normal(reply)
    if not ref:
        return False
    if not ref.isascii():
        return ref in text
    # ASCII neighbours only: "答案是90。" holds 90 though 是 is a word character
    return re.search(rf"(?<![0-9a-z_.]){re.escape(ref)}(?![0-9a-z_]|\.\d)", text) is not None


def missed_answers(rows: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """Of the answered rounds judged wrong (`correct` False) on text tasks, how many
    replies contain their reference, with the report's warning when that is most of them.

    `rows` carry answer, reference, task_type and correct (the stored verdict rows)."""
    wrong = containing = 0
    example: tuple[str, str] | None = None
    for row in rows:
        answer, reference = row.get("answer"), row.get("reference")
        if (row.get("correct") is not False or not answer or not reference
                or row.get("task_type") not in TEXT_TASKS):
            continue
        wrong += 1
        if contains_reference(str(answer), str(reference)):
            containing += 1
            example = example or (str(answer), str(reference))
    warning = None
    if wrong >= MIN_REPLIES and containing * 2 > wrong and example is not None:
        reply = example[0] if len(example[0]) <= 60 else example[0][:57] + "..."
        warning = (f"{containing} of {wrong} replies judged wrong contain their reference "
                   f"answer (e.g. {reply!r} for {example[1]!r}): the scorer may not read "
                   "these replies; check the dataset's task type (numbers: math) or use a "
                   "judge model before trusting the accuracy")
    return {"judged_wrong": wrong, "containing_reference": containing, "warning": warning}
