"""Export an attack set as the method's attacked CSV, plus the checks and the review status.

Columns: the source dataset's original columns (as imported), then attacked_question,
attack_num, synword_pairs (word level only, the method's dict repr), similarity, flags
(";"-separated) and review_status; when a word attack changed options, also
attacked_choice0... (each option's attacked text under its original column's number,
before attack_num) and synword_where after synword_pairs ({word: "question, choice2"}:
where each swap was). Original cells come from the item's kept columns
(`meta`) and, for the columns a format consumed (question, answer, options), from the
table `_CONSUMED` below; a dataset imported with a column mapping uses its mapping. Any
other dataset gets generic question / reference / choices columns. So an exported
Math23K set re-imports as `math23k_attacked`.

UTF-8 with BOM (Excel and Chinese), and text cells that a spreadsheet would run as a
formula are neutralised (`evalcore.report.export.safe_cell`).
"""
from __future__ import annotations

import csv
import json
from os import PathLike
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional, TextIO, Union

from evalcore.perturb.review import list_attack_items
from evalcore.perturb.sets import get_attack_set
from evalcore.report.export import safe_cell
from evalcore.store.datasets import dataset_with_items
from evalcore.store.reviews import item_choices

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine

    from evalcore.store.tables import Dataset, Item

ATTACK_COLUMNS = ("attacked_question", "attack_num", "synword_pairs", "similarity", "flags",
                  "review_status")

_CONSUMED: dict[str, dict[str, Any]] = {
    "math23k": {"question": "question", "reference": "answer"},
    "translation": {"question": "english", "reference": "chinese"},
    "codah": {"question": "Question prompt", "choices": "choice{}", "reference": "answer"},
    "truthfulqa_single": {"question": "question", "choices": "choice{}", "reference": "answer"},
    "truthfulqa_multi": {"question": "question", "choices": "choice{}", "flags": "answer{}"},
    "flipkart": {"question": "Summary", "sentiment": ("Sentiment", "Label")},
}
"""Base format -> which original column held the question, reference and options."""


def _original_cells(item: "Item", dataset: "Dataset") -> dict[str, Any]:
    fmt = dataset.format.removesuffix("_attacked")
    meta = item.meta or {}
    cells: dict[str, Any] = {k: v for k, v in meta.items() if not isinstance(v, (dict, list))}
    spec = _CONSUMED.get(fmt)
    mapping = (dataset.meta or {}).get("mapping")
    base = 0  # what a mapped file's numeric option references count from
    if spec is None and mapping:
        question_cols = mapping.get("question")
        if isinstance(question_cols, str):
            spec = {"question": question_cols, "reference": mapping.get("reference")}
            cells.update(_mapped_options(item, mapping))
            base = int(mapping.get("index_base") or 0) if mapping.get("choices") else 0
    if spec is None:
        return {"question": item.question, "reference": item.reference,
                "choices": json.dumps(item.choices, ensure_ascii=False) if item.choices else ""}
    cells[spec["question"]] = item.question
    positions = meta.get("original_option_index") or list(range(len(item.choices)))
    if "choices" in spec:
        for position, text in zip(positions, item.choices):
            cells[spec["choices"].format(position)] = text
    if spec.get("reference"):
        reference = item.reference
        if ("choices" in spec and reference is not None and reference.isdigit()
                and int(reference) < len(positions)):
            reference = str(positions[int(reference)])
        elif base and reference is not None and reference.isdigit():
            reference = str(int(reference) + base)
        cells[spec["reference"]] = reference
    if "flags" in spec and item.reference:
        for position, flag in zip(positions, json.loads(item.reference)):
            cells[spec["flags"].format(position)] = flag
    if "sentiment" in spec and item.reference:
        word_col, label_col = spec["sentiment"]
        cells[word_col] = item.reference
        cells[label_col] = 1 if item.reference == "positive" else 0
    return cells


def _mapped_options(item: "Item", mapping: dict[str, Any]) -> dict[str, Any]:
    """The option cells of a dataset imported with a column mapping, as its file held them
    (one column: a JSON list or separated text; several: one option each), so the export
    re-imports with the same mapping (the options column was left empty)."""
    options, choices = mapping.get("choices"), list(item.choices or [])
    if not options or not choices:
        return {}
    if isinstance(options, str):
        separator = mapping.get("choices_separator")
        return {options: separator.join(choices) if separator
                else json.dumps(choices, ensure_ascii=False)}
    return dict(zip(options, choices))


def _attacked_choices(engine: "Engine", items: list[Any], clean: dict[int, "Item"]
                      ) -> dict[int, list[str]]:
    """attack item id -> its attacked options, when any item's options were attacked."""
    found = item_choices(engine, [int(i.attacked_item_id) for i in items
                                  if i.attacked_item_id is not None])
    out = {int(i.id): found.get(int(i.attacked_item_id), []) for i in items
           if i.attacked_item_id is not None}
    changed = any(out[int(i.id)] != list(clean[i.source_item_id].choices or [])
                  for i in items if int(i.id) in out)
    return out if changed else {}


def _positions(item: "Item") -> list[int]:
    """Each option's column number in the source file (options may have been shuffled)."""
    return [int(p) for p in ((item.meta or {}).get("original_option_index")
                             or range(len(item.choices or [])))]


def _where(pairs: list[Any], positions: list[int]) -> dict[str, str]:
    """synword_pairs' words -> where each was swapped, options named by their original
    column ("question, choice2")."""
    out: dict[str, str] = {}
    for pair in pairs or []:
        places = str(pair[2]).split(", ") if len(pair) == 3 else ["question"]
        named = [f"choice{positions[int(w[7:])]}" if w.startswith("option ")
                 and w[7:].isdigit() and int(w[7:]) < len(positions) else w for w in places]
        out[str(pair[0])] = ", ".join(named)
    return out


def _columns(dataset: "Dataset", sample: dict[str, Any]) -> list[str]:
    columns = [c for c in (dataset.meta or {}).get("columns", []) if c not in ATTACK_COLUMNS]
    return columns or list(sample)


def write_attack_set_csv(engine: "Engine", attack_set_id: int,
                         out: Union[TextIO, str, PathLike[str]],
                         status: Optional[str] = None) -> int:
    """Write the set's CSV (optionally only items of one review status); returns rows written."""
    attack_set = get_attack_set(engine, attack_set_id)
    items = list_attack_items(engine, int(attack_set.id), status=status)
    source, clean = dataset_with_items(engine, int(attack_set.source_dataset_id),
                                       [i.source_item_id for i in items])
    assert source is not None
    attack_cols = [c for c in ATTACK_COLUMNS
                   if c != "synword_pairs" or attack_set.level == "word"]
    sample = _original_cells(clean[items[0].source_item_id], source) if items else {}
    header = _columns(source, sample) + attack_cols
    attacked_choices = _attacked_choices(engine, items, clean)
    if attacked_choices:
        width = 1 + max((max(_positions(i), default=-1) for i in clean.values()), default=-1)
        at = header.index("attack_num")
        header[at:at] = [f"attacked_choice{n}" for n in range(width)]
        header.insert(header.index("synword_pairs") + 1, "synword_where")

    def write(fh: TextIO) -> int:
        writer = csv.writer(fh)
        writer.writerow(header)
        for item in items:
            cells = _original_cells(clean[item.source_item_id], source)
            cells.update({"attacked_question": item.attacked, "attack_num": item.attack_num,
                          "synword_pairs": repr({p[0]: p[1] for p in item.pairs}),
                          "similarity": "" if item.similarity is None
                          else round(item.similarity, 4),
                          "flags": ";".join(item.flags or []), "review_status": item.status})
            if attacked_choices:
                positions = _positions(clean[item.source_item_id])
                for position, text in zip(positions, attacked_choices.get(int(item.id), [])):
                    cells[f"attacked_choice{position}"] = text
                cells["synword_where"] = repr(_where(item.pairs, positions))
            writer.writerow([safe_cell("" if cells.get(c) is None else cells.get(c))
                             for c in header])
        return len(items)

    if isinstance(out, (str, PathLike)):
        with Path(out).open("w", encoding="utf-8-sig", newline="") as fh:
            return write(fh)
    out.write("\ufeff")
    return write(out)
