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


def test_a_registered_kind_is_listed_by_its_order_and_forgotten_again():
    from evalcore.kinds import kind_names, register, unregister

    stability = get_kind("stability")
    first = register(stability._replace(name="aaa-first", order=-1))
    try:
        assert kind_names()[:2] == ("aaa-first", "stability")
        assert get_kind("aaa-first") is first
    finally:
        unregister("aaa-first")
    assert "aaa-first" not in kind_names()
    with pytest.raises(RunError, match="unknown kind of run 'aaa-first'"):
        get_kind("aaa-first")


def test_threads_looking_kinds_up_at_once_all_see_every_kind():
    """The app's sessions and its warm-up thread may ask first at the same moment: none may
    see the registry half filled while another thread imports the kind modules."""
    import subprocess
    import sys

    code = ("import threading, evalcore.kinds as k\n"
            "seen, go = [], threading.Barrier(8)\n"
            "def look():\n    go.wait(); seen.append(k.kind_names())\n"
            "threads = [threading.Thread(target=look) for _ in range(8)]\n"
            "[t.start() for t in threads]; [t.join() for t in threads]\n"
            "print(sorted(set(seen)))")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT, check=True,
                         capture_output=True, text=True).stdout.strip()
    assert out == "[('stability', 'robustness', 'fairness')]"
