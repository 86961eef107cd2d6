"""What an attack set is written as: its derived dataset's questions, lineage and names.

The rows (`row` dicts: source item, attacked text, attack_num, pairs, similarity, flags,
details, meta) come from `perturb.generate` or `perturb.set_import`; the transactions that
write them are `evalcore.store.attack_set_writes`.
"""
from __future__ import annotations

import hashlib
import json
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Callable, Iterator, Optional

from evalcore.dataset.records import ParsedDataset, Question
from evalcore.perturb.sets import AttackSetError
from evalcore.store import attack_set_writes as writes
from evalcore.store.attack_set_writes import Fence
from evalcore.store.tables import AttackSet
from evalcore.values import validated

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine

    from evalcore.store.tables import Item


@contextmanager
def named_set_refused() -> Iterator[None]:
    """A set name that is taken, as the error a user acts on."""
    try:
        yield
    except writes.SetNameTaken as exc:
        raise AttackSetError(f"an attack set named {exc.name!r} already exists (id "
                             f"{exc.set_id}); choose another name") from None


def default_set_name(dataset_name: str, level: str, seed: Optional[int]) -> str:
    """"<dataset>-<level>[-s<seed>]": a set's name when none is given (made free)."""
    return f"{dataset_name}-{level}" + (f"-s{seed}" if seed is not None else "")


def choose_name(engine: "Engine", name: Optional[str], default: str) -> str:
    """The name asked for (refused when taken), else `default` made free."""
    with named_set_refused():
        return writes.choose_set_name(engine, name, default)


def store_set(engine: "Engine", *, source: Any, rows: Optional[list[dict[str, Any]]],
              level: str, origin: str, seed: Optional[int], params: dict[str, Any],
              name: Optional[str], created_by: str, fmt: Optional[str], sha256: Optional[str],
              meta: Optional[dict[str, Any]], source_file: str = "",
              rows_of: Optional[Callable[[list["Item"]], list[dict[str, Any]]]] = None,
              clean_name: str = "", fence: Optional[Fence] = None) -> AttackSet:
    """Write the clean dataset (if new), the attack set, the derived dataset, its items and
    the attack items: all or nothing (after `fence`, in one transaction). `source` is the
    clean dataset, or a ParsedDataset to create as `clean_name`; `rows_of(clean items)`
    makes the rows inside the transaction when the clean dataset may be new (imports)."""

    def derive(attack_set: AttackSet, source: Any, rows: list[dict[str, Any]]) -> ParsedDataset:
        questions = [derived_question(r, level) for r in rows]
        text = json.dumps([x.question for x in questions], ensure_ascii=False)
        return ParsedDataset(format=fmt or derived_format(source.format),
                             task_type=source.task_type, language=source.language,
                             questions=questions, source_file=source_file,
                             sha256=sha256 or hashlib.sha256(text.encode()).hexdigest(),
                             meta={**(meta or {}), "lineage": lineage(attack_set, source),
                                   "attack_level": level})

    fields = {"level": level, "origin": origin, "seed": seed, "params": params,
              "created_by": created_by}
    with named_set_refused():
        return writes.store_attack_set(
            engine, source=source, clean_name=clean_name, rows=rows, rows_of=rows_of,
            name=name, default_name=lambda dataset: default_set_name(dataset, level, seed),
            fields=fields, derive=derive, fence=fence)


def append(engine: "Engine", set_id: int, rows: list[dict[str, Any]],
           fence: Optional[Fence]) -> None:
    """One generated batch: derived items, attack items and the counts, in one transaction."""
    if not writes.append_attack_items(
            engine, set_id, rows, lambda level: [derived_question(r, level) for r in rows],
            fence):
        raise AttackSetError(f"attack set {set_id} was deleted while it was generated")


def derived_meta(row: dict[str, Any], level: str) -> dict[str, Any]:
    """An attacked item's meta: the file's own plus the clean item it came from."""
    meta = {k: v for k, v in (row.get("meta") or {}).items()}
    meta.update({"original_item_id": row["source"].id, "original_question": row["source"].question,
                 "attack_level": level, "attack_num": row["attack_num"]})
    if row.get("details"):
        meta["attack_details"] = row["details"]
    return meta


def derived_question(row: dict[str, Any], level: str) -> Question:
    """The attacked question of a row, with the clean item's reference, choices, language.

    Checked: the clean item is a stored row and the attacked text and options come from an
    attack or an uploaded file; an `AttackSetError` names the item and the field."""
    src = row["source"]
    return validated(Question, {
        "idx": row.get("idx", src.idx), "question": row["attacked"],
        "reference": src.reference, "choices": row.get("choices") or src.choices,
        "task_type": src.task_type, "language": src.language,
        "meta": derived_meta(row, level)}, fail=lambda why: AttackSetError(
            f"the attacked version of item {src.id} is not a valid question: {why}; fix or "
            "drop that row"))


def derived_format(source_format: str) -> str:
    """The derived dataset's format: "<source format>_attacked"."""
    return source_format if source_format.endswith("_attacked") else f"{source_format}_attacked"


def lineage(attack_set: AttackSet, source: Any) -> dict[str, Any]:
    """What the derived dataset's meta says it was made from."""
    return {"attack_set": attack_set.id, "attack_set_name": attack_set.name,
            "source_dataset_id": source.id, "source_dataset": source.name,
            "level": attack_set.level, "origin": attack_set.origin, "seed": attack_set.seed,
            "params": attack_set.params}


def row_from_result(item: "Item", result: Any) -> dict[str, Any]:
    """A row from one of the engine's attack results."""
    details = getattr(result, "details", None) or {}
    return {"source": item, "attacked": str(result.attacked),
            "attack_num": int(getattr(result, "attack_num", 0) or 0),
            "pairs": pairs_where(result),
            "choices": list(getattr(result, "choices", None) or []),
            "similarity": as_float(getattr(result, "similarity", None)),
            "flags": [str(f) for f in (getattr(result, "flags", None) or [])],
            "details": json.loads(json.dumps(details, default=str, ensure_ascii=False))}


def pairs_where(result: Any) -> list[list[str]]:
    """[old, new] pairs, as [old, new, where] when the attack says where each was made
    ("question", "option 2": word attacks of choice items)."""
    pairs = [list(p) for p in (getattr(result, "pairs", None) or [])]
    where = list(getattr(result, "where", None) or [])
    if len(where) == len(pairs) and any(w != "question" for w in where):
        return [[*p[:2], w] for p, w in zip(pairs, where)]
    return pairs


def as_float(value: Any) -> Optional[float]:
    """None stays None; anything else a float."""
    return None if value is None else float(value)


def as_int(value: Any) -> int:
    """An int, 0 when the file's cell is empty or not a number."""
    try:
        return int(value)
    except (TypeError, ValueError):
        return 0


def as_pairs(value: Any) -> list[list[str]]:
    """synword_pairs {'a': 'b'} -> [['a', 'b']], identity pairs dropped."""
    if isinstance(value, dict):
        return [[str(a), str(b)] for a, b in value.items() if a != b]
    if isinstance(value, (list, tuple)):
        return [[str(p[0]), str(p[1])] for p in value if len(p) == 2 and p[0] != p[1]]
    return []
