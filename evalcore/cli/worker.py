"""`worker`: claim and execute queued jobs (runs, re-judging, judge analysis, attacks)."""
from __future__ import annotations

import argparse
import asyncio
import logging
import signal

from evalcore.service.jobs import KINDS
from evalcore.service.workers import start_worker, Worker, worker_id
from evalcore.cli.common import acting_user, bounded, engine_and_settings
from evalcore.config import worker_jobs
from evalcore.errors import RunError
from evalcore.providers.client import run_closing_clients


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("worker", help="execute queued jobs; run any number of them, on any "
                                      "number of hosts, against one database")
    p.add_argument("--jobs", type=bounded(1, 64, int), metavar="N",
                   help="jobs executed at once (default EVALCORE_WORKER_JOBS, else 2)")
    p.add_argument("--kinds", nargs="+", metavar="KIND",
                   help="only these kinds of job (run, rejudge, judge_analysis, attack, "
                        "attack_import, meaning_judge, variants; default all)")
    p.add_argument("--once", action="store_true",
                   help="exit when the queue is empty instead of waiting for more")
    p.add_argument("--name", help="worker name in logs and leases (default host:pid:id)")
    p.set_defaults(func=_worker)


def _worker(args: argparse.Namespace) -> int:
    """Logs one line per job start and end on stderr; SIGTERM or Ctrl-C releases the
    jobs in hand (another worker continues them at once) and exits 143 / 130; SIGUSR1
    logs what it is doing (its jobs, model shares, where each task and thread waits)."""
    unknown = sorted(set(args.kinds or ()) - set(KINDS))
    if unknown:
        raise RunError(f"unknown job kind(s) {', '.join(unknown)}; valid: {', '.join(KINDS)}")
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    logging.getLogger("httpx").setLevel(logging.WARNING)
    engine, _ = engine_and_settings()
    name = args.name or worker_id()
    start_worker(acting_user(engine), engine, name)
    received: list[int] = []

    async def main() -> int:
        worker = Worker(engine, jobs=args.jobs or worker_jobs(), kinds=args.kinds, name=name)
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, lambda s=sig: (received.append(s), worker.stop.set()))
        loop.add_signal_handler(signal.SIGUSR1, worker.dump_state)  # what it waits for
        return await worker.run(once=args.once)

    run_closing_clients(main())
    if received:
        return 143 if received[0] == signal.SIGTERM else 130
    return 0

