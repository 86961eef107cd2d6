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


class MissedTally:
    """`missed_answers` one verdict row at a time: a run's million rows are counted, not
    kept (`add` each, then `result`)."""

    def __init__(self) -> None:
        self.wrong = self.containing = 0
        self.example: tuple[str, str] | None = None

    def add(self, row: dict[str, Any]) -> None:
        answer, reference = row.get("answer"), row.get("reference")
        if (row.get("correct") is not False or not answer or not reference
                or row.get("task_type") not in TEXT_TASKS):
            return
        self.wrong += 1
        if contains_reference(str(answer), str(reference)):
            self.containing += 1
            self.example = self.example or (str(answer), str(reference))

    def result(self) -> dict[str, Any]:
        warning = None
        if (self.wrong >= MIN_REPLIES and self.containing * 2 > self.wrong
                and self.example is not None):
            reply = self.example[0]
            reply = reply if len(reply) <= 60 else reply[:57] + "..."
            warning = (f"{self.containing} of {self.wrong} replies judged wrong contain their "
                       f"reference answer (e.g. {reply!r} for {self.example[1]!r}): the scorer "
                       "may not read these replies; check the dataset's task type (numbers: "
                       "math) or use a judge model before trusting the accuracy")
        return {"judged_wrong": self.wrong, "containing_reference": self.containing,
                "warning": warning}


def missed_answers(rows: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """Of the answered rounds judged wrong (`correct` False) on text tasks, how many
    replies contain their reference, with the report's warning when that is most of them.

    `rows` carry answer, reference, task_type and correct (the stored verdict rows)."""
    tally = MissedTally()
    for row in rows:
        tally.add(row)
    return tally.result()
