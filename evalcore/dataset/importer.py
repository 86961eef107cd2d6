"""Parse a file into questions, then store it all or nothing.

Parsing checks every row before the database is touched; storing happens in ONE
transaction (dataset row + bulk insert of items), so a bad row or a crash leaves no
half-imported dataset behind.
"""
from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Optional, Union

from evalcore.dataset.checks import CellError
from evalcore.dataset.formats import FormatSpec, attack_level, detect_format, get_format
from evalcore.dataset.language import majority_language, text_language
from evalcore.dataset.mapping import ColumnMapping, build_with, guess_mapping, mapping_from
from evalcore.dataset.readers import Source, load_source, read_table, row_label, row_note, sha256_of
from evalcore.dataset.records import ParsedDataset, Question
from evalcore.errors import DatasetError, DuplicateDatasetError

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine

    from evalcore.store.tables import Dataset

MappingLike = Union[ColumnMapping, dict[str, Any], None]


def parse_dataset(source: Source, filename: str | None = None, format: str = "auto",
                  mapping: MappingLike = None) -> ParsedDataset:
    """Read `source` and turn every row into a `Question`, or raise `DatasetError`.

    `format` is "auto" (recognise by columns), a name from `list_formats()`, or "mapped";
    a `mapping` (model or dict) always wins over detection. With "auto", a file no format
    recognises is read with the mapping its column names give when that guess is certain
    (`question` + `answer`, `问题` + `答案` ...); `meta["mapping_guessed"]` then says so.
    Errors name the file, the row (spreadsheet numbering for CSV/XLSX, line numbers for
    JSONL), the column and the fix. Languages come from `dataset.language`.
    """
    data, name = load_source(source, filename)
    df = read_table(data, name)
    columns = [str(c) for c in df.columns]
    given = mapping_from(mapping)
    spec, chosen = _choose(name, columns, format, given)

    build: Callable[[dict[str, str]], dict[str, Any]]
    if spec is not None:
        build, task_type, fixed_language = spec.build, spec.task_type, None
        kept = [c for c in columns if c not in spec.consumed]
    else:
        assert chosen is not None
        build, task_type = build_with(chosen), chosen.task_type
        fixed_language = None if chosen.language == "auto" else chosen.language
        used = set(chosen.used_columns())
        kept = chosen.meta if chosen.meta is not None else [c for c in columns if c not in used]
    level = attack_level(name) if spec is not None and spec.attacked else None

    questions, undecided = [], []
    for position, row in enumerate(df.to_dict("records")):
        try:
            built = build(row)
        except CellError as exc:
            raise DatasetError(f"{name} {row_label(df, position)}, {exc} "
                               f"({row_note(df)})") from None
        meta = {c: row[c] for c in kept if c in row}
        meta.update(built.get("meta") or {})
        if level is not None:
            meta["attack_level"] = level
        language = fixed_language or text_language(built["question"])
        if language is None:
            undecided.append(len(questions))
        questions.append(Question(
            idx=position, question=built["question"], reference=built.get("reference"),
            choices=built.get("choices") or [], task_type=task_type,
            language=language or "en", meta=meta))
    dataset_language = fixed_language or majority_language(q.question for q in questions)
    for i in undecided:  # "3 + 5 = ?" has no language of its own: it takes the file's
        questions[i].language = dataset_language

    languages = Counter(q.language for q in questions)
    meta: dict[str, Any] = {"encoding": df.attrs.get("encoding"), "columns": columns,
                            "languages": dict(languages)}
    if df.attrs.get("repairs"):
        meta["repairs"] = df.attrs["repairs"]
    if level is not None:
        meta["attack_level"] = level
    if chosen is not None:
        meta["mapping"] = chosen.model_dump()
        meta["mapping_guessed"] = given is None
    return ParsedDataset(format=spec.name if spec else "mapped", task_type=task_type,
                         language=dataset_language, questions=questions,
                         source_file=name, sha256=sha256_of(data), meta=meta)


Choice = tuple[Optional[FormatSpec], Optional[ColumnMapping]]


def _choose(name: str, columns: list[str], format: str,
            mapping: Optional[ColumnMapping]) -> Choice:
    """The format spec or the mapping to read this file with."""
    if mapping is not None:
        problems = mapping.problems(columns)
        if problems:
            raise DatasetError(f"{name}: the column mapping does not fit: {'; '.join(problems)}")
        return None, mapping
    if format == "mapped":
        raise DatasetError(f"{name}: format 'mapped' needs a column mapping "
                           "(question, reference, choices, task_type ...)")
    if format == "auto":
        spec = detect_format(columns)
        if spec is not None:
            return spec, None
        guess = guess_mapping(columns)
        if guess.certain:
            return None, guess.mapping
        hint = (f"; a guess to start from: "
                f"{guess.mapping.model_dump_json(exclude_defaults=True)}" if guess.mapping else "")
        raise DatasetError(f"{name}: columns {columns} match no known format and cannot be "
                           f"guessed safely: {guess.question_for_user()}; give a column mapping "
                           f"(question, reference, choices, task_type){hint}")
    try:
        spec = get_format(format)
    except KeyError as exc:
        raise DatasetError(f"{name}: {exc.args[0]}") from None
    missing = spec.missing(columns)
    if missing:
        raise DatasetError(f"{name}: format {spec.name!r} needs columns {missing}, which the "
                           f"file lacks (it has {columns}); choose another format or a mapping")
    return spec, None


def import_dataset(engine: "Engine", source: Source, *, filename: str | None = None,
                   name: str | None = None, format: str = "auto", mapping: MappingLike = None,
                   allow_duplicate: bool = False) -> "Dataset":
    """Parse `source` (a path, or bytes plus `filename`) and store it in one transaction.

    The name defaults to the file stem and must be unique. Importing the same bytes twice in
    the same format raises `DuplicateDatasetError` naming the earlier dataset unless
    `allow_duplicate`.
    """
    parsed = parse_dataset(source, filename, format=format, mapping=mapping)
    return store_parsed(engine, parsed, name=name, allow_duplicate=allow_duplicate)


def store_parsed(engine: "Engine", parsed: ParsedDataset, *, name: str | None = None,
                 allow_duplicate: bool = False) -> "Dataset":
    """Write a parsed dataset and all its items (bulk insert), or nothing at all."""
    from sqlalchemy import insert
    from sqlalchemy.exc import IntegrityError
    from sqlmodel import select

    from evalcore.store.db import session_scope
    from evalcore.store.tables import Dataset, Item

    name = (name or Path(parsed.source_file).stem or "").strip()
    if not name:
        raise DatasetError(f"{parsed.source_file}: give the dataset a name")
    try:
        with session_scope(engine) as session:
            if not allow_duplicate:
                same = session.exec(select(Dataset).where(  # the same bytes read as another
                    Dataset.sha256 == parsed.sha256,    # format (MC1 / MC2) are another dataset
                    Dataset.format == parsed.format)).first()
                if same is not None:
                    raise DuplicateDatasetError(
                        f"{parsed.source_file}: the same content was already imported as dataset "
                        f"'{same.name}' (id {same.id}, {same.created_at:%Y-%m-%d %H:%M}); use that "
                        "one, or import again with allow_duplicate (--allow-duplicate)")
            clash = session.exec(select(Dataset).where(Dataset.name == name)).first()
            if clash is not None:
                raise DatasetError(_name_taken(name, clash.id, parsed.source_file))
            dataset = Dataset(name=name, format=parsed.format, task_type=parsed.task_type,
                              language=parsed.language, source_file=parsed.source_file,
                              sha256=parsed.sha256, item_count=len(parsed.questions),
                              meta=parsed.meta)
            session.add(dataset)
            session.flush()
            rows = [{"dataset_id": dataset.id, "idx": q.idx, "question": q.question,
                     "reference": q.reference, "choices": q.choices, "task_type": q.task_type,
                     "language": q.language, "meta": q.meta} for q in parsed.questions]
            session.execute(insert(Item), rows)
    except IntegrityError as exc:
        # Another process may have taken the name between our check and the insert.
        with session_scope(engine) as session:
            taken = session.exec(select(Dataset.id).where(Dataset.name == name)).first()
        if taken is None:
            raise
        raise DatasetError(_name_taken(name, taken, parsed.source_file)) from exc
    return dataset


def _name_taken(name: str, existing_id: int | None, source_file: str) -> str:
    which = f" (id {existing_id})" if existing_id is not None else ""
    return (f"{source_file}: a dataset named '{name}' already exists{which}; choose another "
            "name (--name) or delete the old dataset first")
