"""The settings and the cached engine every page and the sign-in share (below `_shared`
and `_signin`, which both need them, so neither imports the other for it).

The engine is cached per database URL, so a test (or a user) that points EVALCORE_HOME or
EVALCORE_DB_URL elsewhere gets its own engine instead of a stale one.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import streamlit as st

from evalcore.config import Settings, load_settings
from evalcore.service.database import get_engine
from evalcore.service.workers import get_runner

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine

REFRESH_S = 2.0
"""Seconds between reads of something live: a run's progress, a job, the local model."""


def settings() -> Settings:
    """The process-wide settings (environment read once by evalcore)."""
    return load_settings()


@st.cache_resource(show_spinner=False)
def _engine_for(db_url: str) -> Engine:
    """The engine, and this process's embedded worker for its database (started once:
    it executes the jobs pages queue; EVALCORE_EMBEDDED_WORKER=0 leaves that to
    `python -m evalcore worker` processes)."""
    eng = get_engine(db_url)
    get_runner().ensure_worker(eng)
    return eng


def engine() -> Engine:
    """The shared engine for the configured database (one pool for every session)."""
    return _engine_for(settings().db_url)
