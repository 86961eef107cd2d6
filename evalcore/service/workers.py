"""Workers: the app's embedded one, a worker process, and who is alive (heartbeats)."""
from __future__ import annotations

from evalcore.actions.admin import start_worker
from evalcore.runner.background import get_runner
from evalcore.runner.worker import Worker, worker_id
from evalcore.store.workers import live_workers

__all__ = ["Worker", "get_runner", "live_workers", "start_worker", "worker_id"]
