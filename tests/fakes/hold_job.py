"""A worker frozen mid-transaction, for the partition tests: it claims a job, renews its
lease in an open transaction (`jobs.hold` locks the job row) and waits there; on a line
on stdin it writes once more in that transaction and commits.

    python -m tests.fakes.hold_job URL JOB_ID

Prints `holding TOKEN` once the row is locked, then `written` or `refused: <error>`.
The engine is `store.db.make_engine`'s, so its sessions are configured as a worker's.
"""
from __future__ import annotations

import sys

from evalcore.store.db import make_engine, transaction
from evalcore.store.jobs import Fence, claim_job, hold


def main(url: str, job_id: int) -> int:
    engine = make_engine(url, migrate=False)
    job = claim_job(engine, "frozen", job_id=job_id)
    if job is None:
        print(f"job {job_id} not claimable", flush=True)
        return 1
    fence = Fence(job_id, int(job.token))
    try:
        with transaction(engine) as conn:
            hold(conn, fence)
            print(f"holding {job.token}", flush=True)
            sys.stdin.readline()
            hold(conn, fence, done=1)
    except Exception as exc:  # noqa: BLE001 - what the test asserts on
        print(f"refused: {type(exc).__name__}: {str(exc).splitlines()[0]}", flush=True)
        return 0
    print("written", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1], int(sys.argv[2])))
