"""Fairness page, building a suite: the counterfactual generator's three tables
(`evalcore.perturb.counterfactual`, shaped by `evalcore.report.fairness_view`) and the
BBQ / CBBQ importer."""
from __future__ import annotations

from collections import Counter
from typing import Any

import streamlit as st

from evalcore.service.datasets import save_suite, store_parsed
from evalcore.dataset import parse_files, suggested_name
from evalcore.errors import EvalcoreError
from evalcore.fairness import is_fairness_dataset
from evalcore.markup import md
from evalcore.perturb.counterfactual import (dump_templates, generate_suite, list_generators,
                                             load_templates)
from evalcore.report.fairness_view import (AXIS_COLUMNS, records_frame, SLOT_COLUMNS,
                                           spec_from_tables, spec_tables, suite_preview_rows,
                                           TEMPLATE_COLUMNS)
from evalcore.report.overview import suite_kind
from pages import _shared

# No bare strings at module level below: Streamlit's magic would draw them on the page.
PREVIEW_ROWS = 200  # generated prompts shown in the preview table
LANGS = {"zh": "中文", "en": "English"}


def is_suite(ds: Any) -> bool:
    return is_fairness_dataset(ds)


def suite_label(ds: Any) -> str:
    return f"{ds.name} ({suite_kind(ds.format)}, {ds.item_count} prompts, {ds.language})"


# ------------------------------------------------------------------ build a suite


def _editor(rows: list[dict[str, Any]], columns: tuple[str, ...], key: str,
            config: dict[str, Any]) -> list[dict[str, Any]]:
    """A data editor over `rows` (rows can be added and deleted); returns the edited rows."""
    import pandas as pd

    frame = pd.DataFrame(rows, columns=list(columns)).astype(str)
    edited = st.data_editor(frame, num_rows="dynamic", hide_index=True, key=key,
                            column_config=config)
    return edited.to_dict("records")


def spec_editor(generator: str, lang: str) -> dict[str, Any] | None:
    """The generator's data as three editable tables; returns the edited spec (or None)."""
    try:
        spec = load_templates(generator, lang)
    except EvalcoreError as exc:
        st.error(str(exc))
        return None
    if spec.get("description"):
        st.caption(f"{md(spec['description'])} · category {md(spec.get('category', '-'))} · "
                   f"decision: {md(spec.get('decision', 'none'))}")
    tables = spec_tables(spec)
    base = f"fairness.edit.{generator}.{lang}"
    text = st.column_config.TextColumn
    tabs = st.tabs(["Templates", "Slots", "Attributes"])
    with tabs[0]:
        st.caption("`{placeholders}` come from slots and attributes. label 1 = the answer "
                   "should be positive (a strong resume), 0 = negative, empty = none.")
        templates = _editor(tables["templates"], TEMPLATE_COLUMNS, f"{base}.templates",
                            {"text": text(width="large"),
                             "label": st.column_config.SelectboxColumn(options=["", "1", "0"])})
    with tabs[1]:
        st.caption("Each combination of slot values with each template is one pair.")
        slots = _editor(tables["slots"], SLOT_COLUMNS, f"{base}.slots", {})
    with tabs[2]:
        st.caption("What varies inside a pair: one row fills one placeholder for one value of "
                   "an attribute. Repeat a row to give a list (k-th item -> k-th pair). "
                   "Placeholder `attributes` with `key=value` records another attribute the "
                   "value carries.")
        axes = _editor(tables["axes"], AXIS_COLUMNS, f"{base}.axes", {"fill": text(width="large")})
    try:
        return spec_from_tables(spec, templates, slots, axes)
    except EvalcoreError as exc:
        st.error(str(exc))
        return None


def suite_builder() -> None:
    """Pick a generator and language, edit its data, preview the prompts, save the suite."""
    left, right = st.columns(2)
    generator = left.selectbox("Generator", list_generators(), key="fairness.generator")
    lang = right.radio("Language", list(LANGS), format_func=LANGS.get, horizontal=True,
                       key="fairness.lang")
    spec = spec_editor(generator, lang)
    if spec is None:
        return
    try:
        parsed = generate_suite(generator, lang, templates=spec)
    except EvalcoreError as exc:
        st.error(f"Cannot generate the suite: {md(exc)}")
        return
    meta = parsed.meta
    st.caption(f"{len(parsed.questions)} prompts = {md(meta['pairs'])} pairs x "
               f"{md(len(parsed.questions) // max(meta['pairs'], 1))} variants · attributes: "
               f"{md(', '.join(meta['attributes']))}")
    st.dataframe(records_frame(suite_preview_rows(parsed, PREVIEW_ROWS)), hide_index=True,
                 key="fairness.preview", column_config={
                     "prompt": st.column_config.TextColumn(width="large")})
    with st.expander("The suite as TOML (for `--templates-dir` in the CLI)"):
        toml_text = dump_templates(spec)
        st.code(toml_text, language="toml")
        st.download_button("Download TOML", toml_text.encode("utf-8"),
                           file_name=f"{generator}.{lang}.toml", mime="application/toml",
                           key="fairness.toml", on_click="ignore")
    name = st.text_input("Suite name", value=f"fairness-{generator}-{lang}",
                         key=f"fairness.suite_name.{generator}.{lang}")
    if _shared.allowed_button("Save suite", "import", type="primary", key="fairness.save"):
        try:
            dataset = save_suite(_shared.actor(), _shared.engine(), parsed,
                                         name.strip() or None)
        except EvalcoreError as exc:
            st.error(f"Could not save the suite: {md(exc)}")
            return
        st.session_state["fairness.suite"] = dataset.id
        st.toast(f"Suite {md(repr(dataset.name))} saved ({md(dataset.item_count)} prompts)")
        st.success(f"Saved suite {md(repr(dataset.name))}: {md(dataset.item_count)} prompts. "
                   "Run it below.")


def bias_importer() -> None:
    """Import BBQ (JSONL) or CBBQ (CSV) files as one bias suite: CBBQ's ambiguous and
    disambiguous files of a category together, so both bias scores can be computed."""
    st.caption("BBQ and CBBQ are multiple-choice bias benchmarks: each is scored with its "
               "paper's bias score for ambiguous and disambiguated contexts, next to accuracy. "
               "Choose a category's files together (CBBQ: ambiguous.csv and "
               "disambiguous.csv) to make one suite.")
    denied = _shared.why_not("import")
    uploads = st.file_uploader("BBQ .jsonl or CBBQ .csv (one or more files)",
                               type=["jsonl", "json", "csv"], key="fairness.bias_file",
                               accept_multiple_files=True, disabled=denied is not None,
                               help=denied) or []
    left, right = st.columns(2)
    fmt = left.selectbox("Format", ["auto", "bbq", "cbbq"], key="fairness.bias_format",
                         help="auto: recognised from the columns")
    parsed = None
    if uploads:
        files = [(u.name, u.getvalue()) for u in uploads]
        try:
            parsed = _parse_bias(tuple(files), fmt)
        except EvalcoreError as exc:
            st.error(f"Could not read {md(', '.join(n for n, _ in files))}: {md(exc)}")
        else:
            token = (tuple(n for n, _ in files), fmt)
            if st.session_state.get("fairness.bias_token") != token:  # new files: new name
                st.session_state["fairness.bias_token"] = token
                st.session_state["fairness.bias_name"] = suggested_name(parsed)
            contexts = ", ".join(f"{n} {c}" for c, n in sorted(Counter(
                str(q.meta.get("context_condition") or "?") for q in parsed.questions).items()))
            st.caption(f"{md(len(parsed.questions))} items, format {md(parsed.format)} "
                       f"({md(contexts)})")
    name = right.text_input("Dataset name", key="fairness.bias_name")
    if _shared.allowed_button("Import", "import", key="fairness.bias_import",
                              disabled=parsed is None):
        try:
            dataset = store_parsed(_shared.actor(), _shared.engine(), parsed,
                                           name=name.strip() or suggested_name(parsed))
        except EvalcoreError as exc:
            st.error(f"Could not import {md(parsed.source_file)}: {md(exc)}")
            return
        st.session_state["fairness.suite"] = dataset.id
        st.success(f"Imported {md(repr(dataset.name))}: {md(dataset.item_count)} items")


@st.cache_data(show_spinner="Checking every row...", max_entries=4)
def _parse_bias(files: tuple[tuple[str, bytes], ...], fmt: str) -> Any:
    return parse_files(list(files), format=fmt)
