"""`runs show` of a queued run says why it has not started, in the page's words: waiting
behind busy workers (their leases' heartbeat in the database), or no worker at all."""
from __future__ import annotations

import json
from datetime import timedelta

from evalcore import cli


def test_runs_show_says_a_queued_run_waits_for_a_busy_worker(settings, engine, capsys):
    from evalcore.store import jobs, queries
    from evalcore.store.tables import utcnow

    run_id = int(queries.create_run(engine, kind="stability", rounds=1, config={},
                                    created_at=utcnow() - timedelta(minutes=5)).id)
    busy = jobs.create_job(engine, "attack", label="a")
    jobs.claim_job(engine, "w1", job_id=busy, lease_s=600)
    assert cli.main(["runs", "show", str(run_id), "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["waiting"].startswith("waiting: worker busy with 1 job;")
    jobs.expire_lease(engine, busy)
    assert cli.main(["runs", "show", str(run_id)]) == 0
    assert "queued (no worker)" in capsys.readouterr().out
