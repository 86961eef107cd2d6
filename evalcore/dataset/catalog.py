"""Look up, load and delete stored datasets.

Deleting refuses while runs reference the dataset: runs and their calls are the
evaluation record, so they are never removed as a side effect of tidying datasets.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional, Union

from evalcore.dataset.numbering import question_label
from evalcore.dataset.records import Question
from evalcore.error_text import shown, shown_list
from evalcore.errors import DatasetError
from evalcore.store import datasets
from evalcore.store.db import reading, transaction
from evalcore.values import validated

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine
    from sqlalchemy.engine import Connection

    from evalcore.store.tables import Dataset, Item


def list_datasets(engine: "Engine") -> list["Dataset"]:
    """Every stored dataset, oldest first."""
    return datasets.list_datasets(engine)


def _find(session: "Connection", name_or_id: Union[str, int]) -> "Dataset":
    found = datasets.find_dataset(session, name_or_id)
    if found is None:
        names = datasets.dataset_names(session)

        known = shown_list(names) if names else "none yet"
        raise DatasetError(f"no dataset {shown(name_or_id)}; known datasets: {known} "
                           "(import one with `datasets import PATH`)")
    return found


def get_dataset(engine: "Engine", name_or_id: Union[str, int]) -> "Dataset":
    """A dataset by name, or by id (an int, or digits when no dataset has that name)."""
    with reading(engine) as conn:
        return _find(conn, name_or_id)


def load_items(engine: "Engine", dataset_id: int, limit: Optional[int] = None) -> list["Item"]:
    """The stored items of a dataset in file order (rows carry their database ids)."""
    return datasets.load_items(engine, dataset_id, limit)


def load_questions(engine: "Engine", dataset_id: int,
                   limit: Optional[int] = None) -> list[Question]:
    """The questions of a dataset in file order, as handed to prompts and scorers."""
    return [validated(Question, item, fail=lambda why, item=item: DatasetError(  # stored rows
        f"dataset {dataset_id}: stored item {item.id} ({question_label(item.idx)}) is not a "
        f"valid question ({why}); import the file again"))
        for item in load_items(engine, dataset_id, limit)]


def dataset_users(engine: "Engine", name_or_id: Union[str, int]) -> dict[str, Any]:
    """What keeps a dataset from being deleted: {"attack_sets": [(id, name)], "runs": [id]}
    (the page lists them and offers the way out)."""
    with reading(engine) as session:
        sets, run_ids = datasets.dataset_users(session, int(_find(session, name_or_id).id))
    return {"attack_sets": [(int(i), str(n)) for i, n in sets], "runs": run_ids}


def delete_dataset(engine: "Engine", name_or_id: Union[str, int]) -> "Dataset":
    """Delete a dataset and its items; refuses (DatasetError) while runs reference it."""
    with transaction(engine) as session:
        dataset = _find(session, name_or_id)
        sets, run_ids = datasets.dataset_users(session, int(dataset.id))
        if sets:
            shown = ", ".join(f"#{i} {n}" for i, n in sets[:10])
            raise DatasetError(f"dataset '{dataset.name}' has {len(sets)} attack set(s) "
                               f"({shown}); delete them first (Attacks page, or "
                               "`python -m evalcore attacks delete ID`)")
        if run_ids:
            shown = ", ".join(str(i) for i in run_ids[:10]) + (" ..." if len(run_ids) > 10 else "")
            raise DatasetError(f"dataset '{dataset.name}' is used by {len(run_ids)} run(s) "
                               f"(ids {shown}); delete those runs first - their results "
                               "would lose their questions")
        datasets.delete_dataset_rows(session, int(dataset.id))
    return dataset


def dataset_info(dataset: "Dataset") -> dict[str, Any]:
    """A JSON-ready summary of a dataset (for the CLI and the page)."""
    return {"id": dataset.id, "name": dataset.name, "format": dataset.format,
            "task_type": dataset.task_type, "language": dataset.language,
            "items": dataset.item_count, "source_file": dataset.source_file,
            "sha256": dataset.sha256, "created_at": dataset.created_at.isoformat(),
            "attack_level": (dataset.meta or {}).get("attack_level"),
            "repairs": (dataset.meta or {}).get("repairs", []),
            "warnings": (dataset.meta or {}).get("warnings", []),
            "guessed_mapping": guessed_mapping(dataset.meta or {})}


def guessed_mapping(meta: dict[str, Any]) -> Optional[str]:
    """Which columns an import guessed from their names ("question <- 'q', reference <- 'a'"),
    or None when a format recognised the file or the user gave the mapping."""
    if not meta.get("mapping_guessed"):
        return None
    from evalcore.dataset.mapping import ColumnMapping, MappingGuess

    return MappingGuess(mapping=validated(ColumnMapping, meta["mapping"])).describe()
