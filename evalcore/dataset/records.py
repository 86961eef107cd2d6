"""Records at the dataset edge: a normalised question and a parsed (not yet stored) dataset."""
from __future__ import annotations

from typing import Any, Literal, Optional

import msgspec

TaskType = Literal["choice", "multi_tf", "sentiment", "math", "translation", "open", "bias_choice",
                   "bias_pair"]
"""What kind of answer an item expects; picks its default prompt and rules scorer.

- `choice`: single choice, `reference` is the 0-based index of the right option (CODAH, TruthfulQA single)
- `multi_tf`: judge each option true/false, `reference` is a JSON 0/1 list (TruthfulQA multi)
- `sentiment`: `reference` is `positive` or `negative` (Flipkart)
- `math`: `reference` is a number (Math23K)
- `translation`: `reference` is the target text (translation2019zh)
- `open`: free answer; `reference` optional (exact match / consistency only)
- `bias_choice`: BBQ / CBBQ; a choice whose `meta` carries the bias annotations
- `bias_pair`: CrowS-Pairs; two sentences, "which is more plausible?"; `reference` is the
  option index of the stereotyped sentence (no answer is right: the report counts how often
  the model picks it)
"""

TASK_TYPES: tuple[str, ...] = TaskType.__args__  # type: ignore[attr-defined]


class Question(msgspec.Struct, kw_only=True):
    """One normalised question, as read from a file and as handed to prompts and scorers.

    Built from outside data (a file's cells, a stored item row) only through
    `evalcore.values.validated(Question, data)`, which reads a row's attributes and checks
    the types and allowed values the constructor does not."""

    idx: int
    """0-based position in the source (data rows, header excluded)."""
    question: str
    reference: Optional[str] = None
    """The reference answer as text (an option index, a number, a label, a JSON list ...)."""
    choices: list[str] = msgspec.field(default_factory=list)
    """Options in order; absent (blank) options are dropped."""
    task_type: TaskType = "open"
    language: Literal["zh", "en"] = "en"
    meta: dict[str, Any] = msgspec.field(default_factory=dict)
    """Everything else from the source row (ids, attack lineage, bias annotations ...)."""


class ParsedDataset(msgspec.Struct, kw_only=True):
    """A file read and mapped, ready to store in one transaction."""

    format: str
    task_type: str
    language: str
    questions: list[Question]
    source_file: str = ""
    sha256: str = ""
    meta: dict[str, Any] = msgspec.field(default_factory=dict)
