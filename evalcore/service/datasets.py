"""Datasets: import, save a suite, delete (checked actions), and a dataset's items."""
from __future__ import annotations

from evalcore.actions.datasets import (
    delete_dataset,
    delete_dataset_and_runs,
    import_dataset,
    save_suite,
    store_parsed,
)
from evalcore.store.run_items import list_items

__all__ = ["delete_dataset", "delete_dataset_and_runs", "import_dataset", "list_items",
           "save_suite", "store_parsed"]
