"""The review history on SQLite and PostgreSQL: two reviewers racing for one item leave
one winner and exactly one event; the history survives the item's later changes."""
from __future__ import annotations

import threading

from evalcore.perturb.review import (ReviewConflictError, approve, list_attack_items, reject,
                                     review_log, set_review)
from evalcore.perturb.generate import make_attack_set
from evalcore.perturb.sets import delete_attack_set
from tests.perturb.attack_set_helpers import fake_engine, write_math_csv  # noqa: F401


def test_a_race_leaves_one_winner_and_one_event(store, fake_engine, tmp_path):
    from evalcore.dataset import import_dataset

    import_dataset(store, write_math_csv(tmp_path / "apples.csv"), name="apples")
    attack_set = make_attack_set(store, dataset="apples", level="word")
    item = list_attack_items(store, attack_set.id)[0]
    barrier = threading.Barrier(2)
    outcomes: list[str] = []

    def review(name: str, status: str) -> None:
        barrier.wait()
        try:
            set_review(store, item.id, status, reviewer=name, expected_status="pending")
            outcomes.append(name)
        except ReviewConflictError:
            outcomes.append("conflict")

    threads = [threading.Thread(target=review, args=a)
               for a in (("ann", "approved"), ("bob", "rejected"))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    winner = next(o for o in outcomes if o != "conflict")
    assert sorted(outcomes) == sorted([winner, "conflict"])
    assert [(e["reviewer"], e["previous_status"]) for e in review_log(store, attack_set.id)] == [
        (winner, "pending")]

    approve(store, item.id, reviewer="cy")
    reject(store, item.id, reviewer="dee", note="on second thought")
    log = review_log(store, attack_set.id)
    assert [e["reviewer"] for e in log] == ["dee", "cy", winner]
    assert [e["status"] for e in log][:2] == ["rejected", "approved"]
    delete_attack_set(store, attack_set.id)
    assert review_log(store, attack_set.id) == []
