"""The review claim across processes, on SQLite and PostgreSQL: two reviewers in two
processes call next 200 times each and never hold one item both; a reviewer killed with
SIGKILL while holding an item loses it when the reservation lapses, and someone else
reviews it, once."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections import Counter

from evalcore.store import review_queues as rq
from tests.conftest import REPO_ROOT
from tests.fakes.review_sets import seed_attack_set
from tests.waiting import wait_for


def _reviewer(url: str, queue: int, name: str, count: str) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(REPO_ROOT))
    return subprocess.Popen([sys.executable, "-m", "tests.fakes.reviewer", url, str(queue),
                             name, count], cwd=REPO_ROOT, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def test_two_reviewer_processes_never_hold_one_item_both(store, store_url) -> None:
    set_id, _ = seed_attack_set(store, 400)
    queue = rq.create_queue(store, attack_set_id=set_id)
    procs = {name: _reviewer(store_url, queue, name, "200") for name in ("ann", "bob")}
    got = {}
    for name, proc in procs.items():
        out, err = proc.communicate(timeout=600)
        assert proc.returncode == 0, err
        got[name] = [int(line) for line in out.split()]
    assert len(got["ann"]) == len(got["bob"]) == 200  # "none" never came: 400 items
    assert not set(got["ann"]) & set(got["bob"])
    decided = Counter(d.queue_item_id for d in rq.decisions(store, queue))
    assert len(decided) == 400 and set(decided.values()) == {1}
    by = {d.queue_item_id: d.reviewer for d in rq.decisions(store, queue)}
    assert all(by[i] == name for name, items in got.items() for i in items)


def test_a_killed_reviewers_item_lapses_and_is_reviewed_once_by_another(store,
                                                                         store_url) -> None:
    set_id, _ = seed_attack_set(store, 5)
    queue = rq.create_queue(store, attack_set_id=set_id, reserve_s=2.0)
    killed = _reviewer(store_url, queue, "ann", "hold")
    line = killed.stdout.readline()  # type: ignore[union-attr]
    assert line.startswith("holding "), killed.communicate()[1]
    held = int(line.split()[1])
    os.kill(killed.pid, signal.SIGKILL)
    killed.wait(timeout=60)

    def bob_reviews() -> bool:
        item = rq.next_item(store, queue, "bob")
        if item is not None:
            rq.submit(store, queue, item, "bob", "reject")
        return len(rq.decisions(store, queue)) == 5

    wait_for(bob_reviews, 120, "the killed reviewer's item to return to the queue")
    decisions = [d for d in rq.decisions(store, queue) if d.queue_item_id == held]
    assert [(d.reviewer, d.verdict) for d in decisions] == [("bob", "reject")]
