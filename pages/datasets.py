"""Datasets: bring a question file in (upload or bundled sample), check it, store it; list, delete.

Reading, format detection, mapping and storage all happen in `evalcore.dataset`; this
page only collects the choices and draws what evalcore returns. The upload and the
bundled-sample paths end in the same `import_panel(filename, data)`, so tests that pick a
sample (or upload bytes through AppTest) exercise exactly what a browser upload does.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import streamlit as st

from evalcore.dataset import (
    TASK_TYPES,
    NameTakenError,
    ParsedDataset,
    dataset_users,
    detect_format,
    guess_mapping,
    list_datasets,
    list_formats,
    parse_dataset,
    read_table,
    suggest_mapping,
)
from evalcore import actions
from evalcore.dataset.readers import SUPPORTED_SUFFIXES, sha256_of
from evalcore.errors import DatasetError, DuplicateDatasetError, EvalcoreError
from pages import _shared

PREVIEW_ROWS = 20
BROWSE_ROWS = 50  # stored items per page
ANYWAY = "datasets.anyway"  # the file (token) whose content is stored already: offer "Import anyway"
OUTCOME = "datasets.outcome"  # (token, kind, message) of the last import click, shown once
BLOCKED = "datasets.blocked"  # a dataset whose deletion runs or attack sets refused
UPLOAD_TYPES = [s.lstrip(".") for s in SUPPORTED_SUFFIXES]
MAP = "datasets.map."  # prefix of the column-mapping widget keys


def sample_files() -> list[Path]:
    """The bundled samples (mapping sidecars `*.mapping.json` are not datasets)."""
    folder = _shared.SAMPLES_DIR
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir() if p.suffix.lower() in SUPPORTED_SUFFIXES
                  and not p.name.endswith(".mapping.json"))


def pick_source() -> tuple[str, bytes] | None:
    """Where the file comes from: an upload or a bundled sample. Returns (filename, bytes)."""
    kind = st.radio("Source", ["Upload a file", "Bundled sample"], key="datasets.source",
                    horizontal=True, label_visibility="collapsed")
    if kind == "Upload a file":
        upload = st.file_uploader("Question file (CSV, JSONL, JSON or XLSX)", type=UPLOAD_TYPES,
                                  key="datasets.upload")
        return (upload.name, upload.getvalue()) if upload is not None else None
    samples = {p.name: p for p in sample_files()}
    chosen = st.selectbox("Bundled sample", list(samples), index=None,
                          placeholder="Choose a sample file", key="datasets.sample")
    return (chosen, samples[chosen].read_bytes()) if chosen else None


@st.cache_data(show_spinner="Reading the file...", max_entries=16)
def _columns(data: bytes, filename: str) -> list[str]:
    return [str(c) for c in read_table(data, filename).columns]


@st.cache_data(show_spinner="Checking every row...", max_entries=16)
def _parse(data: bytes, filename: str, fmt: str, mapping: dict[str, Any] | None) -> ParsedDataset:
    return parse_dataset(data, filename, format=fmt, mapping=mapping)


def _prefill_mapping(columns: list[str], force: bool) -> None:
    """Put evalcore's guess into the mapping widgets (on a new file, or when they reappear)."""
    guess = suggest_mapping(columns)
    choices = guess.choices if guess else None
    values = {
        "question": guess.question_columns() if guess else [],
        "reference": guess.reference if guess else None,
        "choices": [choices] if isinstance(choices, str) else list(choices or []),
        "separator": "",
        "task_type": guess.task_type if guess else "open",
        "language": "auto",
        "index_base": 0,
    }
    for field, value in values.items():
        if force or MAP + field not in st.session_state:
            st.session_state[MAP + field] = value


def mapping_form(columns: list[str]) -> dict[str, Any] | None:
    """Column mapping widgets; returns the mapping as evalcore's ColumnMapping fields."""
    st.markdown("**Column mapping**: which columns hold what. Columns not used are kept as "
                "item metadata.")
    left, right = st.columns(2)
    question = left.multiselect("Question column(s)", columns, key=MAP + "question",
                                help="Several columns are joined with a line break "
                                     "(e.g. context + question).")
    reference = left.selectbox("Reference answer column", columns, index=None,
                               placeholder="(none)", key=MAP + "reference")
    choices = left.multiselect("Option columns", columns, key=MAP + "choices",
                               help="One column per option; or ONE column holding all options "
                                    "as a JSON list or text split by the separator.")
    separator = left.text_input("Separator for a single options column", key=MAP + "separator",
                                help="Empty = the cell is a JSON list like [\"a\", \"b\"].")
    task_type = right.selectbox("Task type", TASK_TYPES, key=MAP + "task_type")
    language = right.selectbox("Language", ["auto", "zh", "en"], key=MAP + "language",
                               help="auto = detected per question")
    index_base = right.selectbox("Numeric option references count from", [0, 1],
                                 key=MAP + "index_base")
    if not question:
        st.info("Choose the question column to see a preview.")
        return None
    return {"question": question if len(question) > 1 else question[0],
            "reference": reference,
            "choices": (choices[0] if len(choices) == 1 else choices) or None,
            "choices_separator": separator or None,
            "task_type": task_type, "language": language, "index_base": index_base}


def preview(parsed: ParsedDataset) -> None:
    """What the import will store: counts, repairs made while reading, the first items."""
    st.markdown(f"**{len(parsed.questions)} items** · format `{parsed.format}` · task type "
                f"`{parsed.task_type}` · language `{parsed.language}`")
    for note in parsed.meta.get("repairs", []):
        st.warning(f"Repaired while reading: {note}")
    rows = [q.model_dump(include={"idx", "question", "reference", "choices", "task_type",
                                  "language"}) for q in parsed.questions[:PREVIEW_ROWS]]
    st.dataframe(rows, hide_index=True,
                 column_order=["idx", "question", "reference", "choices", "task_type",
                               "language"])


def _store(parsed: ParsedDataset, token: str, allow_duplicate: bool) -> None:
    """Button callback: store the file under the name in the field, and leave the outcome
    in words of this page (the evalcore messages name CLI flags)."""
    state = st.session_state
    name = str(state.get("datasets.name", ""))
    again = "Import anyway" if state.get(ANYWAY) == token else "Import"
    try:
        dataset = actions.store_parsed(_shared.actor(), _shared.engine(), parsed, name=name,
                                       allow_duplicate=allow_duplicate)
    except DuplicateDatasetError as exc:
        state[ANYWAY] = token
        existing = getattr(exc, "existing", None)
        outcome = ("warning", f"This file's content was already imported as dataset "
                              f"'{existing}'. Use that one, or store a second copy with "
                              "Import anyway." if existing else str(exc))
    except NameTakenError as exc:
        outcome = ("warning", f"A dataset named '{exc.name}' already exists: rename this one "
                              f"in the Dataset name field above and click {again} again, or "
                              "delete the old one under Stored datasets.")
    except EvalcoreError as exc:  # a bad file, or a role that may not import
        outcome = ("error", str(exc))
    else:
        state.pop(ANYWAY, None)
        outcome = ("success", f"Imported '{dataset.name}': {dataset.item_count} items.")
    state[OUTCOME] = (token, *outcome)


def _show_outcome(token: str) -> None:
    """The last import click's outcome, once (the "Import anyway" offer stays meanwhile)."""
    outcome = st.session_state.pop(OUTCOME, None)
    if outcome and outcome[0] == token:
        getattr(st, outcome[1])(outcome[2])


def import_panel(filename: str, data: bytes) -> None:
    """Detect, map, preview and import one file: the single path for uploads and samples."""
    token = f"{filename}:{sha256_of(data)}"
    if st.session_state.get("datasets.token") != token:  # a new file: start from evalcore's guesses
        st.session_state["datasets.token"] = token
        st.session_state["datasets.format"] = "auto"
        st.session_state.pop(OUTCOME, None)
        new_file = True
    else:
        new_file = False
    if new_file:
        st.session_state.pop(ANYWAY, None)
    if new_file or "datasets.name" not in st.session_state:
        st.session_state["datasets.name"] = Path(filename).stem
    try:
        columns = _columns(data, filename)
    except DatasetError as exc:
        st.error(str(exc))
        return

    detected = detect_format(columns)
    names = [spec.name for spec in list_formats()]
    auto_label = f"auto (recognised: {detected.name})" if detected else "auto (not recognised)"
    fmt = st.selectbox("Format", ["auto", *names, "mapped"], key="datasets.format",
                       format_func=lambda v: auto_label if v == "auto" else v)
    if detected is not None:
        st.success(f"Recognised format **{detected.name}**: {detected.description} "
                   f"(task type {detected.task_type}).")
    else:
        guess = guess_mapping(columns)
        if guess.certain:
            st.success(f"No known format; columns guessed from their names: {guess.describe()}. "
                       "The mapping below is prefilled with it; change it if needed.")
        elif guess.mapping is not None:
            st.info(f"No known format has these columns ({', '.join(columns)}). Guessed from "
                    f"their names and prefilled below: {guess.describe()}; but "
                    f"{guess.question_for_user()}. Check the mapping below.")
        else:
            st.info(f"No known format has these columns ({', '.join(columns)}) and "
                    f"{guess.question_for_user()}: nothing could be guessed, choose the "
                    "columns below.")

    mapping: dict[str, Any] | None = None
    if fmt == "mapped" or (fmt == "auto" and detected is None):
        _prefill_mapping(columns, force=new_file)
        mapping = mapping_form(columns)
        if mapping is None:
            return
    try:
        parsed = _parse(data, filename, "mapped" if mapping else fmt, mapping)
    except DatasetError as exc:
        st.error(str(exc))
        return
    preview(parsed)

    st.text_input("Dataset name", key="datasets.name")
    denied = _shared.why_not("import")
    left, right, _ = st.columns([1, 1, 3])
    left.button("Import", key="datasets.import", type="primary", disabled=denied is not None,
                help=denied, on_click=_store, args=(parsed, token, False))
    if st.session_state.get(ANYWAY) == token:  # stays after a rename, until it is stored
        right.button("Import anyway", key="datasets.import_anyway", disabled=denied is not None,
                     on_click=_store, args=(parsed, token, True),
                     help="Store a second copy of content that is already stored (dataset "
                          "names are unique: give it its own name above)")
    if denied:
        st.caption(denied)
    _show_outcome(token)


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
        actions.delete_dataset(_shared.actor(), _shared.engine(), name)
    except EvalcoreError as exc:
        st.session_state["datasets.delete_result"] = ("error", str(exc))
    else:
        _deleted(f"Deleted dataset '{name}'.")


def _delete_with_runs(name: str) -> None:
    try:
        _, runs = actions.delete_dataset_and_runs(_shared.actor(), _shared.engine(), name)
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
    from evalcore.store.queries import get_run

    try:
        users = dataset_users(_shared.engine(), name)
    except EvalcoreError:
        st.session_state.pop(BLOCKED, None)
        return
    sets, runs = users["attack_sets"], users["runs"]
    if sets:
        st.warning(f"Dataset '{name}' has {len(sets)} attack set(s) ("
                   + ", ".join(f"#{i} {n}" for i, n in sets[:10])
                   + "): delete them on the Attacks page first.")
        st.page_link("pages/attacks.py", label="Open the Attacks page",
                     icon=":material/arrow_forward:")
    if runs:
        st.warning(f"Dataset '{name}' is used by {len(runs)} run(s): their results would lose "
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
        (st.success if result[0] == "done" else st.error)(result[1])
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
        st.warning(f"Delete dataset '{pending}' and all its items? This cannot be undone.")
        yes, no = st.columns(2)
        yes.button("Yes, delete", key="datasets.delete_confirm", type="primary",
                   on_click=_confirm_delete, args=(pending,))
        no.button("Cancel", key="datasets.delete_cancel", on_click=_cancel_delete)
        return
    denied = _shared.why_not("delete")
    if denied:
        st.caption(f"Deleting datasets: {denied}")
        return
    left, right = st.columns([3, 1], vertical_alignment="bottom")
    target = left.selectbox("Dataset to delete", [d.name for d in datasets], index=None,
                            placeholder="Choose a dataset", key="datasets.delete_target")
    right.button("Delete...", key="datasets.delete", disabled=target is None,
                 on_click=_ask_delete)


@st.fragment
def browse_items() -> None:
    """A stored dataset's items, a page at a time, searched in the database."""
    from evalcore.store.queries import list_items

    datasets = list_datasets(_shared.engine())
    if not datasets:
        return
    st.subheader("Browse items")
    by_id = {d.id: d for d in datasets}
    left, middle, right = st.columns([2, 2, 1], vertical_alignment="bottom")
    dataset_id = left.selectbox("Dataset", list(by_id), key="datasets.browse",
                                format_func=lambda i: f"{by_id[i].name} ({by_id[i].item_count} "
                                                      "items)")
    search = middle.text_input("Search question, answer or id", key="datasets.browse_search",
                               placeholder="a word, a number ...").strip()
    page_key = f"datasets.browse_page.{dataset_id}.{search}"  # a new search starts at page 1
    page = int(st.session_state.get(page_key, 1))
    rows, total = list_items(_shared.engine(), int(dataset_id), search=search,
                             offset=(page - 1) * BROWSE_ROWS, limit=BROWSE_ROWS)
    pages = max(1, -(-total // BROWSE_ROWS))
    right.number_input(f"Page (of {pages})", min_value=1, max_value=pages, step=1,
                       key=page_key)
    if not rows:
        st.info(f"No item of '{by_id[dataset_id].name}' contains '{search}'." if search
                else "This dataset has no items.")
        return
    first = (page - 1) * BROWSE_ROWS + 1
    matching = f"{total} of {by_id[dataset_id].item_count} items match" if search else \
        f"{total} items"
    st.caption(f"{matching} · showing {first}-{first + len(rows) - 1}")
    st.dataframe(rows, hide_index=True, key="datasets.browse_table",
                 column_order=["number", "question", "reference", "choices", "task_type",
                               "language"])


def _dataset_table(datasets: list[Any]) -> None:
    rows = [{"name": d.name, "format": d.format, "task type": d.task_type,
             "language": d.language, "items": d.item_count, "created": d.created_at,
             "source file": d.source_file, "imported by": d.created_by} for d in datasets]
    st.dataframe(rows, hide_index=True,
                 column_config={"created": st.column_config.DatetimeColumn(
                     format="YYYY-MM-DD HH:mm")})


_shared.page_setup("Datasets", "Import question files (CSV, JSONL, JSON, XLSX): the format is "
                   "recognised or you map the columns; every row is checked before anything "
                   "is stored.")
source = pick_source()
if source is not None:
    import_panel(*source)
st.divider()
stored_datasets()
browse_items()
