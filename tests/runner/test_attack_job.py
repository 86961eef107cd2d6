"""An attack generation job ends with its progress at total, even when it takes less than
the second between progress writes (the page read "done, 0 / 10")."""
from __future__ import annotations

from evalcore.dataset import import_dataset
from evalcore.runner.attack import create_attack_job
from evalcore.runner.start import run_job_here
from evalcore.store.jobs import get_job


def test_a_short_generation_ends_at_total(engine) -> None:
    rows = "question,answer\n" + "".join(f"What is {k} + {k}?,{2 * k}\n" for k in range(10))
    import_dataset(engine, rows.encode(), filename="tiny.csv", name="tiny")
    job_id = create_attack_job(engine, dataset="tiny", level="char", seed=1,
                               params={"similarity": False})
    assert run_job_here(engine, job_id) == "done"
    job = get_job(engine, job_id)
    assert (job.done, job.total) == (10, 10)
