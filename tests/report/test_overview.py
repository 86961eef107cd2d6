"""Home's counts: one imported file is one dataset, whatever was derived from it."""
from __future__ import annotations

from pathlib import Path

from evalcore.report.overview import catalog_counts, plural

REPO = Path(__file__).resolve().parents[2]


def test_attacked_copies_and_suites_are_not_counted_as_datasets(engine):
    from evalcore import actions
    from evalcore.auth import local_actor
    from evalcore.dataset import import_dataset, list_datasets
    from evalcore.perturb.counterfactual import generate_suite
    from evalcore.runner.attack import create_attack_job

    assert catalog_counts(engine) == {"datasets": 0, "attack_sets": 0, "fairness_suites": 0}
    import_dataset(engine, REPO / "data" / "samples" / "mc_en.jsonl", name="mc",
                   mapping={"question": "question", "reference": "answer",
                            "choices": "choices", "task_type": "choice"})
    for level in ("char", "word"):
        create_attack_job(engine, dataset="mc", level=level, limit=2)
    actions.save_suite(local_actor(), engine, generate_suite("age", "en"), "fair-age")
    assert len(list_datasets(engine)) == 4  # the table holds them all (the old count)
    assert catalog_counts(engine) == {"datasets": 1, "attack_sets": 2, "fairness_suites": 1}


def test_plural_reads_as_english():
    assert [plural(n, "dataset") for n in (0, 1, 2)] == ["no datasets", "1 dataset",
                                                        "2 datasets"]
