"""What exists so far, counted the way a new user reads it (Home's lines, `evalcore` CLI).

The dataset table also holds the attacked copy of every attack set, every generated
fairness suite and every imported bias benchmark (a run needs items to point at);
counting them as "datasets" turns one imported file into "10 dataset(s)". Here each is
counted as what it is, once: datasets + attack sets + fairness suites add up to the
table, and a suite is named as the Fairness page names it (`suite_kind`).
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from evalcore.perturb.counterfactual import SUITE_FORMAT
from evalcore.store.datasets import catalog_rows

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine

BIAS_TASKS = ("bias_choice", "bias_pair")
"""Task types of the bias benchmarks (BBQ, CBBQ, CrowS-Pairs): fairness suites too."""
_KIND_NAMES = {SUITE_FORMAT: "counterfactual", "bbq": "BBQ", "cbbq": "CBBQ",
               "crows_pairs": "CrowS-Pairs"}


def is_suite(dataset_format: str, task_type: str) -> bool:
    """A counterfactual suite or a bias benchmark: what a fairness run can analyse."""
    return dataset_format == SUITE_FORMAT or task_type in BIAS_TASKS


def suite_kind(dataset_format: str) -> str:
    """A fairness suite's kind in words ("counterfactual", "BBQ", "CrowS-Pairs")."""
    return _KIND_NAMES.get(dataset_format, dataset_format.upper())


@dataclass(frozen=True)
class Catalog:
    """Counts of what exists, each stored dataset counted once as what it is."""

    datasets: int = 0
    """Imported question sets (not attacked copies, not fairness suites)."""
    attack_sets: int = 0
    suites: dict[str, int] = field(default_factory=dict)
    """Fairness suites by kind (`suite_kind`): generated and imported bias benchmarks."""

    @property
    def fairness_suites(self) -> int:
        return sum(self.suites.values())


def catalog_counts(engine: Engine) -> Catalog:
    """What Home lists: datasets, attack sets, fairness suites (by kind), in one read."""
    derived, rows, attack_sets = catalog_rows(engine)
    own = [(fmt, task) for i, fmt, task in rows if int(i) not in derived]
    suites = Counter(suite_kind(fmt) for fmt, task in own if is_suite(fmt, task))
    return Catalog(datasets=len(own) - sum(suites.values()), attack_sets=attack_sets,
                   suites=dict(sorted(suites.items())))


def suites_line(catalog: Catalog) -> str:
    """'3 fairness suites (1 BBQ, 2 counterfactual)', 'no fairness suites'."""
    total = plural(catalog.fairness_suites, "fairness suite")
    if not catalog.suites:
        return total
    return f"{total} ({', '.join(f'{n} {kind}' for kind, n in catalog.suites.items())})"


def plural(n: int, word: str) -> str:
    """'1 dataset', '3 datasets', 'no datasets'."""
    return f"{n} {word}" if n == 1 else f"{n or 'no'} {word}s"
