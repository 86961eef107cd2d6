"""Warm the app's process once, in the background, so a page's first visit does not wait.

A page's first script run in a fresh process spends seconds importing (SQLAlchemy and
SQLModel, pandas, plotly, the report modules), checking the schema and compiling its first
queries; the same run a second time takes a fraction of it. `start` does that
work once per process on a daemon thread: it imports the modules the pages import
(`imports_of` reads them from the pages' source, so the list cannot drift from the
pages), opens the database engine (schema check or migration) and runs the cheap reads
every page's sidebar and Home make. Nothing here draws or evaluates; a failure is only
logged (the page that needs the module or database then reports it as it would anyway).
"""
from __future__ import annotations

import ast
import importlib
import logging
import os
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

log = logging.getLogger(__name__)

LIBRARIES = ("sqlalchemy", "sqlmodel", "pandas", "pyarrow", "plotly.graph_objects",
             "plotly.io", "pygments.lexers")
"""Heavy libraries the pages reach through Streamlit or evalcore on first use (tables as
Arrow, charts as plotly JSON, `st.code`), warmed before the pages' own imports."""


@dataclass
class WarmUp:
    """What one warm-up did: imported modules, the ones that failed, seconds taken."""

    imported: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)
    engine_ready: bool = False
    seconds: float = 0.0
    done: threading.Event = field(default_factory=threading.Event)


_lock = threading.Lock()
_started: WarmUp | None = None


def imports_of(paths: Iterable[Path], roots: tuple[str, ...] = ("evalcore", "pages")
               ) -> list[str]:
    """Every module under `roots` that the files at `paths` import, at module level or
    inside functions, in first-seen order (what the pages will import sooner or later);
    for `from pkg import x` also `pkg.x`, which may be a submodule (`warm_up` skips it
    when it is not)."""
    found: dict[str, None] = {}
    for path in sorted(paths):
        tree = ast.parse(Path(path).read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                # `from pkg import mod` may name a submodule: try it, the parent too
                names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            else:
                continue
            for name in names:
                if name.split(".")[0] in roots:
                    found.setdefault(name, None)
    return list(found)


def warm_up(modules: Iterable[str], db_url: str | None = None,
            result: WarmUp | None = None) -> WarmUp:
    """Import `modules` (LIBRARIES first), then open the engine for `db_url` and run the
    reads every page starts with. Never raises: failures are recorded and logged."""
    result = result or WarmUp()
    started = time.perf_counter()
    try:
        for name in (*LIBRARIES, *modules):
            try:
                importlib.import_module(name)
            except ImportError as exc:
                if _is_missing_submodule(name, exc):
                    continue  # `from pkg import function`: not a module, nothing to load
                result.failed[name] = str(exc)
            except Exception as exc:  # noqa: BLE001 - a warm-up must never break the app
                result.failed[name] = f"{type(exc).__name__}: {exc}"
            else:
                result.imported.append(name)
        if db_url is not None:
            result.engine_ready = _prime_database(db_url, result)
    finally:
        result.seconds = round(time.perf_counter() - started, 3)
        result.done.set()
        if result.failed:
            log.info("warm-up: %d module(s) not loaded: %s", len(result.failed),
                     "; ".join(f"{k} ({v})" for k, v in result.failed.items()))
        log.debug("warm-up done in %.2f s", result.seconds)
    return result


def _is_missing_submodule(name: str, exc: ImportError) -> bool:
    """True when `name` is `pkg.attr` for an importable `pkg` that has no such module."""
    parent, _, _ = name.rpartition(".")
    return bool(parent) and isinstance(exc, ModuleNotFoundError) and exc.name == name


def _prime_database(db_url: str, result: WarmUp) -> bool:
    """The process-wide engine (schema brought to head once) and its first queries."""
    try:
        from evalcore.dataset import list_datasets
        from evalcore.store import queries
        from evalcore.store.db import get_engine

        engine = get_engine(db_url)
        queries.list_runs(engine, limit=1)
        list_datasets(engine)
        return True
    except Exception as exc:  # noqa: BLE001 - the page shows a database error itself
        result.failed["database"] = f"{type(exc).__name__}: {exc}"
        return False


def start(sources: Iterable[Path], *, database: bool = True) -> WarmUp:
    """Warm up on a daemon thread, once per process, with the modules the files at
    `sources` import and (with `database`) the configured database; both are read on
    that thread, so the caller's script run pays nothing. Later calls return the first
    call's `WarmUp` (its `done` event is set when it is over).

    `EVALCORE_WARMUP=0` turns it off (AppTests: no thread importing beside the test)."""
    global _started
    with _lock:
        if _started is None:
            _started = WarmUp()
            if os.environ.get("EVALCORE_WARMUP", "1") == "0":
                _started.done.set()
            else:
                threading.Thread(target=_run, args=(list(sources), database, _started),
                                 name="evalcore-warm-up", daemon=True).start()
        return _started


def _run(sources: list[Path], database: bool, result: WarmUp) -> None:
    modules: list[str] = []
    db_url = None
    try:
        modules = imports_of(sources)
        if database:
            from evalcore.config import load_settings

            db_url = load_settings().db_url
    except Exception as exc:  # noqa: BLE001 - settings errors are the pages' to show
        result.failed["setup"] = f"{type(exc).__name__}: {exc}"
    warm_up(modules, db_url, result)
