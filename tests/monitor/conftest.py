"""Monitoring fixtures: the runner's maths dataset and fault-server model, a schedule
helper, and the PostgreSQL/SQLite `store_url` of the store tests."""
from __future__ import annotations

import pytest

from tests.runner.conftest import add_model, dataset, server  # noqa: F401
from tests.store.conftest import pg_url, store_url  # noqa: F401


@pytest.fixture()
def allow_outbound(monkeypatch: pytest.MonkeyPatch):
    """`allow(port, ...)`: EVALCORE_OUTBOUND_ALLOW names this test's loopback receivers,
    as an admin would (alerts may not reach loopback addresses otherwise)."""
    def allow(*ports: int) -> None:
        monkeypatch.setenv("EVALCORE_OUTBOUND_ALLOW",
                           ",".join(f"127.0.0.1:{port}" for port in ports))

    return allow


def add_stability_schedule(engine, settings, dataset_name: str, *, every_s: int = 1,  # noqa: ANN001
                           channels=None, gate=None, start=None, rounds: int = 1):  # noqa: ANN001
    """A stability schedule on model 'fake' added by the local (admin) user."""
    from evalcore.auth.identity import Actor
    from evalcore.monitor.actions import add_schedule

    actor = Actor(email="", name="tester", role="admin")
    row = add_schedule(actor, engine, "stability", {"dataset": dataset_name, "model": "fake",
                                                    "rounds": rounds},
                       models_path=settings.models_path, every_s=every_s,
                       gate=gate, channels=channels)
    if start is not None:
        from sqlalchemy import update

        from evalcore.store.monitor_tables import Schedule

        with engine.begin() as conn:
            conn.execute(update(Schedule).where(Schedule.id == row.id)
                         .values(next_due_at=start))
    return row


def needs(module: str, requirements: str = "requirements.txt") -> None:
    """Skip locally (fail under CI=true) when `module` is not installed."""
    import importlib.util

    from tests.conftest import require

    require(importlib.util.find_spec(module) is not None,
            f"{module} missing: pip install -r {requirements}")
