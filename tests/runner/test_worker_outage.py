"""A database outage in the middle of a job, on the real PostgreSQL behind a loopback
proxy that cuts every connection for OUTAGE_S: the worker says one line when the database
goes away and one when it is back (with the count of failed tries), not SQLAlchemy's
multi-line text on every try (issue 23: ~100 times in 20 s); the run still finishes."""
from __future__ import annotations

import os
import re
import subprocess
import sys
import time
import uuid

import pytest
from sqlalchemy.engine import make_url

from evalcore.store import queries
from tests.conftest import REPO_ROOT
from tests.fakes.tcp_proxy import TcpProxy
from tests.runner.conftest import tagged_dataset
from tests.store.conftest import _admin

pytestmark = [pytest.mark.integration, pytest.mark.postgres]
OUTAGE_S = 4.0
"""Long enough for every loop to fail many times (storing calls tries every 0.25 s, and a
refused connection fails at once: ~15 counted tries), short enough not to idle the suite."""
ROUNDS = 12
"""6 items x 12 rounds: 20 calls are stored before the cut and 52 are left for after it."""


@pytest.fixture()
def pg_db(pg_url: str):  # type: ignore[no-untyped-def]
    base = pg_url.rsplit("/", 1)[0]
    name = f"t_{uuid.uuid4().hex[:12]}"
    _admin(base, f"CREATE DATABASE {name}")
    yield f"{base}/{name}"
    from evalcore.store.db import dispose_engines

    dispose_engines()
    _admin(base, f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def test_an_outage_is_two_lines_and_the_run_finishes(pg_db: str, server, tmp_path) -> None:
    from evalcore.providers.base import ModelConfig
    from evalcore.providers.registry import add_model
    from evalcore.model_store import ModelsInDatabase
    from evalcore.store.db import make_engine

    engine = make_engine(pg_db)
    tagged_dataset(engine, "outage", 6)
    add_model(ModelsInDatabase(pg_db), ModelConfig(
        name="fake", kind="openai", base_url=server.openai_url, model="fake", concurrency=2,
        timeout=5.0, max_retry_wait=5.0))
    server.reconfigure(latency=0.1)
    port = make_url(pg_db).port
    with TcpProxy("127.0.0.1", int(port)) as proxy:
        env = {k: v for k, v in os.environ.items() if not k.startswith("EVALCORE_")}
        env.update(EVALCORE_HOME=str(tmp_path / "home"), PYTHONPATH=str(REPO_ROOT),
                   EVALCORE_DB_URL=pg_db.replace(f":{port}/", f":{proxy.port}/"),
                   EVALCORE_LEASE_S="30")  # the outage stays inside the lease
        queued = subprocess.run([sys.executable, "-m", "evalcore", "stability", "--dataset",
                                 "outage", "--model", "fake", "--rounds", str(ROUNDS), "--detach"],
                                cwd=REPO_ROOT, env=env, capture_output=True, text=True,
                                timeout=120)
        assert queued.returncode == 0, queued.stderr
        run_id = int(re.search(r'"run_id": (\d+)', queued.stdout).group(1))
        worker = subprocess.Popen([sys.executable, "-m", "evalcore", "worker", "--once",
                                   "--name", "w-outage"], cwd=REPO_ROOT, env=env,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            deadline = time.monotonic() + 60
            while queries.count_calls(engine, run_id) < 20:
                assert time.monotonic() < deadline and worker.poll() is None, "no progress"
                time.sleep(0.1)
            proxy.down()
            time.sleep(OUTAGE_S)
            proxy.up()
            _, err = worker.communicate(timeout=180)
        finally:
            if worker.poll() is None:
                worker.kill()
    lines = err.splitlines()
    gone = [line for line in lines if "database unreachable" in line]
    back = [line for line in lines if "database back after" in line]
    assert len(gone) == 1 and len(back) == 1, err
    tries = int(re.search(r"\((\d+) failed tries meanwhile\)", back[0]).group(1))
    assert tries >= 3, back[0]  # several loops kept trying, quietly
    assert lines.index(gone[0]) < lines.index(back[0])
    assert not any(marker in err for marker in ("[SQL:", "Background on this error",
                                                "Traceback"))
    assert len(lines) <= 8, err  # started, job started, gone, back, job ended, stopped
    assert worker.returncode == 0
    assert queries.get_run(engine, run_id).status == "done"
    assert queries.count_calls(engine, run_id) == 6 * ROUNDS
    engine.dispose()
