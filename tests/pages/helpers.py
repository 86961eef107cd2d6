"""Helpers for the AppTest tests (imported by tests/pages/conftest.py and the tests)."""
from __future__ import annotations

from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
APP = REPO_ROOT / "streamlit_app.py"
SAMPLES = REPO_ROOT / "data" / "samples"
RUN_TIMEOUT = 60  # seconds per script run: the first run imports pandas, SQLAlchemy ...


def clear_streamlit_caches() -> None:
    """Cached engines and parses must not leak from one test's database into the next."""
    import streamlit as st

    st.cache_resource.clear()
    st.cache_data.clear()


def texts(at) -> list[str]:
    """Every text the app drew, main area and sidebar (tables as CSV, widgets' values)."""
    found: list[str] = []
    for node in [*at.main, *at.sidebar]:  # a Block iterates over itself and all descendants
        kind = type(node).__name__
        if kind == "Dataframe":
            found.append(node.value.to_csv())
        elif kind not in ("Block", "SpecialBlock", "Column", "Tab", "Form"):
            value = getattr(node, "value", None)
            if isinstance(value, str):
                found.append(value)
            label = getattr(node, "label", None)
            if isinstance(label, str):
                found.append(label)
    return found
