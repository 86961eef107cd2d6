"""A hung worker can be asked what it is doing: SIGUSR1 (`Worker.dump_state`) logs its
jobs, each model share's gate and last sync, and where each task and thread waits, so a
run that never ends is diagnosable from the worker's log alone."""
from __future__ import annotations

import asyncio
import logging
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from evalcore.runner.model_share import ModelShare
from evalcore.runner.worker import Worker
from tests.conftest import REPO_ROOT


def test_the_state_dump_says_which_calls_wait_for_slots_and_on_which_share(engine, caplog):
    async def scenario() -> None:
        worker = Worker(engine, jobs=1, name="w-dump")
        async with ModelShare(engine, "m", "job7:answer", capacity=2) as gate:
            release = asyncio.Event()

            async def call() -> None:
                async with gate:
                    await release.wait()

            calls = [asyncio.create_task(call()) for _ in range(5)]
            stuck = threading.Event()  # a thread blocked (as a sync waiting on a lock)
            blocked = asyncio.create_task(asyncio.to_thread(stuck.wait, 10))
            await asyncio.sleep(0.1)
            with caplog.at_level(logging.WARNING, logger="evalcore.worker"):
                worker.dump_state()
            release.set()
            stuck.set()
            await asyncio.gather(*calls, blocked)

    asyncio.run(scenario())
    text = caplog.text
    assert "worker w-dump state: jobs []" in text
    assert ("share job7:answer on m: cap 2, in flight 2, want 2, held 2, short False"
            in text and "syncing alive" in text)
    # three calls wait in the gate, two hold a slot: each place named with its count
    assert "3 task(s) at " in text and "model_share.py" in text and "__aenter__" in text
    assert "2 task(s) at " in text
    assert "idle executor thread(s)" in text
    blocked = [line for line in text.splitlines() if "  thread asyncio_" in line]
    assert len(blocked) == 1 and "wait < threading.py" in blocked[0], blocked


@pytest.mark.integration
def test_sigusr1_makes_a_running_worker_log_its_state_and_keep_working(settings, engine):
    """Also what the worker tests print when their runs do not finish
    (`explain_workers`): jobs, model_budget rows, each log's tail after the dump."""
    from tests.runner.test_workers import explain_workers

    env = {**__import__("os").environ, "EVALCORE_HOME": str(settings.home),
           "EVALCORE_DB_URL": settings.db_url, "PYTHONPATH": str(REPO_ROOT)}
    log_path = Path(settings.home) / "wd.log"
    with open(log_path, "w") as log:
        proc = subprocess.Popen([sys.executable, "-m", "evalcore", "worker", "--name", "wd"],
                                cwd=REPO_ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 60
        while "started" not in log_path.read_text() and time.monotonic() < deadline:
            time.sleep(0.05)
        text = explain_workers(engine, settings, {"wd": proc})  # sends SIGUSR1 first
        assert proc.poll() is None, log_path.read_text()  # still working
    finally:
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(timeout=20)
    assert text.startswith("jobs:\n") and "model_budget:" in text, text
    assert "wd (exit None), last lines of its log:" in text
    assert "worker wd state: jobs []" in text and " _work < worker.py" in text, text
    assert code == 143
