"""What every page shares: page setup, the cached engine, and the sidebar.

Pages gather input, call evalcore and draw; anything more belongs in evalcore. The
engine is cached per database URL, so a test (or a user) that points EVALCORE_HOME or
EVALCORE_DB_URL elsewhere gets its own engine instead of a stale one.
"""
from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

import streamlit as st

from evalcore.config import Settings, load_settings

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine

PROJECT_ROOT = Path(__file__).resolve().parents[1]
SAMPLES_DIR = PROJECT_ROOT / "data" / "samples"
"""Small bundled files for trying the app without data of one's own."""


def settings() -> Settings:
    """The process-wide settings (environment read once by evalcore)."""
    return load_settings()


@st.cache_resource(show_spinner=False)
def _engine_for(db_url: str) -> Engine:
    from evalcore.store.db import get_engine

    return get_engine(db_url)


def engine() -> Engine:
    """The shared engine for the configured database (one pool for every session)."""
    return _engine_for(settings().db_url)


def page_setup(title: str, intro: str) -> None:
    """Title and one line saying what the page is for."""
    st.title(title)
    st.caption(intro)


def local_model_line() -> str:
    """One line on the embedded llama.cpp model: running where, or stopped."""
    from evalcore.providers.local import LocalServer

    status = LocalServer.instance().status()
    if not status["running"]:
        return "stopped (starts on first use, or from the Models page)"
    since = datetime.fromtimestamp(status["started_at"]).strftime("%H:%M:%S")
    model = Path(status["model_path"]).name or "?"
    return f"running at {status['url']} ({model}, since {since})"


def sidebar() -> None:
    """The sidebar every page shows: which database is in use and the local model's state."""
    with st.sidebar:
        st.caption("Database")
        st.code(settings().redacted_db_url(), language=None, wrap_lines=True)
        st.caption("Local model")
        st.markdown(local_model_line())
