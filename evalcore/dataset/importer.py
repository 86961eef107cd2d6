"""Parse a file into questions, then store it all or nothing, in bounded memory.

Rows are read as a stream (`readers.stream_table`), turned into questions one at a
time, and inserted in batches of `BATCH_ROWS` inside ONE transaction (dataset row, item
batches, then the dataset's counts), so a bad row or a crash leaves no half-imported
dataset behind, and a 200,000-row CSV never sits in memory whole. On SQLite the import
holds the write lock while it runs (a run's writes wait, up to the busy timeout).
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Optional, Union

import msgspec
from sqlalchemy.exc import IntegrityError

from evalcore.dataset.answer_kind import with_answers
from evalcore.dataset.checks import CellError
from evalcore.dataset.formats import FormatSpec, attack_level, detect_format, get_format
from evalcore.dataset.language import text_language
from evalcore.dataset.mapping import ColumnMapping, build_with, guess_mapping, mapping_from
from evalcore.dataset.prompt_file import with_prompt_hint
from evalcore.dataset.readers import RowStream, Source, hash_stream, opener_of, stream_table
from evalcore.dataset.records import ParsedDataset, Question
from evalcore.error_text import shown_list
from evalcore.errors import DatasetError, DuplicateDatasetError
from evalcore.store import datasets
from evalcore.store.dataset_writes import store_dataset
from evalcore.store.tables import Dataset
from evalcore.values import validated

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine


class DuplicateContentError(DuplicateDatasetError):
    """The same content was imported before, as `existing` (a name for pages to show)."""

    def __init__(self, message: str, existing: str, existing_id: int) -> None:
        super().__init__(message)
        self.existing, self.existing_id = existing, existing_id


class NameTakenError(DatasetError):
    """Another dataset has the name asked for (`name`)."""

    def __init__(self, message: str, name: str) -> None:
        super().__init__(message)
        self.name = name


MappingLike = Union[ColumnMapping, dict[str, Any], None]
BATCH_ROWS = 2000
"""Items per INSERT: large enough to be fast, small enough to keep memory flat."""
Progress = Callable[[int], None]
"""Called with the number of items stored so far, after each batch."""


@dataclass
class _Reading:
    """A file being read: its rows, how to build questions from them, what to record."""

    stream: RowStream
    sha256: str
    format: str
    task_type: str
    build: Callable[[dict[str, str]], dict[str, Any]]
    fixed_language: Optional[str]
    kept: list[str]
    level: Optional[str]
    mapping: Optional[ColumnMapping]
    guessed: bool
    languages: Counter
    undecided: list[int]
    task_reason: str | None = None
    """Why the task type was read off the answers (a guessed mapping only)."""
    """Positions of questions with no language of their own ("3 + 5 = ?"): they take the
    file's language (`language()`), known only once every row is read."""

    def questions(self) -> Iterator[Question]:
        """The rows as questions (languages counted as they go); a bad row raises
        `DatasetError` naming the file, the row, the column and the fix."""
        name = self.stream.name
        for position, (number, row) in enumerate(self.stream.rows):
            try:
                built = self.build(row)
            except CellError as exc:
                raise DatasetError(f"{name} {self.stream.label(number)}, {exc} "
                                   f"({self.stream.note()})") from None
            meta = {c: row[c] for c in self.kept if c in row}
            meta.update(built.get("meta") or {})
            if self.level is not None:
                meta["attack_level"] = self.level
            language = self.fixed_language or text_language(built["question"])
            if language is None:
                self.undecided.append(position)
            else:
                self.languages[language] += 1
            yield validated(Question, {  # cells are outside data (a format may mis-build)
                "idx": position, "question": built["question"],
                "reference": built.get("reference"), "choices": built.get("choices") or [],
                "task_type": self.task_type, "language": language or "en", "meta": meta},
                fail=lambda why: DatasetError(
                    f"{name} {self.stream.label(number)}: the row does not make a question "
                    f"({why}); fix that cell or the mapping ({self.stream.note()})"))

    def meta(self) -> dict[str, Any]:
        """What the dataset row records about the file (complete once rows are read)."""
        meta: dict[str, Any] = {"encoding": self.stream.encoding,
                                "columns": self.stream.columns,
                                "languages": dict(self.languages)}
        if self.stream.repairs:
            meta["repairs"] = self.stream.repairs
        if self.stream.warnings:
            meta["warnings"] = self.stream.warnings
        if self.level is not None:
            meta["attack_level"] = self.level
        if self.mapping is not None:
            meta["mapping"] = msgspec.to_builtins(self.mapping)
            meta["mapping_guessed"] = self.guessed
            if self.task_reason:
                meta["task_guess"] = self.task_reason
        return meta

    def language(self) -> str:
        """The file's language: that of most questions (ties go to Chinese, as in
        `dataset.language`), English when none can tell."""
        if not self.languages:
            return "en"
        return "zh" if self.languages["zh"] >= self.languages["en"] else "en"


def _start_reading(source: Source, filename: str | None, format: str,
                   mapping: MappingLike, sheet: str | None = None) -> _Reading:
    opener, name = opener_of(source, filename)
    try:
        stream = stream_table(source, filename, sheet=sheet)
    except DatasetError as exc:
        raise with_prompt_hint(exc, source, filename) from None
    columns = stream.columns
    given = mapping_from(mapping)
    spec, chosen, reason = _choose(name, columns, format, given,
                                   lambda: stream_table(source, filename, sheet=sheet).rows)
    if spec is not None:  # formats do not fix the language: every item is detected
        build, task_type, fixed_language = spec.build, spec.task_type, None
        kept = [c for c in columns if c not in spec.consumed]
    else:
        assert chosen is not None
        build, task_type = build_with(chosen), chosen.task_type
        fixed_language = None if chosen.language == "auto" else chosen.language
        used = set(chosen.used_columns())
        kept = chosen.meta if chosen.meta is not None else [c for c in columns if c not in used]
    level = attack_level(name) if spec is not None and spec.attacked else None
    return _Reading(stream, hash_stream(opener), spec.name if spec else "mapped", task_type,
                    build, fixed_language, kept, level, chosen, given is None, Counter(), [],
                    reason)


def parse_dataset(source: Source, filename: str | None = None, format: str = "auto",
                  mapping: MappingLike = None, sheet: str | None = None) -> ParsedDataset:
    """Read `source` and turn every row into a `Question`, or raise `DatasetError`.

    `format` is "auto" (recognise by columns), a name from `list_formats()`, or "mapped";
    a `mapping` (model or dict) always wins over detection. Errors name the file, the row
    (spreadsheet numbering for CSV/XLSX, line numbers for JSONL), the column and the fix.
    Holds every question (a preview); `import_dataset` streams instead. `sheet`: the
    sheet of a workbook to read (needed when several hold data).
    """
    reading = _start_reading(source, filename, format, mapping, sheet)
    questions = list(reading.questions())
    if not questions:
        raise _no_rows(reading.stream.name)
    for position in reading.undecided:
        questions[position].language = reading.language()
    return ParsedDataset(format=reading.format, task_type=reading.task_type,
                         language=reading.language(), questions=questions,
                         source_file=reading.stream.name, sha256=reading.sha256,
                         meta=reading.meta())


def _no_rows(name: str) -> DatasetError:
    return DatasetError(f"{name}: no data rows found; the first row must be the column "
                        "names and at least one row of data must follow")


Choice = tuple[Optional[FormatSpec], Optional[ColumnMapping], str | None]
Rows = Callable[[], Iterable[tuple[int, dict[str, str]]]]


def _choose(name: str, columns: list[str], format: str,
            mapping: Optional[ColumnMapping], rows: Rows) -> Choice:
    """The format spec or the mapping to read this file with, and why the task type of a
    guessed mapping was read off the answers (`rows()` opens the file again for them)."""
    if mapping is not None:
        problems = mapping.problems(columns)
        if problems:
            raise DatasetError(f"{name}: the column mapping does not fit: {'; '.join(problems)}")
        return None, mapping, None
    if format == "mapped":
        raise DatasetError(f"{name}: format 'mapped' needs a column mapping "
                           "(question, reference, choices, task_type ...)")
    if format == "auto":
        spec = detect_format(columns)
        if spec is not None:
            return spec, None, None
        guess = guess_mapping(columns)
        if guess.certain:
            guess = with_answers(guess, rows())
            return None, guess.mapping, guess.task_reason
        hint = (f"; a guess to start from: {guess.mapping_hint()}" if guess.mapping else "")
        raise DatasetError(f"{name}: columns {shown_list(columns)} match no known format and "
                           f"cannot be guessed safely: {guess.question_for_user()}; give a "
                           f"column mapping (question, reference, choices, task_type){hint}")
    try:
        spec = get_format(format)
    except KeyError as exc:
        raise DatasetError(f"{name}: {exc.args[0]}") from None
    missing = spec.missing(columns)
    if missing:
        raise DatasetError(f"{name}: format {spec.name!r} needs columns {shown_list(missing)}, "
                           f"which the file lacks (it has {shown_list(columns)}); choose another "
                           "format or a mapping")
    return spec, None, None


def import_dataset(engine: "Engine", source: Source, *, filename: str | None = None,
                   name: str | None = None, format: str = "auto", mapping: MappingLike = None,
                   allow_duplicate: bool = False,
                   on_progress: Optional[Progress] = None,
                   sheet: str | None = None) -> "Dataset":
    """Read `source` (a path, or bytes plus `filename`) and store it in one transaction,
    row batch by row batch (bounded memory whatever the file's size).

    The name defaults to the file stem and must be unique. Importing the same bytes twice in
    the same format raises `DuplicateDatasetError` naming the earlier dataset unless
    `allow_duplicate`. `on_progress(items_stored)` is called after each batch.
    """
    reading = _start_reading(source, filename, format, mapping, sheet)
    header = {"format": reading.format, "task_type": reading.task_type,
              "source_file": reading.stream.name, "sha256": reading.sha256}
    mapped = msgspec.to_builtins(reading.mapping) if reading.mapping is not None else None
    return _store(engine, header, reading.questions(), finish=lambda: (
        reading.language(), reading.meta(), reading.undecided), name=name, mapping=mapped,
        allow_duplicate=allow_duplicate, on_progress=on_progress)


def store_parsed(engine: "Engine", parsed: ParsedDataset, *, name: str | None = None,
                 allow_duplicate: bool = False,
                 on_progress: Optional[Progress] = None) -> "Dataset":
    """Write a parsed dataset and all its items (batched inserts), or nothing at all."""
    header = {"format": parsed.format, "task_type": parsed.task_type,
              "source_file": parsed.source_file, "sha256": parsed.sha256}
    return _store(engine, header, parsed.questions,
                  finish=lambda: (parsed.language, parsed.meta, []), name=name,
                  mapping=parsed.meta.get("mapping"),
                  allow_duplicate=allow_duplicate, on_progress=on_progress)


def _batches(questions: Iterable[Question]) -> Iterator[list[Question]]:
    it = iter(questions)
    while batch := list(islice(it, BATCH_ROWS)):
        yield batch


def _store(engine: "Engine", header: dict[str, str], questions: Iterable[Question], *,
           finish: Callable[[], tuple[str, dict[str, Any], list[int]]], name: str | None,
           allow_duplicate: bool, on_progress: Optional[Progress],
           mapping: dict[str, Any] | None = None) -> "Dataset":
    """The dataset row, its items in batches, then its count, language and meta (known
    once every row is read; items with no language of their own get the file's), all in
    one transaction. `mapping`: how a mapped file's columns were read (the duplicate
    check compares it)."""
    source_file = header["source_file"]
    name = (name or Path(source_file).stem or "").strip()
    if not name:
        raise DatasetError(f"{source_file}: give the dataset a name")

    def check(session: Any) -> None:
        if not allow_duplicate:
            # the same bytes read as another format (MC1 / MC2) are another
            same = datasets.same_content(session, header["sha256"], header["format"], mapping)
            if same is not None:
                raise DuplicateContentError(
                    f"{source_file}: the same content was already imported as dataset "
                    f"'{same.name}' (id {same.id}, {same.created_at:%Y-%m-%d %H:%M}); use that "
                    "one, or import again with allow_duplicate (--allow-duplicate)",
                    same.name, int(same.id))
        clash = datasets.dataset_named(session, name)
        if clash is not None:
            raise _name_taken(name, clash.id, source_file)

    def finished(count: int) -> tuple[str, dict[str, Any], list[int]]:
        if not count:
            raise _no_rows(source_file)
        return finish()

    try:
        dataset = store_dataset(engine, {"name": name, **header}, _batches(questions),
                                check=check, finish=finished, on_progress=on_progress)
    except IntegrityError as exc:
        # Another process may have taken the name between our check and the insert
        # (read afresh: a caller's transaction, if given one, was rolled back).
        taken = datasets.dataset_id_named(engine.engine, name)
        if taken is None:
            raise
        raise _name_taken(name, taken, source_file) from exc
    return dataset


def _name_taken(name: str, existing_id: int | None, source_file: str) -> NameTakenError:
    which = f" (id {existing_id})" if existing_id is not None else ""
    return NameTakenError(f"{source_file}: a dataset named '{name}' already exists{which}; "
                          "choose another name (--name) or delete the old dataset first", name)
