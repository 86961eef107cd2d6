"""Guess a file's task type from its reference answers, not only from column names.

A `question,target` file whose targets are all numbers is a math file: read as "open", its
replies are compared as whole strings and "The answer is 90." never equals "90", so the
run scores 0% with no hint why. Looking at the answers themselves (a bounded sample of
rows) picks the scorer that can read them, and the guess says what it saw, so the preview
and the CLI can show it.
"""
from __future__ import annotations

import re
from collections.abc import Iterable
from itertools import islice

import msgspec

from evalcore.dataset.checks import SENTIMENT_WORDS, CellError, number
from evalcore.dataset.mapping import MappingGuess, guess_mapping
from evalcore.dataset.readers import Source, stream_table
from evalcore.dataset.records import TaskType

SAMPLE_ROWS = 200
"""Rows looked at: enough to see a pattern, few enough to stay instant on any file."""

_LETTER = re.compile(r"^\(?[A-Ha-h][.)]?$")


class TaskGuess(msgspec.Struct, frozen=True, kw_only=True):
    """A task type read off the answers, and why (shown to the user as is)."""

    task_type: TaskType
    reason: str
    """e.g. "all numbers (20 answers looked at)"."""


def _is_number(value: str) -> bool:
    try:
        number({"v": value}, "v")
    except CellError:
        return False
    return True


def guess_task(answers: list[str], has_choices: bool) -> TaskGuess | None:
    """The task the reference `answers` point to, or None when they show no single pattern.

    Numbers -> math; sentiment labels (positive/negative, 正面/负面; not only 0/1) ->
    sentiment; option letters or numbers with option columns -> choice. Option letters
    without option columns cannot be scored as a choice: that is said in the reason of an
    "open" guess so the user maps the option columns.
    """
    seen = [a.strip() for a in answers if a and a.strip()]
    if not seen:
        return None
    count = f"{len(seen)} answer{'s' if len(seen) > 1 else ''} looked at"
    if has_choices:
        if all(_LETTER.match(a) or a.isdigit() for a in seen):
            return TaskGuess(task_type="choice", reason=f"all name an option ({count})")
        return None
    if all(_is_number(a) for a in seen):
        if all(a in ("0", "1") for a in seen) and len(seen) > 1:
            return None  # 0/1 may be labels as well as numbers: nothing safe to say
        return TaskGuess(task_type="math", reason=f"all numbers ({count})")
    words = [a.lower() for a in seen]
    if all(w in SENTIMENT_WORDS for w in words) and not all(_is_number(w) for w in words):
        return TaskGuess(task_type="sentiment", reason=f"all sentiment labels ({count})")
    if all(_LETTER.match(a) for a in seen):
        return TaskGuess(task_type="open", reason=(
            f"all option letters ({count}) but no option columns were found; choose the "
            "option columns and task type 'choice', or replies are compared as whole text"))
    return None


def with_answers(guess: MappingGuess, rows: Iterable[tuple[int, dict[str, str]]]
                 ) -> MappingGuess:
    """`guess` with its task type read off the reference cells of the first
    `SAMPLE_ROWS` `rows` (a stream is read no further); unchanged when they say nothing."""
    mapping = guess.mapping
    if mapping is None or mapping.reference is None:
        return guess
    answers = [str(row.get(mapping.reference, "") or "") for _, row in islice(rows, SAMPLE_ROWS)]
    found = guess_task(answers, has_choices=bool(mapping.choices))
    if found is None:
        return guess
    return msgspec.structs.replace(
        guess, mapping=msgspec.structs.replace(mapping, task_type=found.task_type),
        task_reason=found.reason)


def guess_file_mapping(source: Source, filename: str | None = None,
                       sheet: str | None = None) -> MappingGuess:
    """`guess_mapping` of the file's column names (a workbook's `sheet`), its task type
    read off its answers."""
    stream = stream_table(source, filename, sheet=sheet)
    return with_answers(guess_mapping(stream.columns), stream.rows)
