"""Datasets: read files, recognise formats or apply a column mapping, store all or nothing.

    read_table(path | bytes, filename) -> DataFrame of str
    detect_format(columns) -> FormatSpec | None;  list_formats()
    suggest_mapping(columns) -> ColumnMapping | None
    parse_dataset(source, filename, format="auto", mapping=None) -> ParsedDataset
    import_dataset(engine, source, name=..., format=..., mapping=..., allow_duplicate=...)
    list_datasets / get_dataset / load_questions / load_items / delete_dataset

Names load with their module on first use: a run needs only `records` (Question), and
importing the readers, formats and mapping with it would cost every CLI run ~10 ms.
"""
from __future__ import annotations

from evalcore import lazy_exports

_HOMES = {
    "answer_kind": ("TaskGuess", "guess_file_mapping", "guess_task"),
    "combine": ("parse_files", "suggested_name"),
    "catalog": ("dataset_info", "dataset_users", "delete_dataset", "get_dataset",
                "list_datasets", "load_items", "load_questions"),
    "language": ("detect_language", "majority_language"),
    "formats": ("FORMATS", "FormatSpec", "attack_level", "detect_format", "list_formats"),
    "importer": ("DuplicateContentError", "NameTakenError", "import_dataset", "parse_dataset",
                 "store_parsed"),
    "mapping": ("ColumnMapping", "MappingGuess", "guess_mapping", "suggest_mapping"),
    "readers": ("read_table",),
    "records": ("TASK_TYPES", "ParsedDataset", "Question", "TaskType"),
}
_EXPORTS = {name: f"{__name__}.{module}" for module, names in _HOMES.items() for name in names}

__all__ = sorted(_EXPORTS)
__getattr__ = lazy_exports(__name__, _EXPORTS)
