"""Deleting runs and datasets: everything that belongs to them goes, and what others
depend on is refused with a message that says what to do."""
from __future__ import annotations

import pytest

from evalcore.dataset import delete_dataset
from evalcore.errors import EvalcoreError
from evalcore.runner.plan import RunSpec
from evalcore.runner.start import store_run, run_in_foreground
from evalcore.store import jobs, queries
from tests.runner.conftest import add_model

pytestmark = pytest.mark.integration


def test_a_run_is_deleted_with_its_calls_and_jobs_but_not_while_it_runs(engine, settings,
                                                                          dataset, server):
    add_model(settings, server)
    run_id = store_run(engine, RunSpec(dataset=dataset, model="fake", rounds=2),
                       settings.models_path)
    job = jobs.claim_job(engine, "elsewhere", lease_s=60)
    with pytest.raises(EvalcoreError, match="being executed by elsewhere; cancel it first"):
        queries.delete_run(engine, run_id)
    jobs.expire_lease(engine, int(job.id))
    assert run_in_foreground(engine, run_id) == "done"
    with pytest.raises(EvalcoreError, match=r"used by 1 run\(s\)"):
        delete_dataset(engine, dataset)
    queries.delete_run(engine, run_id)
    assert queries.count_calls(engine, run_id) == 0 and jobs.list_jobs(engine) == []
    with pytest.raises(EvalcoreError, match="not found"):
        queries.get_run(engine, run_id)
    assert delete_dataset(engine, dataset).name == dataset


def test_a_dataset_with_attack_sets_is_refused_by_name(engine, dataset):
    from evalcore.perturb.generate import create_attack_set

    # the set as a queued generation leaves it (no item yet): what a delete must respect,
    # without loading the attack's language data (3-6 s of CPU in a new process)
    set_id = create_attack_set(engine, dataset=dataset, level="char", limit=2)
    with pytest.raises(EvalcoreError, match=f"attack set.*#{set_id}.*delete them first"):
        delete_dataset(engine, dataset)
