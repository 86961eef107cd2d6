"""The kind registry: every kind of run has a page, a report and exports that work on a
stored run of that kind."""
from __future__ import annotations

import json

import pytest

from evalcore.errors import RunError
from evalcore.kinds import all_kinds, get_kind
from tests.conftest import REPO_ROOT


def test_every_kind_has_a_page_and_its_exports_name_the_run():
    for kind in all_kinds().values():
        assert (REPO_ROOT / kind.page).is_file(), kind.name
        assert all("{run}" in e.filename for e in kind.exports), kind.name
    with pytest.raises(RunError, match="known: stability, robustness, fairness"):
        get_kind("nope")


def test_stability_exports_come_from_the_stored_run(engine):
    from tests.fakes.stored_runs import seed_dataset, seed_run

    ds = seed_dataset(engine, "k", ["one?", "two?", "three?"])
    run_id = seed_run(engine, ds, {0: [1, 1], 1: [0, 1], 2: [0, None]}, 2)
    kind = get_kind("stability")
    report = json.loads(kind.exports[2].make(engine, run_id))
    assert report == json.loads(json.dumps(kind.report(engine, run_id), default=str))
    csv_zh = kind.exports[0].make(engine, run_id).decode("utf-8")
    assert csv_zh.count("\n") == report["distribution"]["total_questions"] + 1
