"""A BBQ / CBBQ run's answers one by one (drawn on the Fairness page).

Filters (context condition, category, correct / wrong / unparsed, bias reading) and
paging; each answer shows the question, the options with the one picked, how the reply
was read, what it counts as, and the raw reply. The rows come from
`evalcore.report.bbq_answers`; this file only draws them.
"""
from __future__ import annotations

import html
from typing import Any, Callable

import streamlit as st
from evalcore.dataset.numbering import question_label
from evalcore.markup import md

from evalcore.report.bbq_answers import (answer_page, bbq_answers, BIAS_READINGS, CONTEXTS, facets,
                                         filter_answers, is_benchmark_run, option_roles, OUTCOMES)
from evalcore.report.fairness import DEFAULT_THRESHOLD
from pages import _shared

ALL = "all"
OUTCOME_COLORS = {"correct": "green", "wrong": "red", "unparsed": "gray"}
BIAS_COLORS = {"biased": "orange", "counter-stereotype": "blue", "unknown": "violet",
               "no target": "gray", "unparsed": "gray"}
CSS = """<style>
.bbq-q{white-space:pre-wrap;margin:0 0 6px 0}
.bbq-opt{margin:2px 0;padding:2px 8px;border-radius:6px}
.bbq-opt.picked{background:rgba(255,196,0,.25);font-weight:600}
.bbq-tag{font-size:.8em;opacity:.8;margin-left:8px}
.bbq-reply{white-space:pre-wrap;font-family:monospace;font-size:.9em;padding:6px 8px;
 border-radius:6px;background:rgba(128,128,128,.12);margin-top:4px}
</style>"""


@st.cache_data(max_entries=4, show_spinner="Reading the answers...")
def _answers(db_url: str, run_id: int, state: tuple[str, int]) -> list[dict[str, Any]]:
    """Every answer of the run, cached per `_shared.run_state`."""
    return bbq_answers(_shared.engine(), run_id)


def _pick(column: Any, label: str, counts: dict[str, int], order: tuple[str, ...] | None,
          key: str) -> str | None:
    """A select box of the values with their counts ("all" first); None for all."""
    values = [v for v in (order or sorted(counts)) if v in counts]
    options = [ALL, *values]
    total = sum(counts.values())
    chosen = column.selectbox(label, options, key=key, format_func=lambda v: (
        f"all ({total})" if v == ALL else f"{v} ({counts[v]})"))
    return None if chosen in (None, ALL) else chosen


def options_html(roles: list[dict[str, Any]], reply: Any, error: Any,
                 question: str | None = None) -> str:
    """The options (the picked one marked, each with its tags), then the raw reply (or why
    there is none), all escaped: the body of a BBQ/CBBQ or CrowS-Pairs answer card."""
    options = "".join(
        f'<div class="bbq-opt{" picked" if "picked" in o["tags"] else ""}">'
        f'{o["index"]}. {html.escape(str(o["text"]))}'
        + (f'<span class="bbq-tag">{html.escape(" · ".join(o["tags"]))}</span>'
           if o["tags"] else "") + "</div>"
        for o in roles)
    shown = reply if reply is not None else f"(no reply: {error})"
    head = "" if question is None else f'<div class="bbq-q">{html.escape(question)}</div>'
    return f'{head}{options}<div class="bbq-reply">{html.escape(str(shown))}</div>'


def _answer_html(row: dict[str, Any]) -> str:
    return options_html(option_roles(row), row["reply"], row["error"], row["question"])


def _answer_card(row: dict[str, Any]) -> None:
    with st.container(border=True):
        st.markdown(f"**{md(question_label(row['item_idx']))}** · round {md(row['round'])} · "
                    f"{md(row['category'] or 'no category')} · {md(row['context'])} · "
                    f"{md(row['polarity'])} question")
        with st.container(horizontal=True, vertical_alignment="center"):
            st.badge(row["outcome"], color=OUTCOME_COLORS[row["outcome"]])
            st.badge(row["bias"], color=BIAS_COLORS[row["bias"]])
            picked = "nothing" if row["picked"] is None else f"option {row['picked']}"
            st.caption(f"Read: {md(picked)} · how: {md(row['read_as'])}")
        st.html(_answer_html(row))


def decision_threshold(run_id: int) -> float | None:
    """The fairness page's decision threshold input, drawn only where it applies; None for
    a bias benchmark run (BBQ / CBBQ / CrowS-Pairs), scored by the option picked, with no
    1-10 score to threshold."""
    if is_benchmark_run(_shared.engine(), run_id):
        return None
    return float(st.number_input("Decision threshold (score >= this counts as recommended)",
                                 min_value=1.0, max_value=10.0, value=DEFAULT_THRESHOLD,
                                 step=0.5, key="fairness.threshold"))


def browse(rows: list[dict[str, Any]], filters: list[tuple[str, str, tuple[str, ...] | None]],
           select: Callable[..., list[dict[str, Any]]], facet_counts: dict[str, dict[str, int]],
           key: str, explain: str, card: Callable[[dict[str, Any]], None]) -> None:
    """An expander with one select box per filter `(field, label, order)` (values counted in
    `facet_counts`), a page number, the matching answers' cards (`card`) and a caption that
    ends with `explain`: the answer browser of BBQ/CBBQ and CrowS-Pairs runs alike."""
    with st.expander(f"Answers one by one ({len(rows)})", expanded=False):
        cols = st.columns(len(filters) + 1)
        chosen = {field: _pick(col, label, facet_counts[field], order, f"{key}.{field}")
                  for col, (field, label, order) in zip(cols, filters)}
        shown = select(rows, **chosen)
        page = int(cols[-1].number_input("Page", min_value=1, value=1, step=1,
                                         key=f"{key}.page"))
        part, pages = answer_page(shown, page)
        st.caption(f"{len(shown)} of {len(rows)} answers match; page {min(page, pages)} of "
                   f"{md(pages)}. {md(explain)}")
        st.html(CSS)
        for row in part:
            card(row)
        if not part:
            st.info("No answer matches these filters.")


def answer_browser(run_id: int) -> None:
    """The run's BBQ / CBBQ answers, filtered and paged."""
    rows = _answers(_shared.settings().db_url, run_id, _shared.run_state(run_id))
    if rows:
        browse(rows, [("context", "Context", CONTEXTS), ("category", "Category", None),
                      ("outcome", "Answer", OUTCOMES), ("bias", "Counts as", BIAS_READINGS)],
               filter_answers, facets(rows), "fairness.bbq", "'Counts as' is the answer's "
               "part in the bias score: the stereotyped answer (biased), the other group, "
               "UNKNOWN, or left out (no target found, or no option read).", _answer_card)
