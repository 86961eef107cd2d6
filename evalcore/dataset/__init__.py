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

import importlib
from typing import TYPE_CHECKING, Any

_HOMES = {
    "catalog": ("dataset_info", "delete_dataset", "get_dataset", "list_datasets", "load_items",
                "load_questions"),
    "checks": ("detect_language",),
    "formats": ("FORMATS", "FormatSpec", "attack_level", "detect_format", "list_formats"),
    "importer": ("import_dataset", "parse_dataset", "store_parsed"),
    "mapping": ("ColumnMapping", "suggest_mapping"),
    "readers": ("read_table",),
    "records": ("TASK_TYPES", "ParsedDataset", "Question", "TaskType"),
}
_MODULE_OF = {name: module for module, names in _HOMES.items() for name in names}

__all__ = [
    "FORMATS", "TASK_TYPES", "ColumnMapping", "FormatSpec", "ParsedDataset", "Question",
    "TaskType", "attack_level", "dataset_info", "delete_dataset", "detect_format",
    "detect_language", "get_dataset", "import_dataset", "list_datasets", "list_formats",
    "load_items", "load_questions", "parse_dataset", "read_table", "store_parsed",
    "suggest_mapping",
]


def __getattr__(name: str) -> Any:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value  # later lookups skip this function
    return value


if TYPE_CHECKING:  # for type checkers and editors; at run time __getattr__ does this
    from evalcore.dataset.catalog import (dataset_info, delete_dataset, get_dataset,
                                          list_datasets, load_items, load_questions)
    from evalcore.dataset.checks import detect_language
    from evalcore.dataset.formats import (FORMATS, FormatSpec, attack_level, detect_format,
                                          list_formats)
    from evalcore.dataset.importer import import_dataset, parse_dataset, store_parsed
    from evalcore.dataset.mapping import ColumnMapping, suggest_mapping
    from evalcore.dataset.readers import read_table
    from evalcore.dataset.records import TASK_TYPES, ParsedDataset, Question, TaskType
