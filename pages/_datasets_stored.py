"""The Datasets page's lower half: the stored datasets, deleting one (with the way out
when runs or attack sets still use it) and browsing a dataset's items.

Split from pages/datasets.py (the import half) to keep each file short. Buttons act in
callbacks; the queries run in evalcore (`dataset_users`, `store.run_items.list_items`).
"""
from __future__ import annotations

from typing import Any

import streamlit as st

from evalcore.service.datasets import delete_dataset, delete_dataset_and_runs, list_items
from evalcore.service.runs import get_run
from evalcore.dataset import dataset_users, list_datasets
from evalcore.dataset.numbering import question_label
from evalcore.errors import EvalcoreError
from evalcore.markup import md
from pages import _shared

BROWSE_ROWS = 50  # stored items per page
ANYWAY = "datasets.anyway"  # the file (token) whose content is stored already: offer "Import anyway"
OUTCOME = "datasets.outcome"  # (token, kind, message) of the last import click, shown once
BLOCKED = "datasets.blocked"  # a dataset whose deletion runs or attack sets refused


def _ask_delete() -> None:
    st.session_state["datasets.confirm_delete"] = st.session_state.get("datasets.delete_target")


def _deleted(message: str) -> None:
    """After a delete: the import messages about the old dataset are stale, so they go, and
    the whole page is redrawn (not only the fragment)."""
    state = st.session_state
    for key in (OUTCOME, ANYWAY, BLOCKED):
        state.pop(key, None)
    state["datasets.delete_result"] = ("done", message)
    state["datasets.redraw"] = True


def _confirm_delete(name: str) -> None:
    st.session_state.pop("datasets.confirm_delete", None)
    try:
        users = dataset_users(_shared.engine(), name)
        if users["runs"] or users["attack_sets"]:  # the page offers the way out
            st.session_state[BLOCKED] = name
            return
        delete_dataset(_shared.actor(), _shared.engine(), name)
    except EvalcoreError as exc:
        st.session_state["datasets.delete_result"] = ("error", str(exc))
    else:
        _deleted(f"Deleted dataset '{name}'.")


def _delete_with_runs(name: str) -> None:
    try:
        _, runs = delete_dataset_and_runs(_shared.actor(), _shared.engine(), name)
    except EvalcoreError as exc:
        st.session_state["datasets.delete_result"] = ("error", str(exc))
    else:
        _deleted(f"Deleted {len(runs)} run(s) ({', '.join(map(str, runs))}) and dataset "
                 f"'{name}'.")


def _cancel_delete() -> None:
    st.session_state.pop("datasets.confirm_delete", None)
    st.session_state.pop(BLOCKED, None)


def blocked_panel(name: str) -> None:
    """What keeps `name` from being deleted, and the way out (no CLI needed)."""
    try:
        users = dataset_users(_shared.engine(), name)
    except EvalcoreError:
        st.session_state.pop(BLOCKED, None)
        return
    sets, runs = users["attack_sets"], users["runs"]
    if sets:
        st.warning(f"Dataset '{md(name)}' has {len(sets)} attack set(s) ("
                   + ", ".join(f"#{md(i)} {md(n)}" for i, n in sets[:10])
                   + "): delete them on the Attacks page first.")
        st.page_link("pages/attacks.py", label="Open the Attacks page",
                     icon=":material/arrow_forward:")
    if runs:
        st.warning(f"Dataset '{md(name)}' is used by {len(runs)} run(s): their results would lose "
                   "their questions. Look at them on Results, or delete them with the dataset.")
        rows = []
        for run_id in runs[:100]:
            run = get_run(_shared.engine(), run_id)
            rows.append({"run": run.id, "kind": run.kind, "model": run.model,
                         "status": run.status, "created": run.created_at})
        st.dataframe(rows, hide_index=True, key="datasets.blocking_runs")
        st.page_link("pages/results.py", label="Open the Results page",
                     icon=":material/arrow_forward:")
        if not sets:
            _shared.allowed_button(f"Delete these {len(runs)} run(s) and dataset '{name}'",
                                   "delete", key="datasets.delete_with_runs", type="primary",
                                   on_click=_delete_with_runs, args=(name,))
    st.button("Keep it", key="datasets.blocked_cancel", on_click=_cancel_delete)


@st.fragment
def stored_datasets() -> None:
    """The stored datasets, and deleting one after a confirmation (reruns only this part).

    Buttons act in callbacks, which run before the fragment draws, so the table is never
    stale; a delete redraws the whole page, so no message about the old dataset stays.
    """
    if st.session_state.pop("datasets.redraw", False):
        st.rerun(scope="app")
    st.subheader("Stored datasets")
    result = st.session_state.pop("datasets.delete_result", None)
    if result:
        (st.success if result[0] == "done" else st.error)(md(result[1]))  # plain text
    datasets = list_datasets(_shared.engine())
    if not datasets:
        st.info("No datasets yet: upload a file or load a bundled sample above.")
        return
    _dataset_table(datasets)
    blocked = st.session_state.get(BLOCKED)
    if blocked:
        blocked_panel(blocked)
        return
    pending = st.session_state.get("datasets.confirm_delete")
    if pending:
        st.warning(f"Delete dataset '{md(pending)}' and all its items? This cannot be undone.")
        yes, no = st.columns(2)
        yes.button("Yes, delete", key="datasets.delete_confirm", type="primary",
                   on_click=_confirm_delete, args=(pending,))
        no.button("Cancel", key="datasets.delete_cancel", on_click=_cancel_delete)
        return
    denied = _shared.why_not("delete")
    if denied:
        st.caption(f"Deleting datasets: {md(denied)}")
        return
    left, right = st.columns([3, 1], vertical_alignment="bottom")
    target = left.selectbox("Dataset to delete", [d.name for d in datasets], index=None,
                            placeholder="Choose a dataset", key="datasets.delete_target")
    right.button("Delete...", key="datasets.delete", disabled=target is None,
                 on_click=_ask_delete)


@st.fragment
def browse_items() -> None:
    """A stored dataset's items, a page at a time, searched in the database."""
    datasets = list_datasets(_shared.engine())
    if not datasets:
        return
    st.subheader("Browse items")
    by_id = {d.id: d for d in datasets}
    left, middle, right = st.columns([2, 2, 1], vertical_alignment="bottom")
    dataset_id = left.selectbox("Dataset", list(by_id), key="datasets.browse",
                                format_func=lambda i: f"{by_id[i].name} ({by_id[i].item_count} "
                                                      "items)")
    search = middle.text_input("Search question, options, answer or id", key="datasets.browse_search",
                               placeholder="a word, Q12 ...").strip()
    page_key = f"datasets.browse_page.{dataset_id}.{search}"  # a new search starts at page 1
    page = int(st.session_state.get(page_key, 1))
    rows, total = list_items(_shared.engine(), int(dataset_id), search=search,
                             offset=(page - 1) * BROWSE_ROWS, limit=BROWSE_ROWS)
    pages = max(1, -(-total // BROWSE_ROWS))
    right.number_input(f"Page (of {pages})", min_value=1, max_value=pages, step=1,
                       key=page_key)
    if not rows:
        st.info(f"No item of '{md(by_id[dataset_id].name)}' contains '{md(search)}'." if search
                else "This dataset has no items.")
        return
    first = (page - 1) * BROWSE_ROWS + 1
    matching = f"{total} of {by_id[dataset_id].item_count} items match" if search else \
        f"{total} items"
    st.caption(f"{md(matching)} · showing {md(first)}-{md(first + len(rows) - 1)}")

    rows = [{"Q": question_label(r["number"] - 1), **r} for r in rows]
    st.dataframe(rows, hide_index=True, key="datasets.browse_table",
                 column_order=["Q", "question", "reference", "choices", "task_type",
                               "language"])


def _dataset_table(datasets: list[Any]) -> None:
    rows = [{"name": d.name, "format": d.format, "task type": d.task_type,
             "language": d.language, "items": d.item_count, "created": d.created_at,
             "source file": d.source_file, "imported by": d.created_by} for d in datasets]
    st.dataframe(rows, hide_index=True,
                 column_config={"created": st.column_config.DatetimeColumn(
                     format="YYYY-MM-DD HH:mm")})
