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
    MappingGuess,
    NameTakenError,
    ParsedDataset,
    detect_format,
    guess_file_mapping,
    list_formats,
    parse_dataset,
    read_table,
)
from evalcore.service.datasets import store_parsed
from evalcore.dataset.numbering import question_label
from evalcore.dataset.prompt_file import with_prompt_hint
from evalcore.dataset.readers import SUPPORTED_SUFFIXES, sha256_of
from evalcore.dataset.workbook import SeveralSheetsError
from evalcore.error_text import shown_list
from evalcore.errors import DatasetError, DuplicateDatasetError, EvalcoreError
from evalcore.markup import code_text, md
from pages import _datasets_stored, _shared

PREVIEW_ROWS = 20
ANYWAY = _datasets_stored.ANYWAY
OUTCOME = _datasets_stored.OUTCOME
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
    denied = _shared.why_not("import")
    kind = st.radio("Source", ["Upload a file", "Bundled sample"], key="datasets.source",
                    horizontal=True, label_visibility="collapsed", disabled=denied is not None)
    if denied:  # no upload, no parse: a role that cannot import spends no server memory
        st.file_uploader("Question file (CSV, JSONL, JSON or XLSX)", type=UPLOAD_TYPES,
                         key="datasets.upload", disabled=True, help=denied)
        st.caption(md(denied))
        return None
    if kind == "Upload a file":
        upload = st.file_uploader("Question file (CSV, JSONL, JSON or XLSX)", type=UPLOAD_TYPES,
                                  key="datasets.upload")
        return (upload.name, upload.getvalue()) if upload is not None else None
    samples = {p.name: p for p in sample_files()}
    chosen = st.selectbox("Bundled sample", list(samples), index=None,
                          placeholder="Choose a sample file", key="datasets.sample")
    return (chosen, samples[chosen].read_bytes()) if chosen else None


@st.cache_data(show_spinner="Reading the file...", max_entries=16)
def _columns(data: bytes, filename: str, sheet: str | None) -> list[str]:
    return [str(c) for c in read_table(data, filename, sheet=sheet).columns]


@st.cache_data(show_spinner="Reading the answers...", max_entries=16)
def _guess(data: bytes, filename: str, sheet: str | None = None) -> MappingGuess:
    return guess_file_mapping(data, filename, sheet)


@st.cache_data(show_spinner="Checking every row...", max_entries=16)
def _parse(data: bytes, filename: str, fmt: str, mapping: dict[str, Any] | None,
           sheet: str | None) -> ParsedDataset:
    return parse_dataset(data, filename, format=fmt, mapping=mapping, sheet=sheet)


def _pick_sheet(sheets: list[str]) -> str | None:
    sheet = st.selectbox("Sheet", sheets, index=None, key="datasets.sheet",
                         placeholder="Choose the sheet to import")
    if sheet is None:
        st.info(f"This workbook has {len(sheets)} sheets with data: choose the one to import.")
    return sheet


def _sheet_and_columns(data: bytes, filename: str) -> tuple[str | None, list[str]] | None:
    """The file's columns; for a workbook with several sheets holding data, the sheet the
    user picks in a box first. None (with the reason drawn) until there are columns."""
    sheets = st.session_state.get("datasets.sheets")
    sheet = _pick_sheet(sheets) if sheets else None
    if sheets and sheet is None:
        return None
    try:
        return sheet, _columns(data, filename, sheet)
    except SeveralSheetsError as exc:
        st.session_state["datasets.sheets"] = exc.sheets
        _pick_sheet(exc.sheets)
    except DatasetError as exc:
        st.error(str(with_prompt_hint(exc, data, filename)))
    return None


def _prefill_mapping(found: MappingGuess, force: bool) -> None:
    """Put evalcore's guess into the mapping widgets (on a new file, or when they reappear)."""
    guess = found.mapping
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


def preview(parsed: ParsedDataset, guess: MappingGuess | None = None) -> None:
    """What the import will store: counts, the task type and whether it was guessed from
    the answers, repairs made while reading, the first items."""
    st.markdown(f"**{len(parsed.questions)} items** · format `{code_text(parsed.format)}` · "
                f"task type `{code_text(parsed.task_type)}` · language "
                f"`{code_text(parsed.language)}`")
    guessed = guess.mapping if guess is not None and guess.task_reason else None
    if guessed is not None and guessed.task_type == parsed.task_type:
        st.caption(f"Task type **{md(parsed.task_type)}** guessed from the answers: "
                   f"{md(guess.task_reason)}. It picks how replies are scored; change it in "
                   "the mapping if it is wrong.")
    for note in parsed.meta.get("repairs", []):
        st.warning(f"Repaired while reading: {md(note)}")
    for note in parsed.meta.get("warnings", []):
        st.warning(f"Check before importing: {md(note)}")

    rows = [{"Q": question_label(q.idx), "question": q.question, "reference": q.reference,
             "choices": q.choices, "task_type": q.task_type, "language": q.language}
            for q in parsed.questions[:PREVIEW_ROWS]]
    st.dataframe(rows, hide_index=True, key="datasets.preview_table",
                 column_order=["Q", "question", "reference", "choices", "task_type",
                               "language"])


def _store(parsed: ParsedDataset, token: str, allow_duplicate: bool) -> None:
    """Button callback: store the file under the name in the field, and leave the outcome
    in words of this page (the evalcore messages name CLI flags)."""
    state = st.session_state
    name = str(state.get("datasets.name", ""))
    again = "Import anyway" if state.get(ANYWAY) == token else "Import"
    try:
        dataset = store_parsed(_shared.actor(), _shared.engine(), parsed, name=name,
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
        state["datasets.browse"] = dataset.id  # Browse shows what was just imported
        outcome = ("success", f"Imported '{dataset.name}': {dataset.item_count} items.")
    state[OUTCOME] = (token, *outcome)


def _show_outcome(token: str) -> None:
    """The last import click's outcome, once (the "Import anyway" offer stays meanwhile)."""
    outcome = st.session_state.pop(OUTCOME, None)
    if outcome and outcome[0] == token:
        getattr(st, outcome[1])(md(outcome[2]))  # names and messages: plain text


def import_panel(filename: str, data: bytes) -> None:
    """Detect, map, preview and import one file: the single path for uploads and samples."""
    token = f"{filename}:{sha256_of(data)}"
    if st.session_state.get("datasets.token") != token:  # a new file: start from evalcore's guesses
        st.session_state["datasets.token"] = token
        st.session_state["datasets.format"] = "auto"
        st.session_state.pop(OUTCOME, None)
        st.session_state.pop("datasets.sheet", None)
        st.session_state.pop("datasets.sheets", None)
        new_file = True
    else:
        new_file = False
    if new_file:
        st.session_state.pop(ANYWAY, None)
    if new_file or "datasets.name" not in st.session_state:
        st.session_state["datasets.name"] = Path(filename).stem
    found = _sheet_and_columns(data, filename)
    if found is None:
        return
    sheet, columns = found

    detected = detect_format(columns)
    names = [spec.name for spec in list_formats()]
    auto_label = f"auto (recognised: {detected.name})" if detected else "auto (not recognised)"
    fmt = st.selectbox("Format", ["auto", *names, "mapped"], key="datasets.format",
                       format_func=lambda v: auto_label if v == "auto" else v)
    guess: MappingGuess | None = None
    if detected is not None:
        st.success(f"Recognised format **{md(detected.name)}**: {md(detected.description)} "
                   f"(task type {md(detected.task_type)}).")
    else:  # column names are the file's text: shown as typed, never read as Markdown
        try:
            guess = _guess(data, filename, sheet)
        except DatasetError as exc:
            st.error(str(exc))
            return
        listed = shown_list(columns, bare=True)
        if guess.certain:
            st.success(f"No known format; columns guessed from their names: "
                       f"{md(guess.describe())}. "
                       "The mapping below is prefilled with it; change it if needed.")
        elif guess.mapping is not None:
            st.info(f"No known format has these columns ({md(listed)}). Guessed from "
                    f"their names and prefilled below: {md(guess.describe())}; but "
                    f"{md(guess.question_for_user())}. Check the mapping below.")
        else:
            st.info(f"No known format has these columns ({md(listed)}) and "
                    f"{md(guess.question_for_user())}: nothing could be guessed, choose the "
                    "columns below.")

    mapping: dict[str, Any] | None = None
    if fmt == "mapped" or (fmt == "auto" and detected is None):
        _prefill_mapping(_guess(data, filename, sheet), force=new_file)
        mapping = mapping_form(columns)
        if mapping is None:
            return
    try:
        parsed = _parse(data, filename, "mapped" if mapping else fmt, mapping, sheet)
    except DatasetError as exc:
        st.error(str(exc))
        return
    preview(parsed, guess if mapping else None)

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


_shared.page_setup("Datasets", "Import question files (CSV, JSONL, JSON, XLSX): the format is "
                   "recognised or you map the columns; every row is checked before anything "
                   "is stored.")
source = pick_source()
if source is not None:
    import_panel(*source)
st.divider()
_datasets_stored.stored_datasets()
_datasets_stored.browse_items()
