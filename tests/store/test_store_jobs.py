"""The job queue on SQLite and PostgreSQL: atomic claims, leases, fencing, release,
exhausted attempts, cancel; and the shared model budget."""
from __future__ import annotations

import threading
import time

import pytest

from evalcore.errors import RunError
from evalcore.store import jobs, queries
from evalcore.store.model_share import fair_shares, sync_share


def _run(store, item_ids: list[int]) -> int:
    run = queries.create_run(store, kind="stability", model="m", total=len(item_ids),
                             config={"item_ids": item_ids})
    return int(run.id)


def test_claims_are_exclusive_and_in_order(store):
    ids = [jobs.create_job(store, "attack", label=f"j{i}") for i in range(3)]
    first = jobs.claim_job(store, "w1")
    second = jobs.claim_job(store, "w2")
    assert (first.id, second.id) == (ids[0], ids[1])
    assert (first.status, first.owner, first.token, first.attempts) == ("running", "w1", 1, 1)
    assert jobs.claim_job(store, "w3", kinds=["run"]) is None  # kinds filter
    assert jobs.claim_job(store, "w3").id == ids[2]
    assert jobs.claim_job(store, "w4") is None


def test_concurrent_claims_never_share_a_job(store):
    """Eight threads race for five jobs: each job is claimed exactly once."""
    for i in range(5):
        jobs.create_job(store, "attack", label=f"j{i}")
    won: list[int] = []
    lock = threading.Lock()
    start = threading.Barrier(8)

    def claim(n: int) -> None:
        start.wait()
        while (job := jobs.claim_job(store, f"w{n}")) is not None:
            with lock:
                won.append(int(job.id))

    threads = [threading.Thread(target=claim, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert sorted(won) == sorted(set(won)) and len(won) == 5


def test_an_expired_lease_is_taken_over_and_the_old_holder_is_fenced_off(store, item_ids):
    run_id = _run(store, item_ids)
    job_id = jobs.create_job(store, "run", run_id=run_id)
    old = jobs.claim_job(store, "w1", lease_s=0.3)
    assert jobs.claim_job(store, "w2") is None  # the lease is alive
    time.sleep(0.5)
    new = jobs.claim_job(store, "w2")
    assert (new.id, new.owner, new.token, new.attempts) == (job_id, "w2", old.token + 1, 2)
    stale = jobs.Fence(job_id, old.token)
    row = {"run_id": run_id, "item_id": item_ids[0], "round": 1, "stage": "answer",
           "prompt": "p", "answer": "a"}
    with pytest.raises(jobs.LeaseLost):
        queries.record_calls_fenced(store, [row], fence=stale)
    with pytest.raises(jobs.LeaseLost):
        queries.flush_run(store, run_id, [row], fence=stale, done=1)
    with pytest.raises(jobs.LeaseLost):
        jobs.finish_job(store, stale, "done")
    assert queries.count_calls(store, run_id) == 0 and queries.get_run(store, run_id).done == 0
    fresh = jobs.Fence(job_id, new.token)
    assert queries.flush_run(store, run_id, [row], fence=fresh, done=1) is False
    assert queries.count_calls(store, run_id) == 1
    jobs.finish_job(store, fresh, "done", result={"ok": 1})
    done = jobs.get_job(store, job_id)
    assert (done.status, done.result, done.lease_expires_at) == ("done", {"ok": 1}, None)


def test_release_makes_a_job_claimable_at_once_without_costing_an_attempt(store, item_ids):
    run_id = _run(store, item_ids)
    job_id = jobs.create_job(store, "run", run_id=run_id)
    claimed = jobs.claim_job(store, "w1", lease_s=60)
    queries.update_run(store, run_id, status="running")
    jobs.release_job(store, jobs.Fence(job_id, claimed.token))
    assert queries.get_run(store, run_id).status == "queued"
    again = jobs.claim_job(store, "w2", lease_s=60)
    assert (again.id, again.attempts, again.token) == (job_id, 1, claimed.token + 1)


def test_a_job_whose_workers_keep_dying_is_failed_not_claimed_forever(store, item_ids):
    run_id = _run(store, item_ids)
    job_id = jobs.create_job(store, "run", run_id=run_id)
    for n in range(3):  # max_attempts claims, each worker "dies" (lease runs out)
        assert jobs.claim_job(store, f"w{n}", lease_s=0.05).id == job_id
        time.sleep(0.1)
    assert jobs.claim_job(store, "w9") is None
    job = jobs.get_job(store, job_id)
    assert job.status == "failed" and "requeue" in job.error
    assert queries.get_run(store, run_id).status == "failed"
    jobs.requeue_job(store, job_id)
    assert jobs.claim_job(store, "w9").attempts == 1


def test_cancel_stops_a_queued_job_at_once_and_flags_a_running_one(store, item_ids):
    run_id = _run(store, item_ids)
    queued = jobs.create_job(store, "run", run_id=run_id)
    assert jobs.cancel_job(store, queued) is True
    assert jobs.get_job(store, queued).status == "cancelled"
    assert queries.get_run(store, run_id).status == "cancelled"
    assert jobs.cancel_job(store, queued) is False  # already finished
    running = jobs.create_job(store, "attack")
    claimed = jobs.claim_job(store, "w1")
    jobs.cancel_job(store, running)
    assert jobs.renew(store, jobs.Fence(running, claimed.token)) is True
    with pytest.raises(RunError, match="unknown job kind"):
        jobs.create_job(store, "nope")


@pytest.mark.parametrize("capacity,wants,expected", [
    (8, {"a": 8, "b": 8}, {"a": 4, "b": 4}),
    (8, {"a": 8, "b": 2}, {"a": 6, "b": 2}),        # what b does not want goes to a
    (8, {"a": 8, "b": 8, "c": 8}, {"a": 3, "b": 3, "c": 2}),
    (2, {"a": 5, "b": 5, "c": 5}, {"a": 1, "b": 1, "c": 0}),
    (10, {"a": 0, "b": 3}, {"a": 0, "b": 3}),
])
def test_fair_shares(capacity, wants, expected):
    shares = fair_shares(capacity, wants)
    assert shares == expected
    assert sum(shares.values()) <= capacity
    assert all(shares[h] <= wants[h] for h in wants)


def test_budget_holders_share_a_model_and_never_exceed_it(store):
    assert sync_share(store, "m", "job1:answer", capacity=8, want=8, in_flight=0).allowed == 8
    # a second holder arrives: nothing is free until the first shrinks
    grant = sync_share(store, "m", "job2:answer", capacity=8, want=8, in_flight=0)
    assert grant == (0, 4)  # its share is 4: it syncs again soon
    # the first may start no new call beyond 4, but keeps its 6 in flight on record
    assert sync_share(store, "m", "job1:answer", capacity=8, want=8, in_flight=6).allowed == 4
    assert sync_share(store, "m", "job2:answer", capacity=8, want=8, in_flight=0).allowed == 2
    assert sync_share(store, "m", "job1:answer", capacity=8, want=8, in_flight=3).allowed == 4
    assert sync_share(store, "m", "job2:answer", capacity=8, want=8, in_flight=2).allowed == 4
    assert sync_share(store, "other", "job2:judge", capacity=3, want=3, in_flight=0).allowed == 3
    # a holder that stops syncing (dead worker) gives its slots back after its lease
    assert sync_share(store, "m", "job1:answer", capacity=8, want=8, in_flight=0,
                       lease_s=0.05).allowed == 4
    time.sleep(0.1)
    assert sync_share(store, "m", "job2:answer", capacity=8, want=8, in_flight=4).allowed == 8
