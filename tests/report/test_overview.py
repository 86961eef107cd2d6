"""Home's counts: one imported file is one dataset, whatever was derived from it; every
stored dataset is counted once, and suites by the kind the Fairness page names."""
from __future__ import annotations

from pathlib import Path

from evalcore.report.overview import Catalog, catalog_counts, plural, suite_kind, suites_line

REPO = Path(__file__).resolve().parents[2]
BBQ = REPO / "tests" / "fixtures" / "bbq_religion_tiny.jsonl"


def test_attacked_copies_and_suites_are_not_counted_as_datasets(engine):
    from evalcore import actions
    from evalcore.auth import local_actor
    from evalcore.dataset import import_dataset, list_datasets
    from evalcore.perturb.counterfactual import generate_suite
    from evalcore.runner.attack import create_attack_job

    assert catalog_counts(engine) == Catalog()
    import_dataset(engine, REPO / "data" / "samples" / "mc_en.jsonl", name="mc",
                   mapping={"question": "question", "reference": "answer",
                            "choices": "choices", "task_type": "choice"})
    for level in ("char", "word"):
        create_attack_job(engine, dataset="mc", level=level, limit=2)
    actions.save_suite(local_actor(), engine, generate_suite("age", "en"), "fair-age")
    assert len(list_datasets(engine)) == 4  # the table holds them all (the old count)
    assert catalog_counts(engine) == Catalog(datasets=1, attack_sets=2,
                                             suites={"counterfactual": 1})


def test_bias_benchmarks_are_fairness_suites_not_datasets(engine):
    """First-day walk: Home said "2 fairness suites" (the generated ones) while the Fairness
    page offered BBQ / CBBQ / CrowS suites too, counted among the datasets instead."""
    from evalcore import actions
    from evalcore.auth import local_actor
    from evalcore.dataset import import_dataset, list_datasets
    from evalcore.perturb.counterfactual import generate_suite
    from evalcore.report.fairness import is_fairness_dataset

    import_dataset(engine, REPO / "data" / "samples" / "mc_en.jsonl", name="mc",
                   mapping={"question": "question", "reference": "answer",
                            "choices": "choices", "task_type": "choice"})
    import_dataset(engine, REPO / "data" / "samples" / "crows_pairs_en.csv", name="crows")
    for axis in ("age", "income"):
        actions.save_suite(local_actor(), engine, generate_suite(axis, "en"), f"fair-{axis}")
    have = catalog_counts(engine)
    assert have == Catalog(datasets=1, suites={"CrowS-Pairs": 1, "counterfactual": 2})
    every = list_datasets(engine)
    assert have.datasets + have.fairness_suites == len(every)
    assert have.fairness_suites == sum(map(is_fairness_dataset, every))  # the Fairness page's
    assert suites_line(have) == "3 fairness suites (1 CrowS-Pairs, 2 counterfactual)"


def test_suite_kinds_read_as_on_the_fairness_page():
    assert [suite_kind(f) for f in ("fairness_suite", "bbq", "cbbq", "crows_pairs")] == [
        "counterfactual", "BBQ", "CBBQ", "CrowS-Pairs"]
    assert suites_line(Catalog()) == "no fairness suites"


def test_plural_reads_as_english():
    assert [plural(n, "dataset") for n in (0, 1, 2)] == ["no datasets", "1 dataset",
                                                        "2 datasets"]
