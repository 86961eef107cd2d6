"""Attack sets: attacked copies of a dataset with their lineage, stored for review and runs.

An attack set is stored as three things:

- an `AttackSet` row: source dataset, level (char, word, sentence), origin (generated or
  imported), seed and parameters (the lineage);
- a NEW derived `Dataset` (format "<source format>_attacked", meta["lineage"] naming the
  attack set and the source dataset) whose Items are the attacked questions, with the
  clean item's reference, choices, task type and language and meta["original_item_id"];
  so runs ask attacked questions like any other item;
- one `AttackItem` per question (status pending, the engine's checks and flags).

Generated sets are written incrementally so a job can be killed and resumed:
`create_attack_set` validates and stores the set with an empty derived dataset, then
`generate_attack_items` attacks and stores the items in batches (`BATCH_SIZE`), each in its
own transaction, skipping source items the set already holds (unique per set). An imported
set is stored in one transaction.

Importing the method's attacked CSVs (`*_under{character,word,sentence}attack.csv`):
the file is parsed by `evalcore.dataset.parse_dataset` (formats "<base>_attacked"), then
linked to a CLEAN source dataset, in this order:

1. the dataset given by the caller: every original question must be found in it;
2. else an existing dataset of the base format holding every original question;
3. else a clean dataset is created from the file's original columns (named
   "<file stem>-clean"), in the same transaction.

Rows are matched on (original question, reference), the k-th duplicate to the k-th item,
so importing the clean file first and then each attacked file links them all to it, and
importing two attacked files of the same set links the second to the clean dataset the
first one created. Identity pairs of synword_pairs ('？' -> '？') are dropped from `pairs`
(nothing was replaced); `attack_num` is kept as the file says.
"""
from __future__ import annotations

import asyncio
import hashlib
import json
from collections import defaultdict
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Optional, Sequence, Union

from evalcore.errors import EvalcoreError

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine
    from sqlmodel import Session

    from evalcore.dataset.records import ParsedDataset, Question
    from evalcore.store.tables import AttackSet, Dataset, Item

LEVELS = ("char", "word", "sentence")
_LEVEL_ALIASES = {"character": "char", "char": "char", "word": "word", "sentence": "sentence"}


class AttackSetError(EvalcoreError):
    """An attack set cannot be created, imported, found or reviewed as asked."""


class DuplicateAttackFileError(AttackSetError):
    """The same attacked file was imported before, as set `existing` (#`existing_id`)."""

    def __init__(self, message: str, existing: str, existing_id: int) -> None:
        super().__init__(message)
        self.existing, self.existing_id = existing, existing_id


def normalize_level(level: str) -> str:
    """'char', 'word' or 'sentence' (accepts 'character' as the method's files spell it)."""
    found = _LEVEL_ALIASES.get((level or "").strip().lower())
    if found is None:
        raise AttackSetError(f"unknown attack level {level!r}; use one of {', '.join(LEVELS)}")
    return found


# --------------------------------------------------------------------------- engine adapter


_ENGINE_HOMES = {"attack_questions": ("evalcore.perturb", "evalcore.perturb.attack"),
                 "check_attack": ("evalcore.perturb", "evalcore.perturb.guard"),
                 "make_translator": ("evalcore.perturb", "evalcore.perturb.sentence",
                                     "evalcore.perturb.translate")}


def engine_fn(name: str) -> Callable[..., Any]:
    """A function of the perturbation engine (evalcore.perturb), or a clear error."""
    import importlib

    for module in _ENGINE_HOMES[name]:
        try:
            found = getattr(importlib.import_module(module), name, None)
        except ImportError:
            continue
        if found is not None:
            return found
    raise AttackSetError(f"the perturbation engine has no {name} (evalcore.perturb); "
                         "update evalcore")


def check_many(pairs: Sequence[tuple["Question", str]], *, similarity: bool = True
               ) -> list[tuple[Optional[float], list[str]]]:
    """`check_attack` for many (clean question, attacked text) pairs, embeddings in one batch.

    Without `similarity` no embedding is computed (the slow part: see bench/attack_bench.py)
    and "low_similarity" is never flagged; the other checks still run.
    """
    from evalcore.scorers.text import embedding_cosine_batch

    check = engine_fn("check_attack")
    if not pairs:
        return []
    if not similarity:
        return [check(q, a, embed=False) for q, a in pairs]
    cosines = embedding_cosine_batch([a for _, a in pairs], [q.question for q, _ in pairs])
    return [check(q, a, similarity=c) for (q, a), c in zip(pairs, cosines)]


# --------------------------------------------------------------------------- create

BATCH_SIZE = 50
"""Items attacked and stored per transaction: a killed generation loses at most one batch
of work, and the next `generate_attack_items` continues after the last stored batch."""

CHECK_BATCH = 200
"""Imported rows checked (and embedded) per step: the progress an import job reports."""

Fence = Callable[[Any], None]
"""Called with the SQLAlchemy connection inside each batch's write transaction, before
anything is written; raising aborts (rolls back) that batch. The job engine checks its
lease's fencing token here, so a worker whose lease was taken over cannot write."""


def create_attack_set(engine: "Engine", *, dataset: Union[str, int], level: str,
                      seed: int = 0, params: Optional[dict[str, Any]] = None,
                      translator: Optional[str] = None, name: Optional[str] = None,
                      created_by: str = "", limit: Optional[int] = None) -> int:
    """Validate the request and store the (empty) attack set; returns its id.

    The row and its empty derived dataset are written at once, so a job can point at the
    set before any item exists; `generate_attack_items` fills it in. `translator` is a
    spec ("llm:MODEL", "google"), kept in the lineage for the sentence level.
    """
    from sqlalchemy import func
    from sqlmodel import select

    from evalcore.dataset import get_dataset
    from evalcore.store.db import session_scope
    from evalcore.store.tables import AttackSet, Dataset, Item

    level = normalize_level(level)
    resolved = _resolved(level, params)  # unknown params fail here, before any work
    if translator is not None and not isinstance(translator, str):
        raise AttackSetError("give the translator as a spec ('llm:MODEL' or 'google') so the "
                             "set's lineage can name it")
    if level == "sentence" and not translator:
        raise AttackSetError("the sentence attack needs a translator: 'llm:MODEL' (one of "
                             "your models back-translates) or 'google' (online)")
    if limit is not None and limit < 1:
        raise AttackSetError(f"limit must be at least 1 (got {limit})")
    source = get_dataset(engine, dataset)
    with session_scope(engine) as session:
        count = session.exec(select(func.count(Item.id))
                             .where(Item.dataset_id == source.id)).one()
        total = min(count, limit) if limit is not None else count
        if not total:
            raise AttackSetError(f"dataset {source.name!r} has no items to attack")
        set_name = _set_name(session, name, source.name, level, seed)
        lineage = {"params": dict(params or {}), "resolved": resolved,
                   "translator": translator, "limit": limit, "total": total}
        attack_set = AttackSet(name=set_name, source_dataset_id=source.id, level=level,
                               origin="generated", seed=seed, params=lineage,
                               created_by=created_by, item_count=0)
        session.add(attack_set)
        session.flush()
        meta = {"lineage": _lineage(attack_set, source), "attack_level": level}
        derived = Dataset(name=_free_name(session, f"attack:{set_name}", Dataset),
                          format=_derived_format(source.format), task_type=source.task_type,
                          language=source.language, source_file="", sha256="",
                          item_count=0, meta=meta)
        session.add(derived)
        session.flush()
        attack_set.dataset_id = derived.id
        session.add(attack_set)
        return int(attack_set.id)


async def generate_attack_items_async(engine: "Engine", set_id: int, *,
                                      on_progress: Optional[Callable[[int, int], None]] = None,
                                      fence: Optional[Fence] = None, translator: Any = None,
                                      models_path: Optional[Path] = None,
                                      batch_size: int = BATCH_SIZE) -> "AttackSet":
    """Attack the set's source items not stored yet, `batch_size` per transaction.

    Source items already in the set are skipped, so a killed generation continues where
    it stopped, with no item lost or stored twice (each item's attack is seeded by its own
    index, so the result is the same as one uninterrupted pass). `on_progress(done,
    total)` follows each stored batch (done counts earlier batches too); an exception it
    raises stops the generation after that batch. `translator` overrides the lineage's
    spec with a translator object (tests, pages holding one).
    """
    from evalcore.dataset import load_items
    from evalcore.dataset.records import Question

    attack_set = await asyncio.to_thread(get_attack_set, engine, set_id)
    if attack_set.origin != "generated":
        raise AttackSetError(f"attack set '{attack_set.name}' was imported; there is nothing "
                             "to generate")
    lineage = attack_set.params or {}
    items = await asyncio.to_thread(load_items, engine, int(attack_set.source_dataset_id),
                                    lineage.get("limit"))
    stored = await asyncio.to_thread(_stored_sources, engine, int(attack_set.id))
    todo = [item for item in items if item.id not in stored]
    total, done = len(items), len(items) - len(todo)
    if on_progress:
        on_progress(done, total)
    if todo and translator is None and lineage.get("translator"):
        if models_path is None:
            from evalcore.config import load_settings

            models_path = load_settings().models_path
        translator = engine_fn("make_translator")(lineage["translator"], models_path=models_path)
    attack = engine_fn("attack_questions")
    for start in range(0, len(todo), max(1, batch_size)):
        batch = todo[start:start + max(1, batch_size)]
        results = await attack([Question.model_validate(item) for item in batch],
                               attack_set.level, seed=attack_set.seed or 0,
                               params=lineage.get("params"), translator=translator)
        if len(results) != len(batch):
            raise AttackSetError(f"the {attack_set.level} attack returned {len(results)} "
                                 f"results for {len(batch)} questions of set "
                                 f"'{attack_set.name}'")
        rows = [_row_from_result(item, result) for item, result in zip(batch, results)]
        await asyncio.to_thread(_append, engine, int(attack_set.id), rows, fence)
        done += len(batch)
        if on_progress:
            on_progress(done, total)
    return await asyncio.to_thread(get_attack_set, engine, int(attack_set.id))


def generate_attack_items(engine: "Engine", set_id: int, *,
                          on_progress: Optional[Callable[[int, int], None]] = None,
                          fence: Optional[Fence] = None, **kwargs: Any) -> "AttackSet":
    """`generate_attack_items_async` from synchronous code (a worker, the CLI)."""
    from evalcore.providers.client import run_closing_clients

    return run_closing_clients(generate_attack_items_async(
        engine, set_id, on_progress=on_progress, fence=fence, **kwargs))


async def generate_attack_set(engine: "Engine", *, dataset: Union[str, int], level: str,
                              seed: int = 0, params: Optional[dict[str, Any]] = None,
                              translator: Any = None, models_path: Optional[Path] = None,
                              name: Optional[str] = None, created_by: str = "",
                              limit: Optional[int] = None,
                              on_progress: Optional[Callable[..., None]] = None) -> "AttackSet":
    """`create_attack_set` then `generate_attack_items_async`, on a running loop (pages).

    `translator` is a spec ("llm:MODEL", "google") or a translator object (sentence level).
    """
    spec = translator if isinstance(translator, str) or translator is None else None
    if level == "sentence" and translator is not None and spec is None:
        spec = getattr(translator, "name", "") or type(translator).__name__
    set_id = await asyncio.to_thread(
        create_attack_set, engine, dataset=dataset, level=level, seed=seed, params=params,
        translator=spec, name=name, created_by=created_by, limit=limit)
    return await generate_attack_items_async(
        engine, set_id, on_progress=on_progress, models_path=models_path,
        translator=None if isinstance(translator, str) else translator)


def make_attack_set(engine: "Engine", **kwargs: Any) -> "AttackSet":
    """`generate_attack_set` from synchronous code (the CLI): runs its own event loop."""
    from evalcore.providers.client import run_closing_clients

    return run_closing_clients(generate_attack_set(engine, **kwargs))


def attack_set_complete(attack_set: "AttackSet") -> bool:
    """Whether every item of a generated set is stored (imported sets always are)."""
    total = (attack_set.params or {}).get("total")
    return attack_set.origin != "generated" or total is None or attack_set.item_count >= total


def _stored_sources(engine: "Engine", set_id: int) -> set[int]:
    from sqlmodel import select

    from evalcore.store.db import session_scope
    from evalcore.store.tables import AttackItem

    with session_scope(engine, write=False) as session:
        return set(session.exec(select(AttackItem.source_item_id)
                                .where(AttackItem.attack_set_id == set_id)))


def _append(engine: "Engine", set_id: int, rows: list[dict[str, Any]],
            fence: Optional[Fence]) -> None:
    """One batch: derived items, attack items and the counts, in one transaction."""
    from sqlalchemy import update

    from evalcore.store.db import session_scope
    from evalcore.store.tables import AttackSet, Dataset

    with session_scope(engine) as session:
        if fence is not None:
            fence(session.connection())
        attack_set = session.get(AttackSet, set_id)
        if attack_set is None or attack_set.dataset_id is None:
            raise AttackSetError(f"attack set {set_id} was deleted while it was generated")
        level = attack_set.level
        _insert_items(session, int(attack_set.dataset_id), [_derived_question(r, level)
                                                             for r in rows])
        _insert_attack_items(session, attack_set, attack_set.dataset_id, rows)
        session.execute(update(AttackSet).where(AttackSet.id == set_id)
                        .values(item_count=AttackSet.item_count + len(rows)))
        session.execute(update(Dataset).where(Dataset.id == attack_set.dataset_id)
                        .values(item_count=Dataset.item_count + len(rows)))


def _derived_question(row: dict[str, Any], level: str) -> "Question":
    from evalcore.dataset.records import Question

    src = row["source"]
    return Question(idx=row.get("idx", src.idx), question=row["attacked"],
                    reference=src.reference, choices=row.get("choices") or src.choices,
                    task_type=src.task_type,
                    language=src.language, meta=_derived_meta(row, level))


def _derived_format(source_format: str) -> str:
    return source_format if source_format.endswith("_attacked") else f"{source_format}_attacked"


def _lineage(attack_set: "AttackSet", source: Any) -> dict[str, Any]:
    return {"attack_set": attack_set.id, "attack_set_name": attack_set.name,
            "source_dataset_id": source.id, "source_dataset": source.name,
            "level": attack_set.level, "origin": attack_set.origin, "seed": attack_set.seed,
            "params": attack_set.params}


def _resolved(level: str, params: Optional[dict[str, Any]]) -> dict[str, Any]:
    """Every parameter the attack used, defaults included (the lineage must not depend on
    defaults that may change later)."""
    import evalcore.perturb as perturb

    resolve = getattr(perturb, "resolve_params", None)
    return dict(resolve(level, params)) if resolve is not None else dict(params or {})


def _row_from_result(item: "Item", result: Any) -> dict[str, Any]:
    details = getattr(result, "details", None) or {}
    return {"source": item, "attacked": str(result.attacked),
            "attack_num": int(getattr(result, "attack_num", 0) or 0),
            "pairs": _pairs_where(result),
            "choices": list(getattr(result, "choices", None) or []),
            "similarity": _float(getattr(result, "similarity", None)),
            "flags": [str(f) for f in (getattr(result, "flags", None) or [])],
            "details": json.loads(json.dumps(details, default=str, ensure_ascii=False))}


def _pairs_where(result: Any) -> list[list[str]]:
    """[old, new] pairs, as [old, new, where] when the attack says where each was made
    ("question", "option 2": word attacks of choice items)."""
    pairs = [list(p) for p in (getattr(result, "pairs", None) or [])]
    where = list(getattr(result, "where", None) or [])
    if len(where) == len(pairs) and any(w != "question" for w in where):
        return [[*p[:2], w] for p, w in zip(pairs, where)]
    return pairs


def _float(value: Any) -> Optional[float]:
    return None if value is None else float(value)


# --------------------------------------------------------------------------- import


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
    stem = Path(parsed.source_file).stem or "attacked"
    return _store(engine, source=clean, rows=None, parsed=parsed, level=level, origin="imported",
                  seed=None, params=params, name=name, created_by=created_by,
                  fmt=parsed.format, sha256=parsed.sha256, meta=parsed.meta,
                  check=check, similarity=similarity, clean_name=f"{stem}-clean",
                  fence=fence, on_progress=on_progress)


def plan_import(engine: "Engine", source: Any, *, filename: Optional[str] = None,
                name: Optional[str] = None, level: Optional[str] = None,
                source_dataset: Union[str, int, None] = None, allow_duplicate: bool = False
                ) -> tuple["ParsedDataset", str, Any, str, str]:
    """Everything an import decides before the slow checks, writing nothing: (the parsed
    file, its level, the clean dataset (or the parsed one to create), how it was linked,
    the set's name). Raises the errors a user can act on (not an attacked file, no level,
    already imported, no matching clean dataset), so a page can refuse a file at once."""
    from evalcore.dataset import get_dataset, parse_dataset
    from evalcore.dataset.formats import FORMATS

    parsed = parse_dataset(source, filename)
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
    given = get_dataset(engine, source_dataset) if source_dataset is not None else None
    clean, how = _find_clean(engine, parsed, base_format, given)
    stem = Path(parsed.source_file).stem or "attacked"
    from evalcore.store.db import session_scope
    from evalcore.store.tables import AttackSet

    with session_scope(engine, write=False) as session:
        if name:
            _refuse_taken(session, name)  # refused now, not when the job stores the set
        else:  # the file's stem, or stem-2 ... when a set has it (an import "anyway")
            name = _free_name(session, stem, AttackSet)
    return parsed, level, clean, how, name


def set_of_job(engine: "Engine", job_id: int) -> Optional["AttackSet"]:
    """The attack set an import job stored (params job_id), if any."""
    return next((s for s in list_attack_sets(engine)
                 if (s.params or {}).get("job_id") == int(job_id)), None)


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
    from evalcore.dataset import list_datasets, load_items

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


_ATTACK_META = ("original_question", "attack_num", "synword_pairs", "attack_level")


def _clean_parsed(parsed: "ParsedDataset", base_format: str) -> "ParsedDataset":
    """The clean dataset behind an attacked file: the original question of each row."""
    from evalcore.dataset.records import ParsedDataset

    questions = []
    for q in parsed.questions:
        meta = {k: v for k, v in q.meta.items() if k not in _ATTACK_META}
        questions.append(q.model_copy(update={"question": q.meta["original_question"],
                                              "meta": meta}))
    text = json.dumps([q.model_dump() for q in questions], ensure_ascii=False, sort_keys=True)
    columns = [c for c in parsed.meta.get("columns", [])
               if c not in ("attacked_question", "attack_num", "synword_pairs")]
    meta = {"columns": columns, "languages": parsed.meta.get("languages", {}),
            "derived_from_attacked_file": parsed.source_file}
    return ParsedDataset(format=base_format, task_type=parsed.task_type, language=parsed.language,
                         questions=questions, source_file=parsed.source_file,
                         sha256=hashlib.sha256(text.encode("utf-8")).hexdigest(), meta=meta)


# --------------------------------------------------------------------------- store


def _store(engine: "Engine", *, source: Any, rows: Optional[list[dict[str, Any]]], level: str,
           origin: str, seed: Optional[int], params: dict[str, Any], name: Optional[str],
           created_by: str, fmt: Optional[str], sha256: Optional[str],
           meta: Optional[dict[str, Any]], parsed: Optional["ParsedDataset"] = None,
           check: bool = False, similarity: bool = True,
           clean_name: str = "", fence: Optional[Fence] = None,
           on_progress: Optional[Callable[[int, int], None]] = None) -> "AttackSet":
    """Write the clean dataset (if new), the attack set, the derived dataset, its items and
    the attack items: all or nothing (after `fence`, in one transaction)."""
    from evalcore.dataset.records import ParsedDataset
    from evalcore.store.db import session_scope
    from evalcore.store.tables import AttackSet, Dataset

    checks: list[tuple[Optional[float], list[str]]] = []
    if parsed is not None and check:  # before the write transaction: embeddings take a while
        pairs = [(q.model_copy(update={"question": q.meta["original_question"]}), q.question)
                 for q in parsed.questions]
        for start in range(0, len(pairs), CHECK_BATCH):
            checks += check_many(pairs[start:start + CHECK_BATCH], similarity=similarity)
            if on_progress is not None:
                on_progress(len(checks), len(pairs))
    with session_scope(engine) as session:
        if fence is not None:
            fence(session.connection())
        if isinstance(source, ParsedDataset):
            source = _insert_dataset(session, source, _free_name(session, clean_name, Dataset))
        if parsed is not None:
            from sqlmodel import select

            from evalcore.store.tables import Item

            clean_items = list(session.exec(select(Item).where(Item.dataset_id == source.id)))
            matched = _match(clean_items, parsed.questions)
            assert matched is not None  # _find_clean checked it
            rows = []
            for n, (q, item) in enumerate(zip(parsed.questions, matched)):
                similarity, flags = checks[n] if checks else (None, [])
                rows.append({"source": item, "attacked": q.question, "idx": q.idx,
                             "attack_num": _int(q.meta.get("attack_num")),
                             "pairs": _pairs(q.meta.get("synword_pairs")),
                             "similarity": _float(similarity), "flags": list(flags),
                             "details": {}, "meta": q.meta})
        assert rows is not None
        set_name = _set_name(session, name, source.name, level, seed)
        attack_set = AttackSet(name=set_name, source_dataset_id=source.id, level=level,
                               origin=origin, seed=seed, params=params, created_by=created_by,
                               item_count=len(rows))
        session.add(attack_set)
        session.flush()
        questions = [_derived_question(r, level) for r in rows]
        text = json.dumps([q.question for q in questions], ensure_ascii=False)
        derived = ParsedDataset(format=fmt or _derived_format(source.format),
                                task_type=source.task_type,
                                language=source.language, questions=questions,
                                source_file=(parsed.source_file if parsed else ""),
                                sha256=sha256 or hashlib.sha256(text.encode()).hexdigest(),
                                meta={**(meta or {}), "lineage": _lineage(attack_set, source),
                                      "attack_level": level})
        dataset = _insert_dataset(session, derived, _free_name(session, f"attack:{set_name}",
                                                               Dataset))
        attack_set.dataset_id = dataset.id
        session.add(attack_set)
        _insert_attack_items(session, attack_set, int(dataset.id), rows)
        session.flush()
        session.refresh(attack_set)
    return attack_set


def _derived_meta(row: dict[str, Any], level: str) -> dict[str, Any]:
    meta = {k: v for k, v in (row.get("meta") or {}).items()}
    meta.update({"original_item_id": row["source"].id, "original_question": row["source"].question,
                 "attack_level": level, "attack_num": row["attack_num"]})
    if row.get("details"):
        meta["attack_details"] = row["details"]
    return meta


def _insert_dataset(session: "Session", parsed: "ParsedDataset", name: str) -> "Dataset":
    from evalcore.store.tables import Dataset

    dataset = Dataset(name=name, format=parsed.format, task_type=parsed.task_type,
                      language=parsed.language, source_file=parsed.source_file,
                      sha256=parsed.sha256, item_count=len(parsed.questions), meta=parsed.meta)
    session.add(dataset)
    session.flush()
    _insert_items(session, int(dataset.id), parsed.questions)
    return dataset


def _insert_items(session: "Session", dataset_id: int, questions: Sequence["Question"]) -> None:
    from sqlalchemy import insert

    from evalcore.store.tables import Item

    if not questions:
        return
    session.execute(insert(Item), [
        {"dataset_id": dataset_id, "idx": q.idx, "question": q.question, "reference": q.reference,
         "choices": q.choices, "task_type": q.task_type, "language": q.language, "meta": q.meta}
        for q in questions])


def _insert_attack_items(session: "Session", attack_set: "AttackSet", dataset_id: int,
                         rows: list[dict[str, Any]]) -> None:
    from sqlalchemy import insert
    from sqlmodel import select

    from evalcore.store.tables import AttackItem, Item

    by_idx = {idx: item_id for idx, item_id in
              session.exec(select(Item.idx, Item.id).where(Item.dataset_id == dataset_id))}
    session.execute(insert(AttackItem), [
        {"attack_set_id": attack_set.id, "source_item_id": r["source"].id,
         "attacked_item_id": by_idx[r.get("idx", r["source"].idx)],
         "original": r["source"].question, "attacked": r["attacked"],
         "attack_num": r["attack_num"], "pairs": r["pairs"], "similarity": r["similarity"],
         "flags": r["flags"], "status": "pending", "reviewer": "", "reviewed_at": None,
         "edited": False, "note": ""} for r in rows])


def _int(value: Any) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return 0


def _pairs(value: Any) -> list[list[str]]:
    """synword_pairs {'a': 'b'} -> [['a', 'b']], identity pairs dropped."""
    if isinstance(value, dict):
        return [[str(a), str(b)] for a, b in value.items() if a != b]
    if isinstance(value, (list, tuple)):
        return [[str(p[0]), str(p[1])] for p in value if len(p) == 2 and p[0] != p[1]]
    return []


def _free_name(session: "Session", wanted: str, table: Any) -> str:
    from sqlmodel import select

    taken = set(session.exec(select(table.name).where(table.name.startswith(wanted))))
    if wanted not in taken:
        return wanted
    n = 2
    while f"{wanted}-{n}" in taken:
        n += 1
    return f"{wanted}-{n}"


def _set_name(session: "Session", name: Optional[str], dataset_name: str, level: str,
              seed: Optional[int]) -> str:

    from evalcore.store.tables import AttackSet

    if name:
        _refuse_taken(session, name)
        return name
    base = f"{dataset_name}-{level}" + (f"-s{seed}" if seed is not None else "")
    return _free_name(session, base, AttackSet)


def _refuse_taken(session: "Session", name: str) -> None:
    from sqlmodel import select

    from evalcore.store.tables import AttackSet

    clash = session.exec(select(AttackSet.id).where(AttackSet.name == name)).first()
    if clash is not None:
        raise AttackSetError(f"an attack set named {name!r} already exists (id {clash}); "
                             "choose another name")


# --------------------------------------------------------------------------- read


def list_attack_sets(engine: "Engine", dataset: Union[str, int, None] = None) -> list["AttackSet"]:
    """Every attack set, oldest first; only those of one source dataset if given."""
    from sqlmodel import select

    from evalcore.store.db import session_scope
    from evalcore.store.tables import AttackSet

    query = select(AttackSet).order_by(AttackSet.id)
    if dataset is not None:
        from evalcore.dataset import get_dataset

        query = query.where(AttackSet.source_dataset_id == get_dataset(engine, dataset).id)
    with session_scope(engine, write=False) as session:
        return list(session.exec(query).all())


def get_attack_set(engine: "Engine", id_or_name: Union[str, int]) -> "AttackSet":
    """An attack set by id (int or digits) or by name."""
    from sqlmodel import select

    from evalcore.store.db import session_scope
    from evalcore.store.tables import AttackSet

    with session_scope(engine, write=False) as session:
        found = None
        if isinstance(id_or_name, int) or str(id_or_name).strip().isdigit():
            found = session.get(AttackSet, int(id_or_name))
        if found is None:
            found = session.exec(select(AttackSet).where(AttackSet.name == str(id_or_name))).first()
        if found is None:
            known = [f"{s.id}:{s.name}" for s in
                     session.exec(select(AttackSet).order_by(AttackSet.id)).all()]
            raise AttackSetError(f"no attack set {id_or_name!r}; known: "
                                 f"{', '.join(known[:20]) or 'none yet'} (create one with "
                                 "`attack --dataset NAME --level word` or `attacks import PATH`)")
        return found


def attack_set_info(engine: "Engine", attack_set: "AttackSet") -> dict[str, Any]:
    """A JSON-ready summary: lineage, counts by status and flags."""
    from evalcore.dataset import get_dataset
    from evalcore.perturb.review import review_progress

    source = get_dataset(engine, attack_set.source_dataset_id)
    return {"id": attack_set.id, "name": attack_set.name, "level": attack_set.level,
            "origin": attack_set.origin, "seed": attack_set.seed, "params": attack_set.params,
            "source_dataset_id": attack_set.source_dataset_id, "source_dataset": source.name,
            "dataset_id": attack_set.dataset_id, "items": attack_set.item_count,
            "created_by": attack_set.created_by,
            "created_at": attack_set.created_at.isoformat(),
            "review": review_progress(engine, int(attack_set.id))}


def delete_attack_set(engine: "Engine", id_or_name: Union[str, int]) -> "AttackSet":
    """Delete a set, its attack items and derived dataset; refuses while runs use them."""
    from sqlalchemy import delete
    from sqlmodel import select

    from evalcore.store.db import session_scope
    from evalcore.store.tables import AttackItem, Call, Dataset, Item, ReviewEvent

    from evalcore.store.jobs import lease_alive, list_jobs
    from evalcore.store.tables import Job

    attack_set = get_attack_set(engine, id_or_name)
    generating = [j for j in list_jobs(engine, kind="attack", limit=1000)
                  if j.attack_set_id == attack_set.id and lease_alive(j)]
    if generating:
        raise AttackSetError(f"attack set '{attack_set.name}' is being generated by "
                             f"{generating[0].owner}; cancel job {generating[0].id} first")
    with session_scope(engine) as session:
        session.execute(delete(Job).where(Job.attack_set_id == attack_set.id))
        used = session.exec(select(Call.run_id).join(Item, Item.id == Call.item_id)
                            .where(Item.dataset_id == attack_set.dataset_id).distinct()).all()
        if used:
            raise AttackSetError(f"attack set '{attack_set.name}' was run in run(s) "
                                 f"{', '.join(map(str, used[:10]))}; delete those runs first")
        session.execute(delete(ReviewEvent).where(ReviewEvent.attack_set_id == attack_set.id))
        session.execute(delete(AttackItem).where(AttackItem.attack_set_id == attack_set.id))
        from evalcore.store.tables import AttackSet

        session.execute(delete(AttackSet).where(AttackSet.id == attack_set.id))
        session.execute(delete(Item).where(Item.dataset_id == attack_set.dataset_id))
        session.execute(delete(Dataset).where(Dataset.id == attack_set.dataset_id))
    return attack_set
