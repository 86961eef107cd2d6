"""Review queues in the store: which items a queue takes, and the claim that hands them
out (one holder at a time, the held item again on "next", a lapsed hold returned, never
an item the reviewer touched, a second review by someone else), on SQLite and PostgreSQL."""
from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import update

from evalcore.store import review_queues as rq
from evalcore.store.db import transaction
from evalcore.store.tables import ReviewQueueItem
from evalcore.store.types import utcnow
from tests.fakes.review_sets import seed_attack_set

QI = ReviewQueueItem.__table__


def _lapse(engine, item_id: int) -> None:  # type: ignore[no-untyped-def]
    """End a hold as the clock would: its end now lies behind."""
    with transaction(engine) as conn:
        conn.execute(update(QI).where(QI.c.id == item_id).values(
            held_until=utcnow() - timedelta(seconds=1)))


def _refs(engine, queue_id: int) -> list[int]:  # type: ignore[no-untyped-def]
    return [int(i.attack_item_id) for i in rq.queue_items(engine, queue_id)]


def test_a_queue_takes_all_flagged_unflagged_or_a_seeded_sample(store) -> None:
    set_id, ids = seed_attack_set(store, 10, flagged=[1, 4, 7])
    assert _refs(store, rq.create_queue(store, attack_set_id=set_id)) == ids
    assert _refs(store, rq.create_queue(store, attack_set_id=set_id, items="flagged")) == [
        ids[1], ids[4], ids[7]]
    unflagged = _refs(store, rq.create_queue(store, attack_set_id=set_id, items="unflagged"))
    assert unflagged == [i for k, i in enumerate(ids) if k not in (1, 4, 7)]
    first = _refs(store, rq.create_queue(store, attack_set_id=set_id, sample=4, seed=3))
    again = _refs(store, rq.create_queue(store, attack_set_id=set_id, sample=4, seed=3))
    assert first == again and len(set(first)) == 4 and set(first) <= set(ids)


def test_the_double_share_picks_that_many_items_for_a_second_review(store) -> None:
    set_id, _ = seed_attack_set(store, 10)
    for share, twice in ((0.0, 0), (0.5, 5), (1.0, 10)):
        queue = rq.create_queue(store, attack_set_id=set_id, double_share=share, seed=2)
        assert sum(i.needed == 2 for i in rq.queue_items(store, queue)) == twice


def test_a_queue_without_items_or_source_is_refused_with_the_reason(store) -> None:
    set_id, _ = seed_attack_set(store, 3)
    with pytest.raises(rq.ReviewQueueError, match="no flagged items"):
        rq.create_queue(store, attack_set_id=set_id, items="flagged")
    with pytest.raises(rq.ReviewQueueError, match="attack set 99 not found"):
        rq.create_queue(store, attack_set_id=99)
    with pytest.raises(rq.ReviewQueueError, match="one source"):
        rq.create_queue(store)
    with pytest.raises(rq.ReviewQueueError, match="0-100%"):
        rq.create_queue(store, attack_set_id=set_id, double_share=1.5)


def test_next_holds_one_item_per_reviewer_and_returns_it_again(store) -> None:
    set_id, _ = seed_attack_set(store, 5)
    queue = rq.create_queue(store, attack_set_id=set_id)
    ann = rq.next_item(store, queue, "ann")
    assert rq.next_item(store, queue, "ann") == ann
    bob = rq.next_item(store, queue, "bob")
    assert bob not in (None, ann)
    assert rq.held_items(store, queue) == {ann: "ann", bob: "bob"}
    with pytest.raises(rq.ReviewQueueError, match="reserved by ann"):
        rq.submit(store, queue, ann, "bob", "approve")


def test_a_lapsed_hold_returns_to_the_queue_and_the_holder_may_still_decide(store) -> None:
    set_id, _ = seed_attack_set(store, 2)
    queue = rq.create_queue(store, attack_set_id=set_id)
    first = rq.next_item(store, queue, "ann")
    _lapse(store, first)
    assert rq.next_item(store, queue, "bob") == first
    with pytest.raises(rq.ReviewQueueError, match="reserved by bob"):
        rq.submit(store, queue, first, "ann", "approve")
    _lapse(store, first)
    rq.submit(store, queue, first, "ann", "approve")  # nobody holds it now: ann's verdict counts
    assert rq.next_item(store, queue, "bob") != first


def test_a_reviewer_never_gets_an_item_they_decided_or_skipped(store) -> None:
    set_id, _ = seed_attack_set(store, 3)
    queue = rq.create_queue(store, attack_set_id=set_id)
    seen = []
    while (item := rq.next_item(store, queue, "ann")) is not None:
        seen.append(item)
        (rq.skip if len(seen) == 2 else rq.submit)(store, queue, item, "ann",
                                                   *(() if len(seen) == 2 else ("reject",)))
    assert len(seen) == len(set(seen)) == 3
    assert rq.next_item(store, queue, "bob") == seen[1]  # the skipped one goes to others


def test_a_second_review_goes_to_another_reviewer_blind(store) -> None:
    set_id, _ = seed_attack_set(store, 2)
    queue = rq.create_queue(store, attack_set_id=set_id, double_share=1.0)
    first = rq.next_item(store, queue, "ann")
    rq.submit(store, queue, first, "ann", "approve")
    assert rq.next_item(store, queue, "ann") != first
    assert rq.next_item(store, queue, "bob") == first
    rq.submit(store, queue, first, "bob", "reject")
    assert rq.next_item(store, queue, "cat") != first  # it has its two reviews
    with pytest.raises(rq.ReviewQueueError, match="already"):
        rq.submit(store, queue, first, "cat", "approve")
    assert sorted((d.reviewer, d.verdict) for d in rq.decisions(store, queue)) == [
        ("ann", "approve"), ("bob", "reject")]


def test_undo_takes_back_the_latest_decision_and_holds_the_item_again(store) -> None:
    set_id, _ = seed_attack_set(store, 3)
    queue = rq.create_queue(store, attack_set_id=set_id)
    first = rq.next_item(store, queue, "ann")
    rq.submit(store, queue, first, "ann", "reject", question="edited", options={1: "nope"})
    [kept] = rq.decisions(store, queue)
    assert (kept.question, kept.options) == ("edited", {"1": "nope"})
    assert rq.next_item(store, queue, "ann") != first
    assert rq.undo(store, queue, "ann") == first
    assert rq.decisions(store, queue) == []
    assert rq.next_item(store, queue, "ann") == first
    assert rq.held_items(store, queue) == {first: "ann"}  # the other hold was given back
    with pytest.raises(rq.ReviewQueueError, match="one of approve, reject"):
        rq.submit(store, queue, first, "ann", "right")


def test_an_adjudication_sits_beside_the_decisions_and_freezes_them(store) -> None:
    set_id, _ = seed_attack_set(store, 1)
    queue = rq.create_queue(store, attack_set_id=set_id, double_share=1.0)
    item = rq.next_item(store, queue, "ann")
    rq.submit(store, queue, item, "ann", "approve")
    rq.submit(store, queue, rq.next_item(store, queue, "bob"), "bob", "reject")
    rq.adjudicate(store, queue, item, "lead", "reject", note="swap changes the sense")
    rq.adjudicate(store, queue, item, "lead", "approve")
    assert rq.adjudications(store, queue)[item].verdict == "approve"
    assert len(rq.decisions(store, queue)) == 2
    with pytest.raises(rq.ReviewQueueError, match="adjudicated"):
        rq.undo(store, queue, "bob")


def test_a_run_queue_takes_judged_answers_sampled_in_each_verdict_share(store) -> None:
    from tests.fakes.stored_runs import seed_dataset, seed_run

    dataset = seed_dataset(store, "ds", [f"{i} + 0" for i in range(20)])
    run = seed_run(store, dataset, {i: [1 if i < 15 else 0] for i in range(20)}, 1)
    whole = rq.create_queue(store, run_id=run)
    assert len(rq.queue_items(store, whole)) == 20
    queue = rq.create_queue(store, run_id=run, sample=8, seed=5)
    from evalcore.store import queries

    correct = {c.id: c.correct for c in queries.run_calls(store, run)}
    picked = [correct[i.call_id] for i in rq.queue_items(store, queue)]
    assert (picked.count(True), picked.count(False)) == (6, 2)
    with pytest.raises(rq.ReviewQueueError, match="right, wrong"):
        rq.submit(store, queue, rq.next_item(store, queue, "ann"), "ann", "approve")
