"""Column mappings: how to read a file no built-in format recognises.

A mapping names the question column(s), the reference, the options (several columns, or
one column holding a JSON list or separated text), the task type, the language and the
columns to keep as metadata. `guess_mapping(columns)` guesses one from the column names
(the importer uses it when it is certain, the page prefills its form with it).
"""
from __future__ import annotations

import re
from typing import Any, Literal, Optional, Union

import msgspec

from evalcore.dataset.checks import (CellError, Row, cell, number, option_index, required,
                                     sentiment, split_choices, zero_one_list)
from evalcore.dataset.formats import Built, present_options
from evalcore.dataset.records import TaskType
from evalcore.error_text import SHOWN_CHARS, shown, shown_list
from evalcore.errors import DatasetError
from evalcore.values import ValidationError, problem, validated

NEEDS_REFERENCE = ("choice", "multi_tf", "sentiment", "math", "translation", "bias_choice",
                   "bias_pair")
NEEDS_CHOICES = ("choice", "multi_tf", "bias_choice", "bias_pair")


class ColumnMapping(msgspec.Struct, kw_only=True):
    """Which columns hold what; everything else can be kept in each item's `meta`.

    A mapping from a page, `--mapping` JSON or a stored dataset's meta becomes one through
    `mapping_from` / `evalcore.values.validated`, which check what the constructor does not."""

    question: Union[str, list[str]]
    """One column, or several joined by a line break (e.g. ["context", "question"])."""
    reference: Optional[str] = None
    """The reference answer column (an option index/letter/text for choice tasks)."""
    choices: Union[list[str], str, None] = None
    """A list of option columns, or one column with a JSON list or separated options."""
    choices_separator: Optional[str] = None
    """Separator for a single choices column (e.g. '|'); None = the cell is a JSON list."""
    task_type: TaskType = "open"
    language: Literal["auto", "zh", "en"] = "auto"
    """'auto' detects per item from the question text."""
    meta: Optional[list[str]] = None
    """Columns kept as metadata; None keeps every column not used above."""
    index_base: Literal[0, 1] = 0
    """Whether numeric option references count from 0 or from 1."""

    def question_columns(self) -> list[str]:
        return [self.question] if isinstance(self.question, str) else list(self.question)

    def used_columns(self) -> list[str]:
        """Columns read for question, reference and options."""
        used = self.question_columns() + ([self.reference] if self.reference else [])
        if isinstance(self.choices, str):
            used.append(self.choices)
        elif self.choices:
            used.extend(self.choices)
        return used

    def problems(self, columns: list[str]) -> list[str]:
        """What makes this mapping unusable for a file with `columns` ([] = fine)."""
        found: list[str] = []
        absent = [c for c in self.used_columns() + list(self.meta or []) if c not in columns]
        if absent:
            found.append(f"columns {shown_list(absent)} are not in the file (it has "
                         f"{shown_list(columns)})")
        if not self.question_columns():
            found.append("no question column chosen")
        if self.task_type in NEEDS_REFERENCE and not self.reference:
            found.append(f"task type {self.task_type!r} needs a reference column")
        if self.task_type in NEEDS_CHOICES and not self.choices:
            found.append(f"task type {self.task_type!r} needs option columns (choices)")
        return found


def build_with(mapping: ColumnMapping) -> Any:
    """A row builder (row -> question fields) that applies `mapping`."""
    task = mapping.task_type

    def build(row: Row) -> Built:
        parts = [cell(row, c) for c in mapping.question_columns()]
        if not any(parts):
            required(row, mapping.question_columns()[-1], task, "a question")
        question = "\n".join(p for p in parts if p)
        choices, original_index = _choices(row, mapping)
        meta: dict[str, Any] = {}
        if original_index is not None:
            meta["original_option_index"] = original_index
        reference = _reference(row, mapping, choices, original_index)
        return {"question": question, "reference": reference, "choices": choices, "meta": meta}

    return build


def _choices(row: Row, mapping: ColumnMapping) -> tuple[list[str], Optional[list[int]]]:
    if not mapping.choices:
        return [], None
    if isinstance(mapping.choices, str):
        return split_choices(cell(row, mapping.choices), mapping.choices,
                             mapping.choices_separator), None
    choices, positions = present_options(row, tuple(mapping.choices))
    gaps = positions != list(range(len(positions)))
    return choices, (positions if gaps else None)


def _reference(row: Row, mapping: ColumnMapping, choices: list[str],
               original_index: Optional[list[int]]) -> Optional[str]:
    task, column = mapping.task_type, mapping.reference
    if column is None:
        return None
    if task in ("choice", "bias_choice", "bias_pair"):
        if len(choices) < 2:
            first = mapping.choices if isinstance(mapping.choices, str) else mapping.choices[0]
            raise CellError(first, cell(row, first), f"gives fewer than 2 options; every {task} "
                            "item needs at least 2 options")
        if original_index is None:
            return option_index(row, column, len(choices), task, mapping.index_base, choices)
        width = len(mapping.choices)  # numbers refer to the option columns, blanks included
        texts = [cell(row, c) for c in mapping.choices]
        index = int(option_index(row, column, width, task, mapping.index_base, texts))
        if index not in original_index:
            raise CellError(column, cell(row, column), f"points to option column "
                            f"{shown(mapping.choices[index])}, which is blank; fill it in or fix "
                            "the answer")
        return str(original_index.index(index))
    if task == "multi_tf":
        return zero_one_list(row, column, len(choices))
    if task == "sentiment":
        return sentiment(row, column)
    if task == "math":
        return number(row, column)
    if task == "translation":
        return required(row, column, task, "a reference translation")
    return cell(row, column) or None


_QUESTION_NAMES = ("question", "prompt", "query", "input", "instruction", "problem", "text",
                   "content", "q", "问题", "题目", "题干", "问题描述", "内容", "提问", "问")
_REFERENCE_NAMES = ("answer", "label", "reference", "target", "output", "expected", "gold",
                    "correct", "response", "a", "ans", "标准答案", "参考答案", "正确答案", "答案",
                    "标签", "答")
_CHOICE_LIST_NAMES = ("choices", "options", "candidates", "选项", "候选答案")
_CONTEXT_NAMES = ("context", "passage", "背景", "上下文", "材料")
_NUMBERED = re.compile(r"^(choice|option|opt|ans|选项)[ _]?([0-9]+|[A-Za-z])$", re.IGNORECASE)


def _find_all(columns: list[str], names: tuple[str, ...]) -> list[str]:
    """The columns called one of `names` (whole name, any case), in the order of `names`."""
    by_lower = {c.strip().lower(): c for c in columns}
    return [by_lower[name] for name in names if name in by_lower]


def _option_columns(columns: list[str]) -> list[str]:
    groups: dict[str, list[tuple[str, str]]] = {}
    for column in columns:
        found = _NUMBERED.match(column.strip())
        if found:
            groups.setdefault(found.group(1).lower(), []).append((found.group(2), column))
    letters = [c for c in columns if re.fullmatch(r"[A-Ha-h]", c.strip())]
    if len(letters) >= 2:
        groups["letter"] = [(c.strip().upper(), c) for c in letters]
    if not groups:
        return []
    best = max(groups.values(), key=len)
    if len(best) < 2:
        return []

    def order(item: tuple[str, str]) -> tuple[int, str]:
        key = item[0]
        return (int(key), "") if key.isdigit() else (0, key.upper())

    return [column for _, column in sorted(best, key=order)]


class MappingGuess(msgspec.Struct, kw_only=True):
    """A mapping guessed from column names, and the roles more than one column could play.

    `datasets import` uses the guess without asking only when it is `certain`: a question
    and a reference column were found and no role had two candidates ("question" and
    "prompt", "answer" and "label" ...). Otherwise the candidates go into the error, and
    the page prefills its mapping form with `mapping`.
    """

    mapping: Optional[ColumnMapping] = None
    candidates: dict[str, list[str]] = msgspec.field(default_factory=dict)
    """role (question, reference, context, choices) -> every column that could play it."""
    task_reason: str | None = None
    """Why the task type was read off the answers ("all numbers (20 answers looked
    at)"); None when it comes from the column names alone."""

    def ambiguous(self) -> dict[str, list[str]]:
        """The roles with more than one candidate column."""
        return {role: cols for role, cols in self.candidates.items() if len(cols) > 1}

    @property
    def certain(self) -> bool:
        """Safe to import without asking: question + reference found, nothing ambiguous."""
        return (self.mapping is not None and self.mapping.reference is not None
                and not self.ambiguous())

    def describe(self) -> str:
        """Which columns were used, for messages: "question <- '问题', reference <- '答案'"."""
        if self.mapping is None:
            return "no question column"
        m = self.mapping
        parts = [f"question <- {shown_list(m.question_columns())}"
                 if len(m.question_columns()) > 1 else f"question <- {shown(m.question_columns()[0])}"]
        if m.reference:
            parts.append(f"reference <- {shown(m.reference)}")
        if m.choices:
            parts.append(f"choices <- {shown(m.choices) if isinstance(m.choices, str) else shown_list(m.choices)}")
        why = f": {self.task_reason}" if self.task_reason else ""
        return ", ".join(parts) + f" (task type {m.task_type}{why})"

    def mapping_hint(self) -> str:
        """The guessed mapping as JSON to start from, for messages: cut (with the number
        of columns left out) when a name is long or options are many."""
        if self.mapping is None:
            return ""
        mapping = self.mapping
        given = {f.name: getattr(mapping, f.name) for f in msgspec.structs.fields(mapping)
                 if getattr(mapping, f.name) != f.default}
        text = msgspec.json.encode(given).decode()
        limit = 4 * SHOWN_CHARS
        return text if len(text) <= limit else f"{text[:limit]}... ({len(text):,} characters)"

    def question_for_user(self) -> str:
        """What to decide before this file can be imported (for the error message)."""
        if self.mapping is None:
            return "no column is named like a question (question, prompt, input, 问题, 题目 ...)"
        ambiguous = self.ambiguous()
        if ambiguous:
            return "; ".join(f"the {role} could be any of {shown_list(cols)}"
                             for role, cols in ambiguous.items())
        return ("no column is named like a reference answer (answer, target, reference, "
                "答案 ...); name it in a mapping, or map the file as task type 'open' "
                "without a reference")


def guess_mapping(columns: list[str]) -> MappingGuess:
    """A mapping from column names alone, with the candidates for each role.

    Recognises English and Chinese names (question/prompt/input/q/问题/题目,
    answer/target/reference/label/a/答案/标准答案, choices/options/选项, numbered option
    columns such as choice0.. or A, B, C, D). Names are matched whole, ignoring case.
    """
    columns = [str(c) for c in columns]
    options = _option_columns(columns)
    rest = [c for c in columns if c not in set(options)]
    questions = _find_all(rest, _QUESTION_NAMES)
    if not questions:
        return MappingGuess(candidates={"question": []})
    question = questions[0]
    contexts = _find_all([c for c in rest if c != question], _CONTEXT_NAMES)
    context = contexts[0] if contexts else None
    references = _find_all([c for c in rest if c not in (question, context)], _REFERENCE_NAMES)
    reference = references[0] if references else None
    lists = _find_all([c for c in rest if c not in (question, context, reference)],
                      _CHOICE_LIST_NAMES)
    choices: Union[list[str], str, None] = options or (lists[0] if lists else None)
    task_type: TaskType = "choice" if choices and reference else "open"
    mapping = ColumnMapping(question=[context, question] if context else question,
                            reference=reference, choices=choices, task_type=task_type)
    candidates = {"question": questions, "reference": references, "context": contexts}
    if not options:
        candidates["choices"] = lists
    return MappingGuess(mapping=mapping, candidates=candidates)


def suggest_mapping(columns: list[str]) -> Optional[ColumnMapping]:
    """The best guess at a mapping from column names alone (None if no question column);
    see `guess_mapping` for the names it knows and how sure it is."""
    return guess_mapping(columns).mapping


def mapping_from(value: Union[ColumnMapping, dict[str, Any], None]) -> Optional[ColumnMapping]:
    """Accept a mapping as a `ColumnMapping` or a plain dict (from JSON, the page or the
    CLI), checked; a `DatasetError` names the mapping field that is wrong, or the keys
    that are no field (a misspelt one would otherwise be dropped silently)."""
    if value is None or isinstance(value, ColumnMapping):
        return value
    names = [f.name for f in msgspec.structs.fields(ColumnMapping)]
    unknown = sorted(set(value) - set(names)) if isinstance(value, dict) else []
    if unknown:  # a misspelt key ("choice_base") would silently read the file another way
        raise DatasetError(f"column mapping: unknown key(s) {shown_list(unknown)} (a mapping is "
                           f"a JSON object of {', '.join(names)})")
    try:
        return validated(ColumnMapping, value)
    except ValidationError as exc:
        raise DatasetError(f"column mapping: {problem(exc, ColumnMapping)} (fix that field; "
                           f"a mapping is a JSON object of {', '.join(names)})") from None

