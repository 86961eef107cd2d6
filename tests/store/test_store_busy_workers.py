"""Busy workers seen through their leases' heartbeat (store.jobs.busy_workers), and the
line a queued run shows (runner.start.waiting_text), on SQLite and PostgreSQL."""
from __future__ import annotations

from datetime import timedelta

from evalcore.runner.start import NO_WORKER, is_stale, waiting_text
from evalcore.store import jobs, queries
from evalcore.store.tables import utcnow


def test_busy_workers_count_only_live_leases(store) -> None:
    assert jobs.busy_workers(store) == {}
    ids = [jobs.create_job(store, "attack", label=str(n)) for n in range(4)]
    for job_id, owner in zip(ids, ("w1", "w1", "w2")):
        assert jobs.claim_job(store, owner, job_id=job_id, lease_s=600) is not None
    assert jobs.busy_workers(store) == {"w1": 2, "w2": 1}
    jobs.expire_lease(store, ids[2])  # w2 died
    assert jobs.busy_workers(store) == {"w1": 2}


def test_a_queued_run_waits_for_busy_workers_and_is_stale_without_any(store) -> None:
    old = utcnow() - timedelta(minutes=5)
    run = queries.create_run(store, kind="stability", rounds=1, config={}, created_at=old)
    assert is_stale(run) and not is_stale(run, workers_busy=True)
    assert waiting_text(store, run).startswith(NO_WORKER)
    busy = jobs.create_job(store, "attack", label="a")
    jobs.claim_job(store, "w1", job_id=busy, lease_s=600)
    assert waiting_text(store, run).startswith("waiting: worker busy with 1 job;")
    other = jobs.create_job(store, "attack", label="b")
    jobs.claim_job(store, "w2", job_id=other, lease_s=600)
    assert waiting_text(store, run).startswith("waiting: 2 workers busy with 2 jobs;")
    fresh = queries.create_run(store, kind="stability", rounds=1, config={})
    jobs.expire_lease(store, busy)
    jobs.expire_lease(store, other)
    assert waiting_text(store, fresh).startswith("waiting for a worker")
    done = queries.create_run(store, kind="stability", rounds=1, config={}, status="done")
    assert waiting_text(store, done) is None
