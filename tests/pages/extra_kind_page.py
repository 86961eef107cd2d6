"""The page of the test-only kind "recall" (tests/pages/test_extra_kind.py): its runs, and
the picked run's headline figures.

The figures are the run's metrics as the kind declares them (`run_figures.figure_metrics`,
computed once in `run_figures`), the numbers every other view reads: the page counts no
verdict itself (the kind's `report` has its own count, for its JSON export only).
"""
from __future__ import annotations

import streamlit as st

from evalcore.kinds import find_kind
from evalcore.report.run_figures import figure_metrics, run_figures
from evalcore.service.runs import list_runs
from pages import _shared


def headline_cards(run_id: int) -> None:
    """One card per figure of the kind's own heading the run, as a share ("50.0%")."""
    own = {spec.name for spec in find_kind("recall").metrics}
    heads = [m for m in figure_metrics(run_figures(_shared.engine(), run_id))
             if m.heads and m.name in own and isinstance(m.value, float)]
    for col, metric in zip(st.columns(max(len(heads), 1)), heads):
        col.metric(metric.label or metric.name.replace("_", " "), f"{metric.value:.1%}")


st.title("Recall")
runs = list_runs(_shared.engine(), kind="recall", limit=50)
st.caption(f"{len(runs)} recall run(s)")
picked = _shared.run_picker("recall", lambda run: f"{run.model} · N={run.rounds}")
if picked is not None:
    headline_cards(picked)
