"""Fairness page, the result blocks: level card, BBQ and CrowS-Pairs scores, group
metrics, judge analysis, effects across pairs, single-pair spreads and the pair view.
Figures come from `report.fairness_charts`, tables from `report.fairness_view`, the
pair view's word diff from `report.diff` (every piece HTML-escaped)."""
from __future__ import annotations

import html
from typing import Any

import streamlit as st

from evalcore.service.judging import queue_judge_analysis
from evalcore.fairness import fairness_report, pair_view
from evalcore.markup import md
from evalcore.report import fairness_charts as ff
from evalcore.report.diff import DIFF_CSS, side_by_side_html
from evalcore.report.fairness_benchmarks import AUTHORS, authors_note
from evalcore.report.fairness_charts import effects_figure
from evalcore.report.gates import verdict_reason
from evalcore.report.fairness_view import (answer_figures, answers_by_variant, effect_rows,
                                           effect_text, pair_options, pair_rows, records_frame)
from pages import _shared


@st.cache_data(max_entries=8, show_spinner="Analysing the answers...")
def fairness_report_cached(db_url: str, run_id: int, state: tuple[str, int],
                           threshold: float) -> dict[str, Any]:
    """The run's fairness report, cached per `_shared.run_state`."""
    return fairness_report(_shared.engine(), run_id, threshold=threshold)


def _fmt(value: Any, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def level_card(report: dict[str, Any]) -> None:
    """One run, one verdict: the default gate's, in its colour, with the failed checks; the
    method's score as a secondary figure with its formula and blind spot."""
    level, score = report.get("level"), report.get("score")
    verdict = report.get("verdict") or {"verdict": "not measured", "failed": [], "checks": 0}
    colour = {"pass": "#b7e4c7", "fail": "#f4a6a6"}.get(verdict["verdict"], "#ddd")
    why = verdict_reason(verdict)
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
    rates = ff.rate_words(report, attribute)
    st.caption(md(rates) if rates else "No decisions to give a rate per group: this "
               "suite's answers carry no 1-10 score.")
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
    elif go and _shared.queue_job(lambda: queue_judge_analysis(
            _shared.actor(), _shared.engine(), run_id, str(judge),
            _shared.settings().models_path), key) is not None:
        st.rerun()  # draw the job's live panel; the report refreshes as ratings arrive


def effects_block(report: dict[str, Any]) -> None:
    """What leads the results: effects that hold across pairs (a paired test per attribute
    and figure, its effect size, Holm-adjusted p), strongest first."""
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
    figures = answer_figures(row)
    if row.get("error"):
        column.error(f"No answer: {md(row['error'])}")
    parts = [f"{k} {v:.2f}" if isinstance(v, float) else f"{k} {v}" for k, v in figures.items()]
    column.caption(" · ".join(parts) or "no figures")


def pair_block(report: dict[str, Any]) -> None:
    """One pair: the variants' prompts and answers side by side with the differences marked."""
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
