"""Small helpers the sub-commands share: the engine, JSON output, a progress bar."""
from __future__ import annotations

import json
import sys
from typing import Any

RUN_IMPORTS = ("evalcore.store.db", "evalcore.store.queries", "evalcore.runner.start",
               "evalcore.prompt", "evalcore.scorers.registry", "evalcore.providers.client",
               "aiohttp", "tqdm")
"""What a command that executes a run needs (its `preload`): loaded before the run
starts, so the first requests do not wait for an import."""


def engine_and_settings():  # noqa: ANN201 - returns (Engine, Settings); imports stay lazy
    """The configured engine (schema up to date) and settings."""
    from evalcore.config import load_settings
    from evalcore.store.db import get_engine

    settings = load_settings()
    return get_engine(settings.db_url), settings


def print_json(data: Any) -> None:
    json.dump(data, sys.stdout, ensure_ascii=False, indent=2, default=str)
    sys.stdout.write("\n")


def detach_or_run(args: Any, engine: Any, run_id: int) -> str | None:
    """With `--detach`: print {"run_id": N} (the run stays queued for a worker) and
    return None; otherwise execute the run here with a progress bar."""
    if getattr(args, "detach", False):
        print_json({"run_id": run_id})
        return None
    return run_with_progress(engine, run_id)


def add_detach(parser: Any) -> None:
    parser.add_argument("--detach", action="store_true",
                        help='only queue the run for a worker and print {"run_id": N}')


def write_json(path: str, data: Any) -> None:
    """A report as UTF-8 JSON (Chinese left readable) at `path`."""
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(data, fh, ensure_ascii=False, indent=2, default=str)


def run_with_progress(engine: Any, run_id: int, *, force: bool = False) -> str:
    """Execute a stored run in this process with a tqdm bar on stderr (hidden when stderr
    is not a terminal); returns the run's final status."""
    from tqdm import tqdm

    from evalcore.runner.start import run_in_foreground

    bar = tqdm(desc=f"run {run_id}", unit="call", file=sys.stderr, dynamic_ncols=True,
               disable=None)

    def update(progress: Any) -> None:
        bar.total = progress.total
        bar.n = progress.done
        bar.set_postfix(errors=progress.errors, retries=progress.retries, refresh=False)
        bar.refresh()

    try:
        return run_in_foreground(engine, run_id, on_progress=update, force=force)
    finally:
        bar.close()


def acting_user(engine: Any) -> Any:
    """The CLI's `Actor`: EVALCORE_USER or the OS user (single-user mode: may do
    everything; team mode: the role stored for that email)."""
    from evalcore.auth import auth_config, cli_actor

    return cli_actor(engine, auth_config())
