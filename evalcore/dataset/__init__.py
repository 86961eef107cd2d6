"""Datasets: read files, recognise formats or apply a column mapping, store all or nothing.

    read_table(path | bytes, filename) -> DataFrame of str
    detect_format(columns) -> FormatSpec | None;  list_formats()
    suggest_mapping(columns) -> ColumnMapping | None
    parse_dataset(source, filename, format="auto", mapping=None) -> ParsedDataset
    import_dataset(engine, source, name=..., format=..., mapping=..., allow_duplicate=...)
    list_datasets / get_dataset / load_questions / load_items / delete_dataset
"""
from evalcore.dataset.catalog import (dataset_info, delete_dataset, get_dataset, list_datasets,
                                      load_items, load_questions)
from evalcore.dataset.checks import detect_language
from evalcore.dataset.formats import FORMATS, FormatSpec, attack_level, detect_format, list_formats
from evalcore.dataset.importer import import_dataset, parse_dataset, store_parsed
from evalcore.dataset.mapping import ColumnMapping, suggest_mapping
from evalcore.dataset.readers import read_table
from evalcore.dataset.records import TASK_TYPES, ParsedDataset, Question, TaskType

__all__ = [
    "FORMATS", "TASK_TYPES", "ColumnMapping", "FormatSpec", "ParsedDataset", "Question",
    "TaskType", "attack_level", "dataset_info", "delete_dataset", "detect_format",
    "detect_language", "get_dataset", "import_dataset", "list_datasets", "list_formats",
    "load_items", "load_questions", "parse_dataset", "read_table", "store_parsed",
    "suggest_mapping",
]
