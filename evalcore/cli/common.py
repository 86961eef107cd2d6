"""Small helpers the sub-commands share: the engine, JSON output, a progress bar."""
from __future__ import annotations

import json
import sys
from typing import Any, Callable

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


def progress_bar(description: str) -> tuple[Callable[[Any], None], Callable[[], None]]:
    """A tqdm bar on stderr fed by RunProgress snapshots; returns (update, close)."""
    from tqdm import tqdm

    bar = tqdm(desc=description, unit="call", file=sys.stderr, dynamic_ncols=True,
               disable=None)

    def update(progress: Any) -> None:
        bar.total = progress.total
        bar.n = progress.done
        bar.set_postfix(errors=progress.errors, retries=progress.retries, refresh=False)
        bar.refresh()

    return update, bar.close
