"""Recognise a few-shot prompt file handed in as a dataset, and say so.

TrustedEvaluation ships `FSamples.json` beside its question files: a JSON object of
dataset name -> few-shot prompt text. Imported as a dataset it fails with "expected a JSON
list of objects", which leaves a user wondering what is wrong with the file; it is not a
question file at all, and evalcore's few-shot prompts are built in.
"""
from __future__ import annotations

import json
from pathlib import Path

from evalcore.dataset.readers import Source, opener_of
from evalcore.errors import DatasetError

MAX_BYTES = 1_000_000
"""Prompt files are a few kilobytes; anything larger is not looked into."""


def is_prompt_file(source: Source, filename: str | None = None) -> bool:
    """Whether `source` is a JSON object whose every value is text (name -> prompt)."""
    try:
        opener, name = opener_of(source, filename)
    except DatasetError:
        return False
    if Path(name).suffix.lower() != ".json":
        return False
    with opener() as stream:
        data = stream.read(MAX_BYTES + 1)
    if len(data) > MAX_BYTES:
        return False
    try:
        value = json.loads(data.decode("utf-8-sig"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return False
    return (isinstance(value, dict) and bool(value)
            and all(isinstance(v, str) for v in value.values()))


def with_prompt_hint(exc: DatasetError, source: Source,
                     filename: str | None = None) -> DatasetError:
    """`exc`, or a clearer error when the file is a few-shot prompt file."""
    if not is_prompt_file(source, filename):
        return exc
    _, name = opener_of(source, filename)
    return DatasetError(f"{name}: this is a few-shot prompt file (a JSON object of dataset "
                        "name -> prompt text, like TrustedEvaluation's FSamples.json), not a "
                        "question file; evalcore's few-shot prompts are built in: choose the "
                        "few-shot prompt for a stability run (--prompt few)")
