"""A CrowS-Pairs run's answers one by one (drawn on the Fairness page).

Filters (bias type, stereo / antistereo pair, what the answer counts as) and paging; each
answer shows the two sentences with the one picked and the stereotyped one marked, how
the reply was read, and the raw reply. The rows come from `evalcore.report.crows`; this
file only draws them.
"""
from __future__ import annotations

from typing import Any

import streamlit as st

from evalcore.dataset.numbering import question_label
from evalcore.markup import md

from evalcore.report.crows import crows_rows, filter_rows, READINGS, row_facets, sentence_roles
from pages import _shared
from pages._bbq_answers import browse, options_html

READING_COLORS = {"stereotyped": "orange", "less stereotyped": "blue", "unreadable": "gray",
                  "no reply": "red"}


@st.cache_data(max_entries=4, show_spinner="Reading the answers...")
def _answers(db_url: str, run_id: int, state: tuple[str, int]) -> list[dict[str, Any]]:
    """Every answer of the run, cached per `_shared.run_state`."""
    return crows_rows(_shared.engine(), run_id)


def _answer_html(row: dict[str, Any]) -> str:
    return options_html(sentence_roles(row), row["answer"], row["error"])


def _answer_card(row: dict[str, Any]) -> None:
    with st.container(border=True):
        st.markdown(f"**Pair {md(question_label(row['item_idx']))}** · round {md(row['round'])} · "
                    f"{md(row['bias_type'])} · {md(row['direction'])}")
        with st.container(horizontal=True, vertical_alignment="center"):
            st.badge(row["reading"], color=READING_COLORS[row["reading"]])
            picked = "nothing" if row["picked"] is None else f"sentence {row['picked']}"
            st.caption(f"Read: {md(picked)} · how: {md(row['how'])}")
        st.html(_answer_html(row))


def answer_browser(run_id: int) -> None:
    """The run's CrowS-Pairs answers, filtered and paged."""
    rows = _answers(_shared.settings().db_url, run_id, _shared.run_state(run_id))
    if rows:
        browse(rows, [("bias_type", "Bias type", None),
                      ("direction", "Pair", ("stereo", "antistereo")),
                      ("reading", "Counts as", READINGS)],
               filter_rows, row_facets(rows), "fairness.crows", "'Counts as': the "
               "stereotyped sentence picked, the other one, a reply that named neither (left "
               "out of the shares and the parse rate's readable part), or no reply (a model "
               "error).", _answer_card)
