"""The embedded local model's state as the pages show it (sidebar, Models page): read
from the live workers' heartbeats in the database, since runs execute in the workers."""
from __future__ import annotations

from datetime import datetime
from typing import Any

import streamlit as st

from evalcore.error_text import describe_error
from evalcore.markup import code_text, md
from evalcore.service.schedules import list_schedules
from evalcore.service.workers import live_workers
from pages._engine import REFRESH_S, engine


def describe_local(state: dict[str, Any]) -> str:
    """One local-model state of a worker's heartbeat (`providers.local.local_state`) in words."""
    def at(epoch: Any) -> str:
        return datetime.fromtimestamp(epoch).strftime("%H:%M:%S") if epoch else "?"

    model = state.get("model") or "?"
    if state.get("state") == "starting":
        return f"starting: loading {model} (since {at(state.get('since'))})"
    if state.get("state") == "running":
        return f"loaded ({model}, since {at(state.get('since'))})"
    return "not loaded (loads at its first run on the local model)"


def local_model_lines() -> list[str]:
    """The embedded model where runs execute: its state in each live worker (from their
    heartbeats in the database), or that no worker runs (queued runs then wait); Markdown
    with every part from the database escaped."""
    workers = live_workers(engine())
    if not workers:
        return ["no worker is running: queued runs wait until one starts (`python -m "
                "evalcore worker`; `make run` starts one with the app)"]
    return [f"{md(describe_local(w.state.get('local') or {}))} in worker `{code_text(w.name)}`"
            for w in workers]


def local_busy() -> bool:
    """A worker is loading the model: "starting" turns into "loaded" within seconds. (Not
    while it merely has jobs: a sidebar re-read every 2 s for a whole run is not needed,
    the page's own redraw when a run ends shows the new state.)"""
    try:
        workers = live_workers(engine())
    except Exception:  # noqa: BLE001 - the body says why it cannot tell
        return False
    return any((w.state.get("local") or {}).get("state") == "starting" for w in workers)


WATCHED_PAGES = {"monitoring": 10.0}
"""Pages open for long that start runs by themselves (Monitoring's schedules, re-read
every 10 s): while one of their schedules is active the sidebar's local-model line is
re-read as often, so "not loaded" turns into "loaded" when a scheduled run loads it."""


def sidebar_every(url_path: str, starting: bool, scheduled: bool) -> float | None:
    """How often the sidebar's local-model line is re-read: every REFRESH_S while a
    worker loads the model, on a watched page while a schedule is active, else never."""
    if starting:
        return REFRESH_S
    return WATCHED_PAGES.get(url_path) if scheduled else None


def sidebar_refresh(url_path: str) -> float | None:
    """`sidebar_every` for the page shown, from the database."""
    scheduled = False
    if url_path in WATCHED_PAGES:
        try:
            scheduled = any(not s.paused for s in list_schedules(engine()))
        except Exception:  # noqa: BLE001 - the sidebar must draw without a database
            scheduled = False
    return sidebar_every(url_path, local_busy(), scheduled)


def local_model_body() -> None:
    """The sidebar's local-model lines; one line saying why when they cannot be read."""
    try:
        lines = local_model_lines()
    except Exception as exc:  # noqa: BLE001 - the sidebar must draw without a database
        lines = [f"unknown: {md(describe_error(exc) or 'the database cannot be read')}"]
    for line in lines:
        st.markdown(line)  # trusted markdown: local_model_lines escapes what it reads
