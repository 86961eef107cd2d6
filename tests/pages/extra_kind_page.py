"""The page of the test-only kind "recall" (tests/pages/test_extra_kind.py): its runs."""
from __future__ import annotations

import streamlit as st

from evalcore.store import queries
from pages import _shared

st.title("Recall")
runs = queries.list_runs(_shared.engine(), kind="recall", limit=50)
st.caption(f"{len(runs)} recall run(s)")
