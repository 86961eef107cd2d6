"""Fairness: build a counterfactual suite (or pick a BBQ / CBBQ one), run it, read the level.

The page only gathers input, calls evalcore and draws. Its parts: `_fairness_suite`
(the suite builder over `evalcore.perturb.counterfactual` and the BBQ / CBBQ importer),
this module's start form (`service.runs.create_run` returns at once and the run executes on
the background loop while a fragment re-reads its row) and results layout,
`_fairness_blocks` (the result blocks over `fairness_report`) and `_fairness_gate` (the
quality gate from `fairness.gate_run`, the function behind `python -m evalcore gate`, so
page and CI give the same verdict).
"""
from __future__ import annotations

import json
from typing import Any

import streamlit as st

from evalcore.service.runs import FINISHED, create_run, list_runs
from evalcore.dataset import list_datasets
from evalcore.report.estimate import default_limit
from evalcore.report.fairness import DEFAULT_THRESHOLD
from evalcore.markup import md
from pages import _fairness_blocks as blocks
from pages import _fairness_gate, _fairness_suite
from pages import _bbq_answers, _cost, _crows_answers, _shared, _submit, _variants


# ------------------------------------------------------------------ start a run


def start_form(suites: list[Any]) -> None:
    """Suite, model, samples and temperature; the button stores the new run id."""
    if not suites:
        st.info("No fairness suites yet: generate one or import BBQ / CBBQ above.")
        return
    models_path = _shared.settings().models_path
    models = _shared.model_names()
    if not models:
        return
    by_id = {ds.id: ds for ds in suites}
    if st.session_state.get("fairness.suite") not in by_id:
        st.session_state["fairness.suite"] = suites[-1].id
    left, right = st.columns(2)
    suite_id = left.selectbox("Suite", list(by_id),
                              format_func=lambda i: _fairness_suite.suite_label(by_id[i]),
                              key="fairness.suite")
    model = left.selectbox("Model", models, key="fairness.model",
                              index=_shared.default_model_index(models))
    problems: list[str] = []  # out-of-range numbers: the start is refused, saying why
    samples = _submit.number_field(right, "Samples per variant", low=1, high=100, value=1,
                                   step=1, key="fairness.samples", problems=problems,
                                   name="Samples", help="Each prompt is asked this many times.")
    temperature = _submit.number_field(right, "Temperature", low=0.0, high=2.0, value=0.7,
                                       step=0.1, key="fairness.temperature", problems=problems,
                                       help="Samples > 1 need temperature > 0, or every "
                                            "sample is the same answer.")
    n_items = int(by_id[suite_id].item_count)
    limit = _submit.number_field(right, "Use only the first K prompts (0 = all)", low=0,
                                 high=max(n_items, 0),
                                 value=default_limit(_cost.model_entry(model), n_items), step=1,
                                 key=f"fairness.limit.{suite_id}", problems=problems, name="K",
                                 help="Defaults to a small K on the local model: a first run "
                                      "takes a minute or two, not hours.")
    name = left.text_input("Run name (optional)", key="fairness.name")
    if int(samples) > 1 and float(temperature) == 0.0:
        st.warning("With temperature 0 every sample gives the same answer.")
    items = int(limit) or n_items
    st.caption(f"{md(items)} prompts x {int(samples)} samples = "
               f"{md(items * int(samples))} answer calls")
    _cost.time_caption(model, items * int(samples))
    if by_id[suite_id].task_type == "bias_choice":  # the option-order pass, said up front
        st.caption(f"Option order (asked after the run, under its results): circular "
                   f"{md(2 * items)} extra calls (2 an item), shuffle:N N an item.")
    with _submit.submission("Start run", "run", "fairness.start",
                            invalid=problems) as submit_key:
        if submit_key:
            params = dict(suite=by_id[suite_id].name, model=model, samples=int(samples),
                          temperature=float(temperature), name=name.strip(),
                          limit=int(limit) or None)
            _shared.start_and_show("fairness", lambda: create_run(
                _shared.actor(), _shared.engine(), "fairness", params, models_path,
                submit_key=submit_key))


# ------------------------------------------------------------------ pick a run, progress


# ------------------------------------------------------------------ results

ORDERS_NOTE = ("Asks each BBQ / CBBQ item under other orders of its own three options "
               "(texts unchanged; the right, stereotyped and unknown options move with "
               "their texts). The bias score above stays the original order's; the score on "
               "each order is shown beside it.")


def results(run_id: int, status: str, names: dict[int, str]) -> None:
    """Verdict, effects across pairs, group metrics, box plots, single-pair spreads, pairs,
    BBQ scores, the gate, download."""
    threshold = _bbq_answers.decision_threshold(run_id)  # None (no input): a BBQ / CBBQ run
    report = _shared.cached_report(blocks.fairness_report_cached, run_id,
                                   DEFAULT_THRESHOLD if threshold is None else threshold)
    if report is None:
        return
    section = _shared.section  # each section on its own: one failing is one line
    with section("summary cards", run_id):
        st.subheader(f"Run #{md(run_id)}: {md(report['model'])} on {md(report['suite'])}")
        blocks.level_card(report)
        for warning in report.get("warnings", []):
            st.warning(warning)
        cols = st.columns(4)
        cols[0].metric("Answers", report["answers"])
        cols[1].metric("Errors", report["errors"])
        cols[2].metric("Without a score", report["unscored"])
        cols[3].metric("Samples per variant", report["samples"])
    if report.get("bbq"):
        with section("BBQ scores", run_id):
            blocks.bbq_block(report["bbq"])
        with section("option order", run_id):
            _variants.section(report.get("variants"), "fairness")
        if status == "done":
            _variants.form(run_id, "fairness", ORDERS_NOTE)
        with section("BBQ answers", run_id):
            _bbq_answers.answer_browser(run_id)
    if report.get("crows_pairs"):
        with section("CrowS-Pairs scores", run_id):
            blocks.crows_block(report["crows_pairs"])
        with section("CrowS-Pairs answers", run_id):
            _crows_answers.answer_browser(run_id)
    if report["attributes"]:
        with section("effects across pairs", run_id):
            blocks.effects_block(report)
        st.markdown("#### Groups")
        with section("group metrics", run_id):
            blocks.attribute_block(report)
        with section("judge analysis", run_id):
            blocks.judge_block(run_id, status, report)
        with section("single-pair spreads", run_id):
            blocks.spreads_block(report)
        with section("pairs", run_id):
            blocks.pair_block(report)
    with section("quality gate", run_id):
        _fairness_gate.gate_block(run_id, threshold, names)
    _shared.download("Fairness JSON",
                     lambda: json.dumps(report, ensure_ascii=False, indent=2,
                                        default=str).encode("utf-8"),
                     (run_id, _shared.run_state(run_id), threshold),
                     file_name=f"fairness_run{run_id}.json", mime="application/json",
                     key="fairness.json", run_id=run_id)


# ------------------------------------------------------------------ page


def main() -> None:
    _shared.page_setup("Fairness", "Ask the same question about different groups and see "
                                   "whether the answers change: effects across pairs, group "
                                   "metrics, BBQ / CBBQ bias scores and the CI gate.")
    datasets = list_datasets(_shared.engine())
    suites = [ds for ds in datasets if _fairness_suite.is_suite(ds)]
    names = {ds.id: ds.name for ds in datasets}
    has_runs = bool(list_runs(_shared.engine(), kind="fairness", limit=1))
    with st.expander("Build a suite", expanded=not suites):
        generate, bias = st.tabs(["Generate (counterfactual)", "Import BBQ / CBBQ"])
        with generate:
            _fairness_suite.suite_builder()
        with bias:
            _fairness_suite.bias_importer()
    suites = [ds for ds in list_datasets(_shared.engine())
              if _fairness_suite.is_suite(ds)]  # a new one too
    with st.expander("Start a new run", expanded=bool(suites) and not has_runs):
        start_form(suites)
    labels = names | {ds.id: ds.name for ds in suites}
    run_id = _shared.run_picker("fairness", lambda run: (
        f"{run.model} on {labels.get(run.dataset_id, '?')} · samples {run.rounds}"))
    if run_id is None:
        return
    status = _shared.progress_panel(run_id, "fairness", "answers")
    if status in FINISHED or st.toggle("Show results so far", key="fairness.partial"):
        results(run_id, status, names)


main()
