"""A run executes with the model settings it stored, read back checked: a snapshot is a
JSON column (another version, a hand edit, a restored backup), not trusted code."""
from __future__ import annotations

from evalcore.runner.plan import RunSpec
from evalcore.runner.start import store_run, run_in_foreground
from evalcore.store import queries
from tests.runner.conftest import dataset  # noqa: F401  (fixture)


def test_an_out_of_range_snapshot_fails_the_run_naming_the_setting(engine, settings, dataset):
    """With the plain constructor the run would go on with 0 attempts per call."""
    run_id = store_run(engine, RunSpec(dataset=dataset, model="local", rounds=1),
                       settings.models_path)
    config = queries.get_run(engine, run_id).config
    bad = {**config["models"]["local"], "max_attempts": 0}
    queries.update_run(engine, run_id, config={**config, "models": {"local": bad}})
    assert run_in_foreground(engine, run_id) == "failed"
    run = queries.get_run(engine, run_id)
    assert "max_attempts" in (run.error or "") and run.done == 0
