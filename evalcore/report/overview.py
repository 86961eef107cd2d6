"""What exists so far, counted the way a new user reads it (Home's lines, `evalcore` CLI).

The dataset table also holds the attacked copy of every attack set and every generated
fairness suite (a run needs items to point at); counting them as "datasets" turns one
imported file into "10 dataset(s)". Here each is counted as what it is.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from evalcore.perturb.counterfactual import SUITE_FORMAT
from evalcore.store.datasets import catalog_rows

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine


def catalog_counts(engine: "Engine") -> dict[str, int]:
    """{datasets: imported question sets, attack_sets, fairness_suites}: attacked copies
    are counted as their attack sets, generated suites apart from datasets."""
    derived, formats, attack_sets = catalog_rows(engine)
    suites = sum(1 for i, fmt in formats if fmt == SUITE_FORMAT and int(i) not in derived)
    datasets = sum(1 for i, fmt in formats if fmt != SUITE_FORMAT and int(i) not in derived)
    return {"datasets": datasets, "attack_sets": attack_sets, "fairness_suites": suites}


def plural(n: int, word: str) -> str:
    """'1 dataset', '3 datasets', 'no datasets'."""
    return f"{n} {word}" if n == 1 else f"{n or 'no'} {word}s"
