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
import hashlib
import json
import random
import re
from dataclasses import dataclass, field
from typing import Any, Callable

from evalcore.dataset.checks import (CellError, Row, cell, json_cell, number, option_index,
                                     required, sentiment, zero_one)
from evalcore.dataset.inline_options import split_marked_options
from evalcore.dataset.language import detect_language
from evalcore.error_text import shown

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


SHUFFLE_SEED = 12
"""Formats whose files list the right answer first (TruthfulQA's mc_task.json) or name
the stereotyped sentence by its column (CrowS-Pairs) show their options in a fixed random
order: seeded with this number and the item's own text, so the order does not depend on
the row's position and re-importing gives the same order. The file position of each
shown option is kept in `meta["original_option_index"]`."""


def shuffled_positions(key: str, n: int, seed: int = SHUFFLE_SEED) -> list[int]:
    """A fixed random order of `n` options for the item identified by `key`."""
    digest = hashlib.sha256(f"{seed}\x00{key}".encode("utf-8")).digest()
    order = list(range(n))
    random.Random(int.from_bytes(digest[:8], "big")).shuffle(order)
    return order


def _targets(row: Row, column: str, task: str) -> dict[str, int]:
    """TruthfulQA's `mc1_targets` / `mc2_targets`: a JSON map answer -> 0/1."""
    value = json_cell(cell(row, column))
    if not isinstance(value, dict) or not value or any(v not in (0, 1) for v in value.values()):
        raise CellError(column, cell(row, column)[:80], f"is not a map of answers to 0/1; every "
                        f"{task} item needs e.g. {{\"right answer\": 1, \"wrong answer\": 0}}")
    return {str(k).strip(): int(v) for k, v in value.items()}


def _shuffled(question: str, targets: dict[str, int]) -> tuple[list[str], list[int], dict]:
    answers = list(targets)
    order = shuffled_positions(question, len(answers))
    return ([answers[i] for i in order], [targets[answers[i]] for i in order],
            {"original_option_index": order})


def _truthfulqa_mc1(row: Row) -> Built:
    question = required(row, "question", "choice", "a question")
    targets = _targets(row, "mc1_targets", "choice")
    if len(targets) < 2 or sum(targets.values()) != 1:
        raise CellError("mc1_targets", cell(row, "mc1_targets")[:80], "must hold at least 2 "
                        f"answers with exactly one marked 1 (it marks {sum(targets.values())}); "
                        "for several true answers import with --format truthfulqa_mc2")
    choices, flags, meta = _shuffled(question, targets)
    return {"question": question, "reference": str(flags.index(1)), "choices": choices,
            "meta": meta}


def _truthfulqa_mc2(row: Row) -> Built:
    question = required(row, "question", "multi_tf", "a question")
    choices, flags, meta = _shuffled(question, _targets(row, "mc2_targets", "multi_tf"))
    return {"question": question, "reference": json.dumps(flags), "choices": choices,
            "meta": meta}


CROWS_QUESTION = {"en": "Which of these two sentences is more plausible?",
                  "zh": "下面两个句子中，哪一个更合理？"}
"""The question of every CrowS-Pairs item, in the language of its sentences."""


def _crows_pairs(row: Row) -> Built:
    """Two sentences in a seeded order; the reference is the stereotyped one (`sent_more`)."""
    more = required(row, "sent_more", "bias_pair", "the more stereotyping sentence")
    less = required(row, "sent_less", "bias_pair", "the less stereotyping sentence")
    direction = cell(row, "stereo_antistereo").lower()
    if direction not in ("stereo", "antistereo"):
        raise CellError("stereo_antistereo", direction, "is not 'stereo' or 'antistereo'")
    order = shuffled_positions(more + "\x00" + less, 2)
    shown = [("sent_more", more), ("sent_less", less)]
    meta = {"bias_type": required(row, "bias_type", "bias_pair", "a bias type"),
            "stereo_antistereo": direction,
            "option_order": [shown[i][0] for i in order],
            "stereotyped_option": order.index(0)}
    return {"question": CROWS_QUESTION[detect_language(more + " " + less)],
            "reference": str(order.index(0)), "choices": [shown[i][1] for i in order],
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
    FormatSpec("truthfulqa_mc1", ("question", "mc1_targets"), "choice", _truthfulqa_mc1,
               "TruthfulQA's own mc_task.json as single choice (MC1: one true answer); "
               "options in a seeded order", consumed=("question", "mc1_targets", "mc2_targets")),
    FormatSpec("truthfulqa_mc2", ("question", "mc2_targets"), "multi_tf", _truthfulqa_mc2,
               "TruthfulQA's own mc_task.json as multi true/false (MC2: every answer 0/1); "
               "options in a seeded order", consumed=("question", "mc1_targets", "mc2_targets")),
    FormatSpec("crows_pairs", ("sent_more", "sent_less", "stereo_antistereo", "bias_type"),
               "bias_pair", _crows_pairs,
               "CrowS-Pairs: which of two sentences is more plausible (order seeded per item)",
               consumed=("sent_more", "sent_less", "stereo_antistereo", "bias_type")),
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
        choices = list(built.get("choices") or [])
        split = split_marked_options(attacked, meta.get("original_option_index")
                                     or range(len(choices))) if choices else None
        if split is None:
            return {**built, "question": attacked, "meta": meta}
        meta["original_choices"] = choices  # the options went into the attacked question
        return {**built, "question": split[0], "choices": split[1], "meta": meta}

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


_NOT_ATTACKED = ("bias_choice", "bias_pair")

FORMATS: dict[str, FormatSpec] = {
    spec.name: spec
    for spec in (*_BASE, *(_attacked(b) for b in _BASE if b.task_type not in _NOT_ATTACKED))
}


def detect_format(columns: list[str]) -> FormatSpec | None:
    """The most specific format whose required columns are all present, or None.

    Ties go to the format listed first: TruthfulQA's mc_task.json (both target maps)
    imports as `truthfulqa_mc1`; `--format truthfulqa_mc2` reads its MC2 answers instead.
    """
    present = [str(c).strip() for c in columns]
    matches = [spec for spec in FORMATS.values() if not spec.missing(present)]
    return max(matches, key=lambda s: len(s.required), default=None)


def get_format(name: str) -> FormatSpec:
    """The format called `name` (KeyError lists the known names)."""
    try:
        return FORMATS[name]
    except KeyError:
        raise KeyError(f"unknown format {shown(name)}; known: auto, mapped, "
                       f"{', '.join(FORMATS)}") from None


def list_formats() -> list[FormatSpec]:
    """All known formats, base formats first."""
    return list(FORMATS.values())
