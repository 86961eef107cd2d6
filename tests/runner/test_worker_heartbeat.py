"""A worker's heartbeat row: alive while it runs, with its local model's state, gone
when it stops; a row that stopped beating is not taken for a live worker."""
from __future__ import annotations

import asyncio
import time
from datetime import timedelta

from evalcore.runner.worker import Worker
from evalcore.store.workers import ALIVE_S, beat, live_workers


def test_a_running_worker_beats_with_its_local_model_state_and_forgets_itself(engine,
                                                                              monkeypatch):
    from evalcore.providers import local

    async def scenario() -> list:
        worker = Worker(engine, jobs=1, name="w-test", poll_s=0.05)
        task = asyncio.create_task(worker.run())
        seen = []
        for _ in range(100):
            await asyncio.sleep(0.05)
            seen = await asyncio.to_thread(live_workers, engine)
            if seen:
                break
        worker.stop.set()
        await task
        return seen

    monkeypatch.setattr(local, "local_state", lambda: {
        "state": "starting", "model": "tiny.gguf", "since": time.time()})
    seen = asyncio.run(scenario())
    assert [w.name for w in seen] == ["w-test"]
    state = seen[0].state
    assert state["local"]["state"] == "starting" and state["local"]["model"] == "tiny.gguf"
    assert (state["jobs"], state["capacity"]) == (0, 1)
    assert live_workers(engine) == []  # a stopped worker removes its row


def test_a_worker_that_stopped_beating_is_not_alive(engine):
    from sqlalchemy import update

    from evalcore.store.tables import Worker as Row, utcnow

    beat(engine, "dead", {"local": {"state": "running"}})
    beat(engine, "alive", {"local": {"state": "stopped"}})
    with engine.begin() as conn:
        conn.execute(update(Row).where(Row.name == "dead").values(
            heartbeat_at=utcnow() - timedelta(seconds=ALIVE_S + 1)))
    assert [w.name for w in live_workers(engine)] == ["alive"]
