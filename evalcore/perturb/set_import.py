"""Importing the method's attacked CSVs (`*_under{character,word,sentence}attack.csv`).

The file is parsed by `evalcore.dataset.parse_dataset` (formats "<base>_attacked"), then
linked to a CLEAN source dataset, in this order:

1. the dataset given by the caller: every original question must be found in it;
2. else an existing dataset of the base format holding every original question;
3. else a clean dataset is created from the file's original columns (named
   "<file stem>-clean"), in the same transaction.

Rows are matched on (original question, reference), the k-th duplicate to the k-th item,
so importing the clean file first and then each attacked file links them all to it, and
importing two attacked files of the same set links the second to the clean dataset the
first one created. Identity pairs of synword_pairs ('？' -> '？') are dropped from `pairs`
(nothing was replaced); `attack_num` is kept as the file says. An imported set is stored
in one transaction.
"""
from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Optional, Sequence, Union

import msgspec

from evalcore import dataset as datasets
from evalcore.dataset import list_datasets, load_items
from evalcore.dataset.formats import FORMATS
from evalcore.dataset.records import ParsedDataset, Question
from evalcore.perturb.adapter import check_many, with_option_checks
from evalcore.perturb.set_storage import (
    Fence,
    as_float,
    as_int,
    as_pairs,
    choose_name,
    store_set,
)
from evalcore.perturb.sets import (
    AttackSetError,
    DuplicateAttackFileError,
    list_attack_sets,
    normalize_level,
)
from evalcore.store.tables import AttackSet

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine

    from evalcore.store.tables import Dataset, Item

CHECK_BATCH = 200
"""Imported rows checked (and embedded) per step: the progress an import job reports."""


def import_attack_set(engine: "Engine", source: Any, *, filename: Optional[str] = None,
                      name: Optional[str] = None, level: Optional[str] = None,
                      source_dataset: Union[str, int, None] = None, check: bool = True,
                      similarity: bool = True, created_by: str = "",
                      allow_duplicate: bool = False, fence: Optional[Fence] = None,
                      on_progress: Optional[Callable[[int, int], None]] = None,
                      job_id: Optional[int] = None) -> "AttackSet":
    """Import one of the method's attacked CSVs as an attack set (see the module docstring).

    `check` runs the engine's `check_attack` on every row (flags such as number_changed);
    `similarity` adds the e5 similarity of original and attacked question (and the
    low_similarity flag), the slow part, reported to `on_progress(done, total)` as it goes.
    Without `check` items carry no flags. All or nothing: one write transaction, which
    `fence` (a job's lease check) guards; `job_id` is recorded in the set's params, so a
    job that is taken over finds the set its first attempt may have stored.
    """
    parsed, level, clean, how, name = plan_import(
        engine, source, filename=filename, name=name, level=level,
        source_dataset=source_dataset, allow_duplicate=allow_duplicate)
    params = {"source_file": parsed.source_file, "sha256": parsed.sha256,
              "format": parsed.format, "clean_link": how, "checked": check,
              "similarity_checked": check and similarity,
              **({"job_id": int(job_id)} if job_id is not None else {})}
    checks = _checks(parsed, similarity, on_progress) if check else []

    def rows_of(clean_items: list["Item"]) -> list[dict[str, Any]]:
        matched = _match(clean_items, parsed.questions)
        assert matched is not None  # find_clean checked it
        rows = []
        for n, (q, item) in enumerate(zip(parsed.questions, matched)):
            cosine, flags = checks[n] if checks else (None, [])
            rows.append({"source": item, "attacked": q.question, "idx": q.idx,
                         "choices": list(q.choices) if _split(q) else [],
                         "attack_num": as_int(q.meta.get("attack_num")),
                         "pairs": as_pairs(q.meta.get("synword_pairs")),
                         "similarity": as_float(cosine), "flags": list(flags),
                         "details": {}, "meta": q.meta})
        return rows

    stem = Path(parsed.source_file).stem or "attacked"
    return store_set(engine, source=clean, rows=None, rows_of=rows_of, level=level,
                     origin="imported", seed=None, params=params, name=name,
                     created_by=created_by, fmt=parsed.format, sha256=parsed.sha256,
                     meta=parsed.meta, source_file=parsed.source_file,
                     clean_name=f"{stem}-clean", fence=fence)


def _checks(parsed: ParsedDataset, similarity: bool,
            on_progress: Optional[Callable[[int, int], None]]
            ) -> list[tuple[Optional[float], list[str]]]:
    """The engine's checks of every row, `CHECK_BATCH` at a time, before the write
    transaction (embeddings take a while); options split out of the attacked question
    are checked each against its original."""
    checks: list[tuple[Optional[float], list[str]]] = []
    pairs = [(_original(q), q.question) for q in parsed.questions]
    attacked = [list(q.choices) if _split(q) else [] for q in parsed.questions]
    for start in range(0, len(pairs), CHECK_BATCH):
        batch = pairs[start:start + CHECK_BATCH]
        checks += with_option_checks(check_many(batch, similarity=similarity),
                                     [q for q, _ in batch], attacked[start:start + CHECK_BATCH],
                                     similarity=similarity)
        if on_progress is not None:
            on_progress(len(checks), len(pairs))
    return checks


def _split(question: "Question") -> bool:
    """Whether the file wrote this row's options into its attacked question (see
    `dataset.inline_options`): its choices are then the attacked ones."""
    return isinstance(question.meta.get("original_choices"), list)


def _original(question: "Question") -> "Question":
    """The clean question behind an attacked row: its original text and options."""
    choices = question.meta["original_choices"] if _split(question) else question.choices
    return msgspec.structs.replace(question, question=question.meta["original_question"],
                                   choices=list(choices))


def plan_import(engine: "Engine", source: Any, *, filename: Optional[str] = None,
                name: Optional[str] = None, level: Optional[str] = None,
                source_dataset: Union[str, int, None] = None, allow_duplicate: bool = False
                ) -> tuple["ParsedDataset", str, Any, str, str]:
    """Everything an import decides before the slow checks, writing nothing: (the parsed
    file, its level, the clean dataset (or the parsed one to create), how it was linked,
    the set's name). Raises the errors a user can act on (not an attacked file, no level,
    already imported, no matching clean dataset), so a page can refuse a file at once."""
    parsed = datasets.parse_dataset(source, filename)
    spec = FORMATS.get(parsed.format)
    if spec is None or not spec.attacked:
        raise AttackSetError(f"{parsed.source_file}: format {parsed.format!r} is not an attacked "
                             "file; the method's attacked CSVs have the original columns plus "
                             "attacked_question and attack_num")
    found_level = parsed.meta.get("attack_level")
    if level is None and found_level in (None, "unknown"):
        raise AttackSetError(f"{parsed.source_file}: the file name does not say the attack level "
                             "(e.g. '_underwordattack'); give the level (char, word, sentence)")
    level = normalize_level(level or found_level)
    if not allow_duplicate:
        _refuse_duplicate(engine, parsed.sha256, level, parsed.source_file)
    base_format = parsed.format[: -len("_attacked")]
    given = datasets.get_dataset(engine, source_dataset) if source_dataset is not None else None
    clean, how = _find_clean(engine, parsed, base_format, given)
    stem = Path(parsed.source_file).stem or "attacked"
    # a name given is refused now, not when the job stores the set; else the file's stem,
    # or stem-2 ... when a set has it (an import "anyway")
    name = choose_name(engine, name, stem)
    return parsed, level, clean, how, name


def _refuse_duplicate(engine: "Engine", sha256: str, level: str, source_file: str) -> None:
    for attack_set in list_attack_sets(engine):
        if (attack_set.params or {}).get("sha256") == sha256 and attack_set.level == level:
            raise DuplicateAttackFileError(
                f"{source_file}: the same file was already imported as attack set "
                f"'{attack_set.name}' (id {attack_set.id}); use that one, or import again with "
                "allow_duplicate (--allow-duplicate)", attack_set.name, int(attack_set.id))


def _match_key(question: str, reference: Optional[str]) -> tuple[str, str]:
    return question.strip(), (reference or "").strip()


def _match(items: Sequence["Item"], questions: Sequence["Question"]) -> Optional[list["Item"]]:
    """The item of each question by (original question, reference, occurrence), or None."""
    pool: dict[tuple[str, str], list[Any]] = defaultdict(list)
    for item in items:
        pool[_match_key(item.question, item.reference)].append(item)
    used: dict[tuple[str, str], int] = defaultdict(int)
    out = []
    for q in questions:
        key = _match_key(q.meta.get("original_question", ""), q.reference)
        candidates = pool.get(key, [])
        if used[key] >= len(candidates):
            return None
        out.append(candidates[used[key]])
        used[key] += 1
    return out


def _find_clean(engine: "Engine", parsed: "ParsedDataset", base_format: str,
                given: Optional["Dataset"]) -> tuple[Any, str]:
    """(clean dataset, how it was linked); a ParsedDataset to create when none matches."""
    if given is not None:
        items = load_items(engine, int(given.id))
        if _match(items, parsed.questions) is None:
            missing = _first_unmatched(items, parsed.questions)
            raise AttackSetError(f"{parsed.source_file}: row {missing + 2} (original question "
                                 f"{parsed.questions[missing].meta.get('original_question')!r}) "
                                 f"is not in dataset '{given.name}'; pick the dataset the file "
                                 "was attacked from, or leave it out to create one")
        return given, "given"
    for candidate in list_datasets(engine):
        if candidate.format != base_format or candidate.item_count < len(parsed.questions):
            continue
        if _match(load_items(engine, int(candidate.id)), parsed.questions) is not None:
            return candidate, "matched"
    return _clean_parsed(parsed, base_format), "created"


def _first_unmatched(items: Sequence["Item"], questions: Sequence["Question"]) -> int:
    for n in range(1, len(questions) + 1):
        if _match(items, questions[:n]) is None:
            return n - 1
    return 0


_ATTACK_META = ("original_question", "original_choices", "attack_num", "synword_pairs",
                "attack_level")


def _clean_parsed(parsed: "ParsedDataset", base_format: str) -> "ParsedDataset":
    """The clean dataset behind an attacked file: the original question of each row."""
    questions = []
    for q in parsed.questions:
        meta = {k: v for k, v in q.meta.items() if k not in _ATTACK_META}
        questions.append(msgspec.structs.replace(_original(q), meta=meta))
    text = json.dumps([msgspec.structs.asdict(q) for q in questions], ensure_ascii=False,
                      sort_keys=True)
    columns = [c for c in parsed.meta.get("columns", [])
               if c not in ("attacked_question", "attack_num", "synword_pairs")]
    meta = {"columns": columns, "languages": parsed.meta.get("languages", {}),
            "derived_from_attacked_file": parsed.source_file}
    return ParsedDataset(format=base_format, task_type=parsed.task_type, language=parsed.language,
                         questions=questions, source_file=parsed.source_file,
                         sha256=hashlib.sha256(text.encode("utf-8")).hexdigest(), meta=meta)
