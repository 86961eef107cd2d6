"""kill -9 a CLI run in the middle: finished calls survive and `runs resume` sends only the rest."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from evalcore.store import queries
from tests.conftest import REPO_ROOT, cli_here
from tests.runner.conftest import add_model

pytestmark = [pytest.mark.integration, pytest.mark.serial]


def cli(settings, *args: str) -> subprocess.Popen:
    env = {**os.environ, "EVALCORE_HOME": str(settings.home), "PYTHONPATH": str(REPO_ROOT)}
    return subprocess.Popen([sys.executable, "-m", "evalcore", *args], cwd=REPO_ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def cli_run_under_way(engine, settings, dataset, server):
    """A 6 x 10-round CLI run at 100 ms a call, once it has stored 10 calls: (process, run id)."""
    server.reconfigure(latency=0.1)
    add_model(settings, server, concurrency=2)
    proc = cli(settings, "stability", "--dataset", dataset, "--model", "fake", "--rounds", "10")
    deadline = time.monotonic() + 60
    run_id = None
    while time.monotonic() < deadline:
        runs = queries.list_runs(engine)
        if runs and (run_id := runs[0].id) and queries.count_calls(engine, run_id) >= 10:
            return proc, run_id
        time.sleep(0.05)
    proc.kill()
    pytest.fail("the CLI run never stored 10 calls")


def test_killed_run_keeps_finished_calls_and_resume_completes_it(engine, settings, dataset,
                                                                  server):
    total = 6 * 10
    proc, run_id = cli_run_under_way(engine, settings, dataset, server)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=10)

    kept = queries.count_calls(engine, run_id)
    assert 10 <= kept < total, "kill came too late to test anything"
    run = queries.get_run(engine, run_id)
    assert run.status == "running"  # nobody could mark it: the process died
    assert run.done <= kept  # progress never claims more than is stored

    refused = cli_here(settings, "runs", "resume", str(run_id))
    assert refused.returncode == 2 and "another process" in refused.stderr  # heartbeat fresh

    server.reconfigure(latency=0.0)  # the latency only kept the killed run under way
    server.reset_stats()
    resumed = cli_here(settings, "runs", "resume", str(run_id), "--force")
    assert resumed.returncode == 0, resumed.stderr
    assert f"run {run_id}: done" in resumed.stdout
    assert server.stats.requests == total - kept  # stored calls were never sent again
    assert queries.count_calls(engine, run_id) == total
    final = queries.get_run(engine, run_id)
    assert (final.status, final.done, final.total) == ("done", total, total)


SLOTS = 8


def test_a_kill_pays_again_at_most_the_calls_in_flight(engine, settings, dataset, server):
    """Calls answered but not yet stored were lost with the process and paid for again on
    resume (16 with 8 in flight): a call now keeps its slot until its reply is stored, so
    what the server answered beyond the stored calls is at most the calls in flight."""
    server.reconfigure(latency=0.02)  # ~100 answers per 0.25 s: a buffer would hold many
    add_model(settings, server, concurrency=SLOTS)
    proc = cli(settings, "stability", "--dataset", dataset, "--model", "fake",
               "--rounds", "60")
    deadline = time.monotonic() + 60
    run_id = None
    while run_id is None or queries.count_calls(engine, run_id) < 40:
        assert time.monotonic() < deadline and proc.poll() is None, "no progress"
        runs = queries.list_runs(engine)
        run_id = runs[0].id if runs else None
        time.sleep(0.01)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=10)
    paid, kept = server.stats.requests, queries.count_calls(engine, run_id)
    assert kept < 6 * 60, "kill came too late to test anything"
    assert paid - kept <= SLOTS, f"{paid} calls paid, {kept} stored"

    server.reset_stats()
    resumed = cli_here(settings, "runs", "resume", str(run_id), "--force")
    assert resumed.returncode == 0, resumed.stderr
    assert server.stats.requests == 6 * 60 - kept  # nothing stored is asked again
