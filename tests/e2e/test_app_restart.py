"""`make run` killed with kill -9 mid-run (app and its worker together), while a second
worker runs beside it on the same SQLite file: nothing is lost, nothing is paid twice,
and after the app starts again every run finishes by itself, with no click."""
from __future__ import annotations

import math
import os
import signal
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from evalcore.runner.run import FLUSH_INTERVAL_S
from evalcore.store import jobs, queries
from tests.conftest import REPO_ROOT
from tests.fakes.fault_server import FaultConfig, FaultServer
from tests.fakes.postgres import free_port
from tests.runner.conftest import add_model, tagged_dataset
from tests.waiting import wait_for

pytestmark = [pytest.mark.integration, pytest.mark.serial]
LEASE_S = 3.0
SLOTS, LATENCY_S = 8, 0.1
AGAIN_AT_MOST = SLOTS + math.ceil(SLOTS / LATENCY_S * FLUSH_INTERVAL_S)
"""Calls a run may send again after its app is killed: those in flight at the kill (its
slots) and those answered since the last store (the runner stores every FLUSH_INTERVAL_S,
~20 answers at 8 slots x 0.1 s). The bound was the slots alone, and a run once sent 109
under three test workers; a resume that asks again what was stored still fails it."""


def start_app(env: dict[str, str], port: int, log: Path) -> subprocess.Popen:
    """scripts/run_app.sh (what `make run` starts) in its own process group."""
    with open(log, "ab") as out:
        return subprocess.Popen(
            ["bash", "scripts/run_app.sh", str(port), "--server.address", "127.0.0.1",
             "--server.headless", "true", "--server.fileWatcherType", "none"],
            cwd=REPO_ROOT, env=env, stdout=out, stderr=subprocess.STDOUT,
            start_new_session=True)


def healthy(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2) as r:
            return r.status == 200
    except OSError:
        return False


def test_killed_app_resumes_its_runs_by_itself(engine, settings, monkeypatch):
    from evalcore.runner.plan import RunSpec
    from evalcore.runner.start import store_run

    monkeypatch.setenv("EVALCORE_LEASE_S", str(LEASE_S))
    env = {**os.environ, "EVALCORE_HOME": str(settings.home), "PYTHONPATH": str(REPO_ROOT),
           "EVALCORE_LEASE_S": str(LEASE_S), "EVALCORE_WORKER_JOBS": "2"}
    env.pop("EVALCORE_DB_URL", None)
    env.pop("EVALCORE_MODELS", None)
    port, log = free_port(), Path(settings.home) / "app.log"
    with FaultServer(FaultConfig(latency=LATENCY_S)) as server:
        add_model(settings, server, concurrency=SLOTS)
        run_ids = [store_run(engine, RunSpec(dataset=tagged_dataset(engine, f"r{k}", 20),
                                              model="fake", rounds=5), settings.models_path)
                   for k in range(3)]
        app, other = start_app(env, port, log), None
        try:
            def app_busy():
                held = [j for j in jobs.list_jobs(engine, status=["running"])
                        if j.owner.startswith("app-worker")]
                return held if held and all(queries.count_calls(engine, j.run_id) >= 5
                                            for j in held) else None

            # the second worker starts once the app's worker holds its runs: started together,
            # it could finish all three on a loaded machine before the app's worker began
            held = wait_for(app_busy, 60, "the app's worker to be executing runs")
            other = subprocess.Popen([sys.executable, "-m", "evalcore", "worker", "--jobs", "1",
                                      "--name", "cli-worker"], cwd=REPO_ROOT, env=env,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            os.killpg(app.pid, signal.SIGKILL)  # the app, its worker, the script: all at once
            app.wait(timeout=10)
            assert all(jobs.get_job(engine, j.id).status == "running" for j in held)
            app = start_app(env, port, log)  # `make run` again
            wait_for(lambda: healthy(port), 60, "the restarted app")
            wait_for(lambda: all(queries.get_run(engine, r).status == "done" for r in run_ids),
                     LEASE_S + 90, "every run to finish without a click")
        finally:
            for proc in (app, other):
                if proc is not None and proc.poll() is None:
                    os.killpg(proc.pid, signal.SIGTERM) if proc is app else proc.terminate()
                    proc.wait(timeout=30)
        prompts = server.stats.prompts
    for k, run_id in enumerate(run_ids):
        assert queries.count_calls(engine, run_id) == 100
        sent = sum(f"[r{k}]" in p for p in prompts)
        assert 100 <= sent <= 100 + AGAIN_AT_MOST, (k, sent)
    takers = {jobs.get_job(engine, j.id).owner for j in held}
    assert all(t != held[0].owner for t in takers)  # taken over by another worker
