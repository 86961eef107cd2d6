"""SIGTERM on a foreground CLI run (a CI timeout, `docker stop`): the calls that finished
are stored, the run goes back to the queue at once (no lease to wait out), exit 143;
`runs resume` then sends only the rest."""
from __future__ import annotations

import signal

import pytest

from evalcore.store import jobs, queries
from tests.conftest import cli_here
from tests.runner.test_kill9 import cli_run_under_way

pytestmark = [pytest.mark.integration, pytest.mark.serial]


def test_sigterm_releases_a_cli_run_and_resume_sends_only_the_rest(engine, settings, dataset,
                                                                     server):
    total = 6 * 10
    proc, run_id = cli_run_under_way(engine, settings, dataset, server)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 143, err
    assert "released" in err and "Traceback" not in err
    kept = queries.count_calls(engine, run_id)
    assert 10 <= kept < total
    assert server.stats.requests == kept  # the calls in flight landed and were stored
    assert queries.get_run(engine, run_id).status == "queued"
    job = jobs.run_job(engine, run_id)
    assert job.status == "queued" and job.attempts == 0 and not jobs.lease_alive(job)

    server.reconfigure(latency=0.0)  # the latency only kept the killed run under way
    server.reset_stats()
    resumed = cli_here(settings, "runs", "resume", str(run_id))  # no --force: nothing holds it
    assert resumed.returncode == 0, resumed.stderr
    assert server.stats.requests == total - kept
    assert queries.count_calls(engine, run_id) == total
