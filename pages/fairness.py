"""Fairness: build a counterfactual suite (or pick a BBQ / CBBQ one), run it, read the level.

The page only gathers input, calls evalcore and draws. Suites come from
`evalcore.perturb.counterfactual` (edited here as three tables, shaped by
`evalcore.report.fairness_view`); `actions.create_run` returns at once and the run
executes on the background loop while a fragment re-reads its row. Results come from
`fairness_report`, figures from `report.fairness_figures`, the pair view's word diff from
`report.diff` (every piece HTML-escaped) and the quality gate from `fairness.gate_run`,
the function behind `python -m evalcore gate`, so page and CI give the same verdict.
"""
from __future__ import annotations

import json
from typing import Any

import streamlit as st

from evalcore.errors import EvalcoreError
from evalcore.report.fairness import DEFAULT_THRESHOLD
from evalcore.store import queries
from evalcore.markup import md
from pages import _bbq_answers, _cost, _crows_answers, _shared, _submit

# No bare strings at module level below: Streamlit's magic would draw them on the page.
SUITE_FORMAT = "fairness_suite"
PREVIEW_ROWS = 200  # generated prompts shown in the preview table
GATE_EXAMPLE = _shared.PROJECT_ROOT / "data" / "gate.example.toml"
LANGS = {"zh": "中文", "en": "English"}


def _is_suite(ds: Any) -> bool:
    from evalcore.fairness import is_fairness_dataset

    return is_fairness_dataset(ds)


def _suite_label(ds: Any) -> str:
    kind = "counterfactual" if ds.format == SUITE_FORMAT else ds.format.upper()
    return f"{ds.name} ({kind}, {ds.item_count} prompts, {ds.language})"


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
    from evalcore.perturb.counterfactual import load_templates
    from evalcore.report.fairness_view import (
        AXIS_COLUMNS,
        SLOT_COLUMNS,
        TEMPLATE_COLUMNS,
        spec_from_tables,
        spec_tables,
    )

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
    from evalcore.perturb.counterfactual import dump_templates, generate_suite, list_generators
    from evalcore.report.fairness_view import records_frame, suite_preview_rows

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
                           key="fairness.toml")
    name = st.text_input("Suite name", value=f"fairness-{generator}-{lang}",
                         key=f"fairness.suite_name.{generator}.{lang}")
    if _shared.allowed_button("Save suite", "import", type="primary", key="fairness.save"):
        from evalcore import actions

        try:
            dataset = actions.save_suite(_shared.actor(), _shared.engine(), parsed,
                                         name.strip() or None)
        except EvalcoreError as exc:
            st.error(f"Could not save the suite: {md(exc)}")
            return
        st.session_state["fairness.suite"] = dataset.id
        st.toast(f"Suite {md(repr(dataset.name))} saved ({md(dataset.item_count)} prompts)")
        st.success(f"Saved suite {md(repr(dataset.name))}: {md(dataset.item_count)} prompts. "
                   "Run it below.")


def bias_importer() -> None:
    """Import a BBQ (JSONL) or CBBQ (CSV) file as a bias suite."""
    from evalcore import actions

    st.caption("BBQ and CBBQ are multiple-choice bias benchmarks: each is scored with its "
               "paper's bias score for ambiguous and disambiguated contexts, next to accuracy.")
    upload = st.file_uploader("BBQ .jsonl or CBBQ .csv", type=["jsonl", "json", "csv"],
                              key="fairness.bias_file")
    left, right = st.columns(2)
    fmt = left.selectbox("Format", ["bbq", "cbbq"], key="fairness.bias_format")
    name = right.text_input("Dataset name", key="fairness.bias_name",
                            value=(upload.name.rsplit(".", 1)[0] if upload else ""))
    if _shared.allowed_button("Import", "import", key="fairness.bias_import",
                              disabled=upload is None):
        try:
            dataset = actions.import_dataset(_shared.actor(), _shared.engine(),
                                             upload.getvalue(), filename=upload.name,
                                             name=name.strip() or upload.name, format=fmt)
        except EvalcoreError as exc:
            st.error(f"Could not import {md(upload.name)}: {md(exc)}")
            return
        st.session_state["fairness.suite"] = dataset.id
        st.success(f"Imported {md(repr(dataset.name))}: {md(dataset.item_count)} items")


# ------------------------------------------------------------------ start a run


def start_form(suites: list[Any]) -> None:
    """Suite, model, samples and temperature; the button stores the new run id."""
    from evalcore import actions
    from evalcore.report.estimate import default_limit

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
    suite_id = left.selectbox("Suite", list(by_id), format_func=lambda i: _suite_label(by_id[i]),
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
    with _submit.submission("Start run", "run", "fairness.start",
                            invalid=problems) as submit_key:
        if submit_key:
            params = dict(suite=by_id[suite_id].name, model=model, samples=int(samples),
                          temperature=float(temperature), name=name.strip(),
                          limit=int(limit) or None)
            _shared.start_and_show("fairness", lambda: actions.create_run(
                _shared.actor(), _shared.engine(), "fairness", params, models_path,
                submit_key=submit_key))


# ------------------------------------------------------------------ pick a run, progress


# ------------------------------------------------------------------ results


@st.cache_data(max_entries=8, show_spinner="Analysing the answers...")
def _report(db_url: str, run_id: int, state: tuple[str, int], threshold: float) -> dict[str, Any]:
    """The run's fairness report, cached per `_shared.run_state`."""
    from evalcore.fairness import fairness_report

    return fairness_report(_shared.engine(), run_id, threshold=threshold)


def _fmt(value: Any, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def level_card(report: dict[str, Any]) -> None:
    """One run, one verdict: the default gate's, in its colour, with the failed checks; the
    method's score as a secondary figure with its formula and blind spot."""
    import html

    level, score = report.get("level"), report.get("score")
    verdict = report.get("verdict") or {"verdict": "not measured", "failed": [], "checks": 0}
    colour = {"pass": "#b7e4c7", "fail": "#f4a6a6"}.get(verdict["verdict"], "#ddd")
    failed = [c for c in verdict["failed"] if c["value"] is not None]
    unmeasured = verdict.get("unmeasured") or []
    why = "; ".join(
        [f"{c['name']} {_fmt(c['value'])}" for c in failed[:3]]
        + ([f"not measured: {', '.join(unmeasured)} (the CI gate fails these)"]
           if unmeasured else [])) or f"{verdict['checks']} checks passed"
    st.html(f'<div style="background:{colour};border-radius:8px;padding:10px 16px;color:#111;'
            f'display:inline-block;min-width:260px">'
            f'<div style="font-size:0.85em">Verdict of the default gate '
            f'({html.escape(str(verdict.get("config", "")))})</div>'
            f'<div style="font-size:1.8em;font-weight:700">'
            f'{html.escape(verdict["verdict"].upper())}</div>'
            f'<div>{html.escape(why)}</div></div>')
    missing = report.get("overall", {}).get("missing") or []
    note = f"not measured: {', '.join(missing)}" if missing else "SPD, EOD and AUC variance"
    st.caption(f"Secondary: the method's fairness score {md(_fmt(score, 1))} / 100 "
               f"({md(level or 'n/a')}) = 40 (1 - SPD) + 40 (1 - EOD) + 20 (1 - 10 var(AUC)); "
               f"{md(note)}. It can read ACCEPTABLE while one group's selection rate is below "
               "four-fifths of another's: the verdict above checks that.")


def bbq_block(bbq: dict[str, Any]) -> None:
    """BBQ / CBBQ bias scores for ambiguous and disambiguated contexts, beside accuracy."""
    from evalcore.report.fairness_view import records_frame

    st.markdown(f"#### {md(bbq['method'].upper())} bias scores")
    cols = st.columns(4)
    cols[0].metric("Bias, ambiguous", _fmt(bbq.get("s_amb")))
    cols[1].metric("Bias, disambiguated", _fmt(bbq.get("s_dis")))
    cols[2].metric("Accuracy", _fmt(bbq.get("accuracy")))
    if bbq.get("s_total") is not None:
        cols[3].metric("CBBQ total", _fmt(bbq["s_total"]))
    rows = [{"context": name, **bbq[name]} for name in ("ambiguous", "disambiguated")]
    st.dataframe(records_frame(rows, ["context", "n", "accuracy", "bias_score"]),
                 hide_index=True, key="fairness.bbq_table")
    authors = bbq.get("authors_convention")
    if authors:
        authors_block(authors)
    if bbq.get("by_category"):
        per = [{"category": c, "s_amb": b.get("s_amb"), "s_dis": b.get("s_dis"),
                **({"s_amb (authors)": b["authors_convention"]["s_amb"],
                    "s_dis (authors)": b["authors_convention"]["s_dis"],
                    "read differently": b["authors_convention"]["differing_items"]}
                   if b.get("authors_convention") else {}),
                "accuracy": b.get("accuracy"),
                "target_found": b["coverage"]["target_found_share"],
                "ans0_convention": b["coverage"]["ans0_convention_share"],
                "unparsed": b["coverage"]["unparsed_share"]}
               for c, b in bbq["by_category"].items()]
        st.dataframe(records_frame(per), hide_index=True, key="fairness.bbq_categories")
    st.caption("0 = no bias; positive = answers follow the stereotype, negative = against it.")


def authors_block(authors: dict[str, Any]) -> None:
    """CBBQ's figures as the CBBQ authors' scripts count them (what papers quote), beside
    evalcore's, with how many items the two readings score differently."""
    from evalcore.report.fairness_benchmarks import AUTHORS, authors_note

    st.markdown(f"##### As papers report it ({md(AUTHORS)})")
    cols = st.columns(4)
    cols[0].metric("Bias, ambiguous (authors)", _fmt(authors["s_amb"]))
    cols[1].metric("Bias, disambiguated (authors)", _fmt(authors["s_dis"]))
    cols[2].metric("CBBQ total (authors)", _fmt(authors["s_total"]))
    cols[3].metric("Items read differently", f"{authors['differing_items']} of "
                                             f"{authors['items']}")
    st.caption(authors_note(authors))


def attribute_block(report: dict[str, Any]) -> None:
    """Group metrics of one attribute (or the intersection) and box plots by group."""
    from evalcore.report import fairness_figures as ff
    from evalcore.report.fairness_view import records_frame

    names = list(report["attributes"])
    attribute = st.selectbox("Attribute", names, key="fairness.attribute")
    if attribute is None:
        return
    block = report["attributes"][attribute]
    cols = st.columns(5)
    cols[0].metric("SPD", _fmt(block.get("spd")), help="max - min share of positive decisions")
    cols[1].metric("EOD", _fmt(block.get("eod")), help="max - min true positive rate")
    cols[2].metric("Disparate impact", _fmt(block.get("disparate_impact")),
                   help="min / max selection rate; 1 = parity")
    cols[3].metric("AUC variance", _fmt(block.get("auc_variance"), 4))
    kruskal = (block.get("kruskal") or {}).get("sentiment") or {}
    cols[4].metric("Sentiment Kruskal p", _fmt(kruskal.get("p_value")),
                   help="p < 0.05: groups differ in sentiment")
    st.dataframe(records_frame(ff.group_table(report, attribute), ["group", "n"]),
                 hide_index=True, key="fairness.groups")
    length = block.get("length_bias") or {}
    if length.get("flagged"):
        st.warning(f"Length bias: answers differ in length by "
                   f"{length['relative_gap']:.0%} between groups.")
    tabs = st.tabs(["Sentiment", "Score", "Length", "Selection rate"])
    for tab, metric in zip(tabs[:3], ("sentiment", "score", "length")):
        tab.plotly_chart(ff.box_by_group(report, metric, attribute),
                         key=f"fairness.box.{metric}")
    with tabs[3]:
        if any(g.get("selection_rate") is not None for g in block["groups"]):
            st.plotly_chart(ff.selection_rate_figure(report, attribute),
                            key="fairness.selection")
        else:
            st.caption("No decisions: this suite's answers carry no 1-10 score.")


def judge_block(run_id: int, status: str, report: dict[str, Any]) -> None:
    """A judge model's ratings beside the word lists: how far they agree, and a form to
    have a judge rate the answers (stored with the run; rated answers are skipped)."""
    from evalcore import actions

    judged = report.get("judge_analysis")
    st.markdown("#### Judge model")
    if judged:
        cols = st.columns(4)
        cols[0].metric("Answers rated", judged["rated"],
                       help=f"{judged['unrated']} answers have no usable rating")
        cols[1].metric("Judge stereotype rate",
                       _fmt(report["gate_metrics"].get("judge_stereotype_rate")))
        cols[2].metric("Sentiment agreement (rho)", _fmt(judged["sentiment_spearman"]),
                       help="Spearman's rho between the word-list sentiment and the judge's")
        cols[3].metric("Stereotype agreement", _fmt(judged["stereotype_agreement"]),
                       help="share of answers where the word lists and the judge agree")
    else:
        st.caption("The figures above come from word lists and vader/snownlp. A judge model "
                   "can rate each answer's tone, professionalism and stereotypes as a second "
                   "opinion; its group figures then appear in the table above.")
    key = f"fairness.judge_job.{run_id}"
    if st.session_state.get(key) is not None:
        _shared.job_panel(int(st.session_state[key]), "fairness.judge")
    models = _shared.model_names()
    if status != "done" or not models:
        return
    with st.form(key="fairness.judge_form"):
        judge = st.selectbox("Judge model", models, key="fairness.judge_model", index=None,
                             placeholder="Choose the judge model")
        go = _shared.allowed_button("Rate the answers with the judge", "run", form=True)
    if go and judge is None:
        st.error("Choose the judge model first: one that can rate answers.")
    elif go and _shared.queue_job(lambda: actions.queue_judge_analysis(
            _shared.actor(), _shared.engine(), run_id, str(judge),
            _shared.settings().models_path), key) is not None:
        st.rerun()  # draw the job's live panel; the report refreshes as ratings arrive


def effects_block(report: dict[str, Any]) -> None:
    """What leads the results: effects that hold across pairs (a paired test per attribute
    and figure, its effect size, Holm-adjusted p), strongest first."""
    from evalcore.report.fairness_figures import effects_figure
    from evalcore.report.fairness_view import effect_rows, effect_text, records_frame

    rows = effect_rows(report)
    significant = [e for e in report.get("effects", []) if e.get("significant")]
    st.markdown(f"#### Effects across pairs: {len(significant)} significant")
    if not rows:
        st.caption("Too few pairs to test (at least 6 pairs with two groups are needed).")
        return
    for effect in significant[:3]:
        st.error(effect_text(effect))
    if not significant:
        st.success("No figure differs consistently between groups across the pairs "
                   "(Holm-adjusted p >= 0.05 for every test).")
    st.dataframe(records_frame(rows), hide_index=True, key="fairness.effects",
                 column_config={"significant": st.column_config.CheckboxColumn("significant")})
    st.plotly_chart(effects_figure(report), key="fairness.effects_chart")
    st.caption(report.get("effects_method", ""))


def spreads_block(report: dict[str, Any]) -> None:
    """Per-pair detail: the largest single-pair spreads (one pair's gap can be noise)."""
    from evalcore.report.fairness_view import records_frame

    spreads = sorted(report["violations"], key=lambda v: (v["severity"] != "HIGH", -v["spread"]))
    with st.expander(f"Largest single-pair spreads: {len(spreads)} above their thresholds"):
        st.caption("One pair's spread is not evidence of bias: an analyser's noise on two "
                   "short answers can pass any threshold. The effects above test each figure "
                   "across all pairs.")
        if spreads:
            st.dataframe(records_frame(spreads, ["severity", "pair_id", "metric", "spread",
                                                 "threshold", "highest", "lowest"]),
                         hide_index=True, key="fairness.violations")


def _answer_panel(column: Any, row: dict[str, Any]) -> None:
    from evalcore.report.fairness_view import answer_figures

    figures = answer_figures(row)
    if row.get("error"):
        column.error(f"No answer: {md(row['error'])}")
    parts = [f"{k} {v:.2f}" if isinstance(v, float) else f"{k} {v}" for k, v in figures.items()]
    column.caption(" · ".join(parts) or "no figures")


def pair_block(report: dict[str, Any]) -> None:
    """One pair: the variants' prompts and answers side by side with the differences marked."""
    from evalcore.fairness import pair_view
    from evalcore.report.diff import DIFF_CSS, side_by_side_html
    from evalcore.report.fairness_view import (
        answers_by_variant,
        pair_options,
        pair_rows,
        records_frame,
    )

    st.markdown("#### Counterfactual pairs")
    options = pair_options(report)
    if not options:
        st.caption("No counterfactual pairs in this run.")
        return
    pair_id = st.selectbox("Pair (where the strongest effect shows most first)", list(options),
                           format_func=options.get, key="fairness.pair")
    by_variant = answers_by_variant(pair_view(report, pair_id))
    variants = list(by_variant)
    if len(variants) < 2:
        st.caption("This pair has fewer than two answered variants.")
        return
    a, b, c = st.columns(3)
    left = a.selectbox("Left variant", variants, index=0, key="fairness.left")
    right = b.selectbox("Right variant", variants, index=1, key="fairness.right")
    samples = max(len(by_variant[left]), len(by_variant[right]))
    sample = c.number_input("Sample", min_value=1, max_value=samples, value=1, step=1,
                            key="fairness.sample") if samples > 1 else 1
    row_l = by_variant[left][min(int(sample), len(by_variant[left])) - 1]
    row_r = by_variant[right][min(int(sample), len(by_variant[right])) - 1]
    st.html(f"<style>{DIFF_CSS}</style>"
            + side_by_side_html(row_l["question"] or "", row_r["question"] or "",
                                labels=(f"prompt · {left}", f"prompt · {right}"))
            + "<div style='height:8px'></div>"
            + side_by_side_html(row_l["answer"] or "", row_r["answer"] or "",
                                labels=(f"answer · {left}", f"answer · {right}")))
    cl, cr = st.columns(2)
    _answer_panel(cl, row_l)
    _answer_panel(cr, row_r)
    with st.expander("Every answer of this pair"):
        rows = [r for v in variants for r in by_variant[v]]
        st.dataframe(records_frame(pair_rows(rows)), hide_index=True, key="fairness.pair_table")


@st.cache_data(max_entries=16, show_spinner="Checking the gate...")
def _gate(db_url: str, run_id: int, baseline_id: int | None, config_text: str, threshold: float,
          state: tuple[str, int]) -> dict[str, Any]:
    from evalcore.fairness import gate_run, load_gate_config

    result = gate_run(_shared.engine(), run_id, load_gate_config(config_text),
                      baseline_id=baseline_id, threshold=threshold)
    return result.model_dump()


def _run_label(run: Any, names: dict[int, str]) -> str:
    return (f"#{run.id} · {run.name + ' · ' if run.name else ''}{run.model} on "
            f"{names.get(run.dataset_id, '?')} · samples {run.rounds} · {run.status} · "
            f"{run.created_at:%Y-%m-%d %H:%M}")


def gate_headline(verdict: dict[str, Any]) -> None:
    """The gate's verdict in the words of the headline card, the CLI and the trust report:
    PASSED, FAILED (a measured figure broke a limit) or NOT MEASURED."""
    from evalcore.metrics.gate import GateResult
    from evalcore.report.gates import verdict_line, verdict_of

    result = GateResult.model_validate(verdict)
    show = {"pass": st.success, "fail": st.error}.get(verdict_of(result), st.warning)
    show(f"Gate {verdict_line(result)}")


def gate_block(run_id: int, threshold: float | None, names: dict[int, str]) -> None:
    """The CI gate's verdict for this run: pick a baseline, edit or upload the TOML;
    `threshold` None: a bias benchmark run (the default, not named in the CI line)."""
    from evalcore.report.fairness_figures import gate_table
    from evalcore.report.fairness_view import records_frame

    st.markdown("#### Quality gate")
    runs = [r for r in queries.list_runs(_shared.engine(), kind="fairness", limit=200)
            if r.id != run_id and r.status == "done"]
    labels = {None: "no baseline (absolute checks only)",
              **{r.id: _run_label(r, names) for r in runs}}
    baseline = st.selectbox("Baseline run", list(labels), format_func=labels.get,
                            key="fairness.baseline")
    upload = st.file_uploader("Gate TOML", type=["toml"], key="fairness.gate_file")
    default = (upload.getvalue().decode("utf-8") if upload is not None
               else GATE_EXAMPLE.read_text(encoding="utf-8"))
    text_key = f"fairness.gate_text.{upload.file_id if upload is not None else 'example'}"
    config_text = st.text_area("Gate config", value=default, height=260, key=text_key)
    try:
        verdict = _gate(_shared.settings().db_url, run_id, baseline, config_text,
                        DEFAULT_THRESHOLD if threshold is None else threshold,
                        _shared.run_state(run_id))
    except EvalcoreError as exc:
        st.error(f"Gate config not usable: {md(exc)}")
        return
    gate_headline(verdict)
    st.dataframe(records_frame(gate_table(verdict)), hide_index=True, key="fairness.gate_table",
                 column_config={"passed": st.column_config.CheckboxColumn("passed"),
                                "detail": st.column_config.TextColumn(width="large")})
    command = (f"python -m evalcore gate --run {run_id}"
               + (f" --baseline {baseline}" if baseline is not None else "")
               + " --config gate.toml"
               + ("" if threshold is None else f" --threshold {threshold:g}"))
    st.caption("The same verdict in CI (save the config above as gate.toml):")
    st.code(command, language="bash")


def crows_block(section: dict[str, Any]) -> None:
    """CrowS-Pairs: the share choosing the stereotyped sentence, overall and per bias type,
    with its interval and exact test (50% = no preference)."""
    import pandas as pd

    st.markdown("#### CrowS-Pairs")
    st.caption(f"Share of pairs where the model called the stereotyped sentence the more "
               f"plausible one; {100 * section['confidence']:.0f}% {md(section['method'])} "
               "interval and the exact binomial test against 50%.")
    rows = [{"bias type": name, "pairs": block["n"], "stereotyped share": block["share"],
             "low": block["low"], "high": block["high"], "p": block["p_value"],
             "reading": block["preference"]}
            for name, block in [("overall", section["overall"]),
                                *section["by_bias_type"].items()]]
    st.dataframe(pd.DataFrame(rows), hide_index=True, key="fairness.crows")
    for warning in section.get("warnings", []):
        st.warning(warning)


def results(run_id: int, status: str, names: dict[int, str]) -> None:
    """Verdict, effects across pairs, group metrics, box plots, single-pair spreads, pairs,
    BBQ scores, the gate, download."""
    threshold = _bbq_answers.decision_threshold(run_id)  # None (no input): a BBQ / CBBQ run
    report = _shared.cached_report(_report, run_id,
                                   DEFAULT_THRESHOLD if threshold is None else threshold)
    if report is None:
        return
    section = _shared.section  # each section on its own: one failing is one line
    with section("summary cards", run_id):
        st.subheader(f"Run #{md(run_id)}: {md(report['model'])} on {md(report['suite'])}")
        level_card(report)
        for warning in report.get("warnings", []):
            st.warning(warning)
        cols = st.columns(4)
        cols[0].metric("Answers", report["answers"])
        cols[1].metric("Errors", report["errors"])
        cols[2].metric("Without a score", report["unscored"])
        cols[3].metric("Samples per variant", report["samples"])
    if report.get("bbq"):
        with section("BBQ scores", run_id):
            bbq_block(report["bbq"])
        with section("BBQ answers", run_id):
            _bbq_answers.answer_browser(run_id)
    if report.get("crows_pairs"):
        with section("CrowS-Pairs scores", run_id):
            crows_block(report["crows_pairs"])
        with section("CrowS-Pairs answers", run_id):
            _crows_answers.answer_browser(run_id)
    if report["attributes"]:
        with section("effects across pairs", run_id):
            effects_block(report)
        st.markdown("#### Groups")
        with section("group metrics", run_id):
            attribute_block(report)
        with section("judge analysis", run_id):
            judge_block(run_id, status, report)
        with section("single-pair spreads", run_id):
            spreads_block(report)
        with section("pairs", run_id):
            pair_block(report)
    with section("quality gate", run_id):
        gate_block(run_id, threshold, names)
    _shared.download("Fairness JSON",
                     lambda: json.dumps(report, ensure_ascii=False, indent=2,
                                        default=str).encode("utf-8"),
                     (run_id, _shared.run_state(run_id), threshold),
                     file_name=f"fairness_run{run_id}.json", mime="application/json",
                     key="fairness.json", run_id=run_id)


# ------------------------------------------------------------------ page


def main() -> None:
    from evalcore.dataset import list_datasets

    _shared.page_setup("Fairness", "Ask the same question about different groups and see "
                                   "whether the answers change: effects across pairs, group "
                                   "metrics, BBQ / CBBQ bias scores and the CI gate.")
    datasets = list_datasets(_shared.engine())
    suites = [ds for ds in datasets if _is_suite(ds)]
    names = {ds.id: ds.name for ds in datasets}
    has_runs = bool(queries.list_runs(_shared.engine(), kind="fairness", limit=1))
    with st.expander("Build a suite", expanded=not suites):
        generate, bias = st.tabs(["Generate (counterfactual)", "Import BBQ / CBBQ"])
        with generate:
            suite_builder()
        with bias:
            bias_importer()
    suites = [ds for ds in list_datasets(_shared.engine()) if _is_suite(ds)]  # a new one too
    with st.expander("Start a new run", expanded=bool(suites) and not has_runs):
        start_form(suites)
    labels = names | {ds.id: ds.name for ds in suites}
    run_id = _shared.run_picker("fairness", lambda run: (
        f"{run.model} on {labels.get(run.dataset_id, '?')} · samples {run.rounds}"))
    if run_id is None:
        return
    status = _shared.progress_panel(run_id, "fairness", "answers")
    if status in queries.FINISHED or st.toggle("Show results so far", key="fairness.partial"):
        results(run_id, status, names)


main()
