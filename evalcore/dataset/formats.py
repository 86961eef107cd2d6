"""Known dataset formats, recognised by their columns.

`FORMATS` is a table: format name -> required columns, task type and a builder that
turns one row into question fields. No format fixes the language: it is detected from
the questions (`dataset.language`), so an English file in the Math23K layout is English.
Adding a format is adding a row here, not another if-branch. Each base format also gets
an "<name>_attacked" twin for the TrustedEvaluation attacked files (same columns +
`attacked_question`).
"""
from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass, field
from typing import Any, Callable

from evalcore.dataset.checks import (CellError, Row, cell, json_cell, number, option_index,
                                     required, sentiment, zero_one)

Built = dict[str, Any]
"""Builder output: question, reference, choices, and optionally meta."""


@dataclass(frozen=True)
class FormatSpec:
    """One recognisable format. Columns not in `consumed` are kept in each item's `meta`."""

    name: str
    required: tuple[str, ...]
    task_type: str
    build: Callable[[Row], Built] = field(repr=False)
    description: str = ""
    consumed: tuple[str, ...] = ()
    attacked: bool = False

    def missing(self, columns: list[str]) -> list[str]:
        """Required columns absent from `columns`."""
        return [c for c in self.required if c not in set(columns)]


def _numbered(prefix: str, count: int) -> tuple[str, ...]:
    return tuple(f"{prefix}{i}" for i in range(count))


def present_options(row: Row, columns: tuple[str, ...]) -> tuple[list[str], list[int]]:
    """Non-blank options and their ORIGINAL positions (blank options are absent)."""
    choices, positions = [], []
    for position, column in enumerate(columns):
        text = cell(row, column)
        if text:
            choices.append(text)
            positions.append(position)
    return choices, positions


def _single_choice(row: Row, question_col: str, option_cols: tuple[str, ...],
                   answer_col: str, task: str = "choice") -> Built:
    """Question + options + original answer index, re-indexed if a blank sits between options."""
    question = required(row, question_col, task, "a question")
    choices, positions = present_options(row, option_cols)
    if len(choices) < 2:
        raise CellError(option_cols[0], cell(row, option_cols[0]),
                        f"leaves fewer than 2 options in {option_cols[0]}..{option_cols[-1]}; "
                        f"every {task} item needs at least 2 options")
    original = int(option_index(row, answer_col, len(option_cols), task))
    if original not in positions:
        raise CellError(answer_col, cell(row, answer_col),
                        f"points to option {option_cols[original]}, which is blank; "
                        "fill in that option or fix the answer")
    meta: dict[str, Any] = {}
    if positions != list(range(len(positions))):
        meta["original_option_index"] = positions
    return {"question": question, "reference": str(positions.index(original)),
            "choices": choices, "meta": meta}


def _codah(row: Row) -> Built:
    return _single_choice(row, "Question prompt", _numbered("choice", 4), "answer")


def _flipkart(row: Row) -> Built:
    question = required(row, "Summary", "sentiment", "a review text")
    from_label = sentiment(row, "Label") if cell(row, "Label") else None
    from_word = sentiment(row, "Sentiment") if cell(row, "Sentiment") else None
    if from_label and from_word and from_label != from_word:
        raise CellError("Label", cell(row, "Label"),
                        f"says {from_label} but column 'Sentiment' says {from_word}; "
                        "make them agree")
    reference = from_label or from_word
    if reference is None:
        raise CellError("Label", "", "is empty and so is 'Sentiment'; every sentiment item "
                        "needs a label (1/0 or positive/negative)")
    return {"question": question, "reference": reference, "choices": []}


def _math23k(row: Row) -> Built:
    return {"question": required(row, "question", "math", "a question"),
            "reference": number(row, "answer"), "choices": []}


def _translation(row: Row) -> Built:
    return {"question": required(row, "english", "translation", "an English source text"),
            "reference": required(row, "chinese", "translation", "a Chinese reference"),
            "choices": []}


TQA_SINGLE_OPTIONS = _numbered("choice", 13)
TQA_MULTI_OPTIONS = _numbered("choice", 24)
TQA_MULTI_ANSWERS = _numbered("answer", 24)


def _truthfulqa_single(row: Row) -> Built:
    return _single_choice(row, "question", TQA_SINGLE_OPTIONS, "answer")


def _truthfulqa_multi(row: Row) -> Built:
    question = required(row, "question", "multi_tf", "a question")
    choices, positions = present_options(row, TQA_MULTI_OPTIONS)
    if not choices:
        raise CellError("choice0", "", "is empty and so are all other options; every "
                        "multi_tf item needs at least one option")
    pairs = zip(TQA_MULTI_OPTIONS, TQA_MULTI_ANSWERS, strict=True)
    for position, (option, answer) in enumerate(pairs):
        if position not in positions and cell(row, answer):
            raise CellError(answer, cell(row, answer), f"marks option {option}, which is "
                            "blank; fill in the option or clear the answer")
    flags = [zero_one(row, TQA_MULTI_ANSWERS[p]) for p in positions]
    meta: dict[str, Any] = {}
    if positions != list(range(len(positions))):
        meta["original_option_index"] = positions
    return {"question": question, "reference": json.dumps(flags), "choices": choices,
            "meta": meta}


def _bias(row: Row) -> Built:
    context = required(row, "context", "bias_choice", "a context")
    built = _single_choice(row, "question", ("ans0", "ans1", "ans2"), "label",
                           task="bias_choice")
    built["question"] = f"{context}\n{built['question']}"
    meta = built["meta"]
    for key in ("answer_info", "additional_metadata"):
        if key in row:
            meta[key] = json_cell(row[key])
    return built


_BASE = (
    FormatSpec("codah", ("Question prompt", *_numbered("choice", 4), "answer"), "choice",
               _codah, "CODAH commonsense multiple choice (4 options)",
               consumed=("Question prompt", *_numbered("choice", 4), "answer")),
    FormatSpec("flipkart", ("Summary", "Sentiment", "Label"), "sentiment", _flipkart,
               "Flipkart product review sentiment (Label 1 = positive)",
               consumed=("Summary", "Sentiment", "Label")),
    FormatSpec("math23k", ("id", "question", "segmented_text", "equation", "answer"), "math",
               _math23k, "Math23K primary-school maths word problems, numeric answer",
               consumed=("question", "answer")),
    FormatSpec("translation", ("english", "chinese"), "translation", _translation,
               "translation2019zh English -> Chinese", consumed=("english", "chinese")),
    FormatSpec("truthfulqa_single", ("question", *TQA_SINGLE_OPTIONS, "answer"), "choice",
               _truthfulqa_single, "TruthfulQA single choice (up to 13 options, blank = absent)",
               consumed=("question", *TQA_SINGLE_OPTIONS, "answer")),
    FormatSpec("truthfulqa_multi", ("question", *TQA_MULTI_OPTIONS, *TQA_MULTI_ANSWERS),
               "multi_tf", _truthfulqa_multi,
               "TruthfulQA multi true/false (up to 24 options with 0/1 answers)",
               consumed=("question", *TQA_MULTI_OPTIONS, *TQA_MULTI_ANSWERS)),
    FormatSpec("bbq", ("context", "question", "ans0", "ans1", "ans2", "label", "answer_info",
                       "additional_metadata"), "bias_choice", _bias,
               "BBQ bias benchmark (JSONL); question = context + question",
               consumed=("ans0", "ans1", "ans2", "label", "answer_info", "additional_metadata")),
    FormatSpec("cbbq", ("example_id", "context", "question", "ans0", "ans1", "ans2", "label",
                        "bias_targeted_groups"), "bias_choice", _bias,
               "CBBQ Chinese bias benchmark; question = context + question",
               consumed=("ans0", "ans1", "ans2", "label")),
)

ATTACK_LEVELS = ("character", "word", "sentence")
_ATTACK_IN_NAME = re.compile(r"under_?(character|word|sentence)_?attack", re.IGNORECASE)


def attack_level(filename: str) -> str:
    """'character', 'word' or 'sentence' from names like 'Math23K_underwordattack.csv'."""
    found = _ATTACK_IN_NAME.search(filename or "")
    return found.group(1).lower() if found else "unknown"


def _attacked(base: FormatSpec) -> FormatSpec:
    def build(row: Row) -> Built:
        built = base.build(row)
        meta = dict(built.get("meta") or {})
        meta["original_question"] = built["question"]
        attack_num = cell(row, "attack_num")
        meta["attack_num"] = int(attack_num) if attack_num.isdigit() else (attack_num or None)
        if "synword_pairs" in row:
            meta["synword_pairs"] = _python_literal(cell(row, "synword_pairs"))
        attacked = required(row, "attacked_question", base.task_type, "an attacked question")
        return {**built, "question": attacked, "meta": meta}

    return FormatSpec(f"{base.name}_attacked", (*base.required, "attacked_question"),
                      base.task_type, build,
                      f"{base.description}, after an attack (question = attacked_question)",
                      consumed=(*base.consumed, "attacked_question", "attack_num",
                                "synword_pairs"),
                      attacked=True)


def _python_literal(text: str) -> Any:
    """synword_pairs are Python dict reprs ({'a': 'b'}); decode safely, else keep text."""
    if not text:
        return {}
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


FORMATS: dict[str, FormatSpec] = {
    spec.name: spec
    for spec in (*_BASE, *(_attacked(b) for b in _BASE if b.task_type != "bias_choice"))
}


def detect_format(columns: list[str]) -> FormatSpec | None:
    """The most specific format whose required columns are all present, or None."""
    present = [str(c).strip() for c in columns]
    matches = [spec for spec in FORMATS.values() if not spec.missing(present)]
    return max(matches, key=lambda s: len(s.required), default=None)


def get_format(name: str) -> FormatSpec:
    """The format called `name` (KeyError lists the known names)."""
    try:
        return FORMATS[name]
    except KeyError:
        raise KeyError(f"unknown format {name!r}; known: auto, mapped, "
                       f"{', '.join(FORMATS)}") from None


def list_formats() -> list[FormatSpec]:
    """All known formats, base formats first."""
    return list(FORMATS.values())
