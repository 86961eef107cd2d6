"""A job waiting for slots of a model always gets them back: from a dead worker's row once
it expires (no call has to end for it), and never from a row its own ended share left
behind (a sync still running when the share ended must not write its row after the
share gave its slots back)."""
from __future__ import annotations

import asyncio
import threading

import pytest
from sqlalchemy import select

from evalcore.runner import model_share
from evalcore.runner.model_share import ModelShare
from evalcore.store import model_share as store_share
from evalcore.store.tables import ModelBudget
from tests.runner.conftest import until


def _holders(engine) -> dict[str, int]:  # noqa: ANN001
    with engine.connect() as conn:
        rows = conn.execute(select(ModelBudget.holder, ModelBudget.slots)).all()
    return {holder: slots for holder, slots in rows}


def test_a_holder_at_zero_slots_gets_a_dead_holders_slots_when_its_row_expires(engine):
    """The killed worker's job held every slot; the live job holds none and has no call
    in flight, so no call ending can wake it: its own syncs must."""
    grant = store_share.sync_share(engine, "m", "job4:answer", capacity=4, want=4,
                                     in_flight=4, lease_s=0.5)  # then the worker dies
    assert grant.allowed == 4

    async def main() -> tuple[int, int]:
        async with ModelShare(engine, "m", "job1:answer", capacity=4) as gate:
            first = gate.cap
            assert await until(lambda: gate.cap == 4), gate.cap
            return first, gate.cap

    assert asyncio.run(main()) == (0, 4)
    assert _holders(engine) == {}  # the dead row was dropped, ours given back


def test_a_sync_running_when_the_share_ends_leaves_no_row_behind(engine, monkeypatch):
    """The share's last sync is still in its thread when the job ends: the slots must be
    given back after it, not before (its row would hold them for BUDGET_LEASE_S while
    the job is gone: every other job of the model waits that long for them)."""
    real = store_share.sync_share
    go, synced = threading.Event(), threading.Event()
    calls = []

    def slow_sync(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        calls.append(1)
        if len(calls) > 1:  # the periodic sync: held in its thread until `go`
            go.wait(10)
        try:
            return real(*args, **kwargs)
        finally:
            if len(calls) > 1:
                synced.set()

    monkeypatch.setattr(model_share, "sync_share", slow_sync)
    monkeypatch.setattr(model_share, "SYNC_S", 0.05)

    async def main() -> None:
        async with ModelShare(engine, "m", "job1:answer", capacity=4):
            assert await until(lambda: len(calls) > 1)  # the periodic sync has begun
            asyncio.get_running_loop().call_later(0.3, go.set)  # and ends after 0.3 s
        # the share ended; its last sync has ended too, whenever the thread finished
        assert await asyncio.to_thread(synced.wait, 10)

    asyncio.run(main())
    assert _holders(engine) == {}  # no row of an ended job holds slots


def test_a_share_paused_by_failed_syncs_resumes_when_the_database_answers_again(
        engine, monkeypatch):
    """Syncs fail for longer than half the budget lease: the share pauses its calls (its
    row may have expired). The next sync that works must give the slots back without any
    call ending or any other event: the keeper keeps syncing on its own clock."""
    from sqlalchemy.exc import OperationalError

    real = store_share.sync_share
    failing = threading.Event()

    def flaky_sync(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        if failing.is_set():
            raise OperationalError("SELECT 1", {}, Exception("connection refused"))
        return real(*args, **kwargs)

    monkeypatch.setattr(model_share, "sync_share", flaky_sync)
    monkeypatch.setattr(model_share, "SYNC_S", 0.05)
    monkeypatch.setattr(model_share, "BUDGET_LEASE_S", 0.4)  # pause after 0.2 s of failures

    async def main() -> list[int]:
        caps = []
        async with ModelShare(engine, "m", "job1:answer", capacity=3) as gate:
            caps.append(gate.cap)
            failing.set()
            assert await until(lambda: gate.cap == 0), gate.cap
            caps.append(gate.cap)
            failing.clear()
            assert await until(lambda: gate.cap == 3), gate.cap
            caps.append(gate.cap)
        return caps

    assert asyncio.run(main()) == [3, 0, 3]


@pytest.mark.integration
def test_a_run_that_waited_for_slots_uses_them_all_when_they_come(engine, settings, dataset):
    """A dead worker's job holds every slot of the model: all of the run's calls are
    taken from the stream and wait at the gate with none in flight. The run's claim must
    still count them (12 calls), not only the calls in flight (it fell to 1: the whole
    run then went one call at a time once the slots came back)."""
    from evalcore.runner.plan import RunSpec
    from evalcore.runner.start import store_run, run_in_foreground
    from tests.fakes.fault_server import FaultConfig, FaultServer
    from tests.runner.conftest import add_model

    with FaultServer(FaultConfig(latency=0.2)) as server:
        add_model(settings, server, concurrency=24)
        run_id = store_run(engine, RunSpec(dataset=dataset, model="fake", rounds=2),
                           settings.models_path)  # 6 questions x 2 rounds: 12 calls
        store_share.sync_share(engine, "fake", "job99:answer", capacity=24, want=24,
                                 in_flight=24, lease_s=3.0)  # then its worker dies
        assert run_in_foreground(engine, run_id) == "done"
        stats = server.stats
    assert stats.requests == 12
    assert stats.max_in_flight == 12, stats.max_in_flight
