"""Workers on two hosts against one PostgreSQL, and one host's link cut (docs/hardening.md).

The hosts are network namespaces on a bridge this test makes (tests/fakes/netns.py); the
database and the fake model listen on the bridge's address, and the workers run inside
the namespaces (`ip netns exec NS python -m evalcore worker`). Cutting a host's link is
a partition, not a crash: the cut worker keeps running, its connections hang, and when
the link returns it tries to write what it did meanwhile. Skipped where namespaces
cannot be made (not root, no `ip`); a failure under CI=true where they can.
"""
from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest

from evalcore.store import jobs
from tests.conftest import REPO_ROOT, require
from tests.fakes import netns
from tests.runner.test_workers import wait_for

pytestmark = [pytest.mark.integration, pytest.mark.postgres, pytest.mark.serial]
LEASE_S = 4.0
"""The workers' lease (EVALCORE_LEASE_S): a takeover needs one lease out after the cut;
not the 2 s floor, which a worker starved of CPU on a 2-core machine can miss."""


@pytest.fixture()
def hosts() -> Iterator[netns.Hosts]:
    """Hosts "a" and "b" on a bridge of their own; removed even when the test fails."""
    why = netns.unavailable()
    require(why is None, f"network namespaces cannot be made here: {why}")
    made = netns.Hosts(["a", "b"])
    try:
        yield made
    finally:
        made.close()


@pytest.fixture()
def cluster(hosts: netns.Hosts) -> Iterator[tuple[str, str]]:
    """A PostgreSQL cluster listening on 127.0.0.1 and on the hosts' bridge, one migrated
    database in it: (its URL for this process, its URL for the hosts)."""
    from evalcore.store.db import make_engine
    from tests.fakes.postgres import create_database, pg_bin, temporary_cluster

    require(pg_bin("initdb") is not None and pg_bin("pg_ctl") is not None,
            "PostgreSQL binaries (initdb, pg_ctl) not found; apt-get install postgresql-15")
    with temporary_cluster(listen=(hosts.server,), clients=(f"{hosts.subnet}.0/24",)) as base:
        url = create_database(base, "partition")
        make_engine(url).dispose()
        yield url, url.replace("@127.0.0.1:", f"@{hosts.server}:")


def test_a_host_cut_mid_transaction_does_not_hold_up_the_takeover(hosts, cluster,
                                                                  monkeypatch):
    """A worker whose link is cut while its transaction holds the job's row lock: the
    database must let the row go (it cannot tell a cut host from a slow one by waiting),
    so another worker takes the job over one lease after the cut, and the cut worker's
    write after the link returns is refused."""
    from evalcore.store.db import make_engine

    url, remote_url = cluster
    monkeypatch.setenv("EVALCORE_LEASE_S", str(LEASE_S))
    engine = make_engine(url)
    job_id = jobs.create_job(engine, "run", label="partition probe")
    frozen = subprocess.Popen(
        hosts.command("a", sys.executable, "-m", "tests.fakes.hold_job", remote_url,
                      str(job_id)),
        cwd=REPO_ROOT, env={**os.environ, "PYTHONPATH": str(REPO_ROOT),
                            "EVALCORE_LEASE_S": str(LEASE_S)},
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        first = frozen.stdout.readline()
        assert first.startswith("holding"), first + frozen.stdout.read()
        hosts.cut("a")
        cut_at = time.monotonic()
        taken = wait_for(lambda: jobs.claim_job(engine, "b", job_id=job_id), LEASE_S + 20,
                         "the job to be taken over while host a is cut off")
        waited = time.monotonic() - cut_at
        hosts.restore("a")
        frozen.stdin.write("write\n")
        frozen.stdin.flush()
        answer = frozen.stdout.read()
        frozen.wait(timeout=60)
    finally:
        hosts.restore("a")
        if frozen.poll() is None:
            frozen.kill()
            frozen.wait()
        engine.dispose()
    assert taken.owner == "b" and taken.token == 2
    assert waited >= LEASE_S / 2, waited  # not before the lease could have run out
    assert answer.startswith("refused"), answer
    assert jobs.get_job(make_engine(url), job_id).done == 0  # the late write left nothing
