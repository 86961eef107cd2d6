"""EVALCORE_HOME on a small tmpfs that large replies fill: the CLI stops with one line
naming the database file and the space needed, exit code 3, the job given back to the
queue (it used to print a 67-line traceback with the SQL and never exit, the run left
"running"); after the filesystem grows, `runs resume` pays only the calls not stored,
and the calls paid for nothing are at most those in flight."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from evalcore.store import jobs, queries
from tests.conftest import IN_CI, REPO_ROOT, require
from tests.runner.conftest import add_model, tagged_dataset
from tests.fakes.fault_server import FaultConfig, FaultServer

pytestmark = [pytest.mark.integration, pytest.mark.serial]
SLOTS = 4
ITEMS, ROUNDS = 6, 10
REPLY = "The answer is 0. " + "x" * 100_000
"""100 KB a reply: 60 of them are ~6 MB, more than the tmpfs of SMALL holds."""
SMALL, LARGE = "4m", "32m"


def _mount(folder, size: str, *extra: str) -> subprocess.CompletedProcess:  # noqa: ANN001
    return subprocess.run(["mount", "-t", "tmpfs", "-o", ",".join([*extra, f"size={size}"]),
                           "tmpfs", str(folder)], capture_output=True, text=True)


@pytest.fixture()
def small_home(settings):  # noqa: ANN001, ANN201
    """The test's EVALCORE_HOME on its own SMALL tmpfs, unmounted at the end."""
    require(os.geteuid() == 0, "a tmpfs needs root (mount -t tmpfs); CI runs as root")
    settings.home.mkdir(parents=True, exist_ok=True)
    mounted = _mount(settings.home, SMALL)
    if mounted.returncode != 0:
        if IN_CI:
            pytest.fail(f"mount -t tmpfs failed under CI: {mounted.stderr.strip()}")
        pytest.skip(f"mount -t tmpfs not permitted here: {mounted.stderr.strip()}")
    try:
        yield settings.home
    finally:
        from evalcore.store.db import dispose_engines

        dispose_engines()
        subprocess.run(["umount", "-l", str(settings.home)], check=False)


def _cli(home, *args: str) -> subprocess.CompletedProcess:  # noqa: ANN001
    """The CLI in its own process (the claim is about its exit), bounded: it used to hang."""
    env = {**os.environ, "EVALCORE_HOME": str(home), "PYTHONPATH": str(REPO_ROOT)}
    env.pop("EVALCORE_DB_URL", None)
    return subprocess.run([sys.executable, "-m", "evalcore", *args], cwd=REPO_ROOT, env=env,
                          capture_output=True, text=True, timeout=90)


def test_a_full_disk_stops_the_run_in_one_line_and_resume_pays_nothing_twice(
        settings, small_home) -> None:
    from evalcore.store.db import make_engine

    engine = make_engine(settings.db_url)
    name = tagged_dataset(engine, "full", ITEMS)
    with FaultServer(FaultConfig(responder=lambda prompt, schema: REPLY)) as server:
        add_model(settings, server, concurrency=SLOTS, max_attempts=1)
        stopped = _cli(small_home, "stability", "--dataset", name, "--model", "fake",
                       "--rounds", str(ROUNDS))
        lines = stopped.stderr.strip().splitlines()
        assert stopped.returncode == 3, stopped.stderr[-3000:]
        assert len(lines) == 1 and lines[0].startswith("error: disk full"), stopped.stderr[-3000:]
        assert str(small_home / "evalcore.db") in lines[0] and "free" in lines[0]
        assert "more needed" in lines[0] and "runs resume" in lines[0]

        [run] = queries.list_runs(engine)
        assert jobs.run_job(engine, run.id).status == "queued"  # given back
        kept = queries.count_calls(engine, run.id)
        assert 0 < kept < ITEMS * ROUNDS, "the disk never filled: nothing was tested"
        assert server.stats.requests - kept <= SLOTS, (server.stats.requests, kept)

        grown = _mount(small_home, LARGE, "remount")  # space freed
        assert grown.returncode == 0, grown.stderr
        server.reset_stats()
        resumed = _cli(small_home, "runs", "resume", str(run.id))
        assert resumed.returncode == 0, resumed.stderr[-3000:]
        assert server.stats.requests == ITEMS * ROUNDS - kept  # nothing stored paid again
        assert queries.count_calls(engine, run.id) == ITEMS * ROUNDS
    engine.dispose()
