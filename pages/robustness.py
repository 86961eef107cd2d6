"""Robustness: ask the clean questions and their approved attacked versions, N rounds each.

The page only gathers input, calls evalcore and draws. `service.runs.create_run` returns
at once and the run executes on the process-wide background loop; its progress lives in the
database, which a fragment re-reads while the run is live. Results come from
`robustness_report`, shaped by `evalcore.report.robustness_charts`, and the changes of
each attacked question are drawn by `evalcore.report.diff` (every text HTML-escaped).
"""
from __future__ import annotations

import json
from typing import Any

import streamlit as st

from evalcore.service.runs import FINISHED, create_run, list_runs
from evalcore.dataset import list_datasets
from evalcore.dataset.numbering import question_label
from evalcore.metrics.stability import MAX_ROUNDS
from evalcore.perturb.review import review_progress
from evalcore.perturb.sets import list_attack_sets
from evalcore.report.diff import DIFF_CSS, side_by_side_html
from evalcore.report.estimate import robustness_calls
from evalcore.report.robustness import robustness_report
from evalcore.report.robustness_charts import (accuracy_figure, fragile_figure, fragile_label, fragile_rows,
                                                level_rows)
from evalcore.markup import code_text, md
from pages import _cost, _shared, _submit, _variants

# No bare strings at module level below: Streamlit's magic would draw them on the page.


# ------------------------------------------------------------------ start a run


def _set_label(s: Any, approved: int) -> str:
    return f"#{s.id} · {s.name} · {s.level} · {approved} / {s.item_count} approved"


def start_form(datasets: list[Any], sets: list[Any]) -> None:
    """Widgets for a new run; the button stores the new run id in the session."""
    if not sets:
        st.info("No attack sets yet: generate and review one on the Attacks page first.")
        return
    models_path = _shared.settings().models_path
    models = _shared.model_names()
    if not models:
        return
    eng = _shared.engine()
    names = {ds.id: ds.name for ds in datasets}
    sources = sorted({s.source_dataset_id for s in sets})
    left, right = st.columns(2)
    source = left.selectbox("Dataset", sources, format_func=lambda i: names.get(i, f"#{i}"),
                            key="robustness.dataset")
    candidates = [s for s in sets if s.source_dataset_id == source]
    approved = {s.id: review_progress(eng, int(s.id))["approved"] for s in candidates}
    chosen = left.multiselect("Attack sets (their approved items are used)",
                              [s.id for s in candidates],
                              default=[s.id for s in candidates if approved[s.id]][:3],
                              format_func=lambda i: _set_label(
                                  next(s for s in candidates if s.id == i), approved[i]),
                              key=f"robustness.sets.{source}")
    model = left.selectbox("Model", models, key="robustness.model",
                              index=_shared.default_model_index(models))
    judge = right.selectbox("Judge", ["rules", *models], key="robustness.judge",
                            help="`rules`: the task type's scorer; or a model that judges "
                                 "each answer 0/1")
    problems: list[str] = []  # out-of-range numbers: the start is refused, saying why
    rounds = _submit.number_field(right, "Rounds N (each question is asked N times)", low=1,
                                  high=MAX_ROUNDS, value=3, step=1, key="robustness.rounds",
                                  problems=problems, name="Rounds N")
    style = right.radio("Prompt", ["zero", "few"], horizontal=True, key="robustness.style",
                        format_func={"zero": "zero-shot", "few": "few-shot"}.get)
    name = st.text_input("Run name (optional)", key="robustness.name")
    pairs = sum(approved.get(i, 0) for i in chosen)
    st.caption(f"{md(pairs)} approved attacked questions and their clean questions (a clean "
               f"question attacked by several sets counts once), each asked {int(rounds)} "
               f"time(s)")
    _cost.power_caption(source, "robustness", pairs, int(rounds))
    st.caption("Option order and templates (asked after the run, under its results) ask "
               "the clean questions again: circular n - 1 extra calls per choice question "
               "of n options, shuffle:N N, each template 1.")
    empty = [i for i in chosen if not approved[i]]
    if chosen and not empty:
        _cost.time_caption(model, robustness_calls(eng, [int(i) for i in chosen], int(rounds)),
                           judge)
    if empty:
        st.warning("No approved item yet in " + ", ".join(
            f"#{md(i)}" for i in empty) + ": approve attacked questions on the Attacks page, "
            "or leave these sets out.")
    with _submit.submission("Start robustness run", "run", "robustness.start",
                            disabled=not chosen or bool(empty), invalid=problems) as submit_key:
        if submit_key:
            params = dict(attack_set_ids=[int(i) for i in chosen], model=model,
                          rounds=int(rounds), dataset=int(source), judge=judge,
                          prompt_style=style, name=name.strip())
            _shared.start_and_show("robustness", lambda: create_run(
                _shared.actor(), eng, "robustness", params, models_path,
                submit_key=submit_key))


# ------------------------------------------------------------------ results


@st.cache_data(max_entries=16, show_spinner="Building the report...")
def _report(db_url: str, run_id: int, state: tuple[str, int]) -> dict[str, Any]:
    """The run's report, cached per `_shared.run_state`."""
    return robustness_report(_shared.engine(), run_id)


def _p(value: Any) -> str:
    return "-" if value is None else f"{value:.3g}"


def _pct(value: Any) -> str:
    return "-" if value is None else f"{value:.1%}"


def _interval_help(figures: dict[str, Any] | None) -> str | None:
    """'95% interval 61.2% to 70.4%' of an accuracy, or None without one."""
    ci = (figures or {}).get("accuracy_ci")
    return None if not ci else f"95% interval {ci[0]:.1%} to {ci[1]:.1%}"


def level_cards(report: dict[str, Any]) -> None:
    """Per level: clean vs attacked accuracy, PDR, flips, McNemar, paired test, consistency."""
    for row in level_rows(report):
        summary = report["levels"][row["level"]]
        st.markdown(f"**{md(row['level'])} level** · {md(row['questions'])} attacked questions")
        cols = [*st.columns(3), *st.columns(3)]
        drop = row["accuracy_drop"]
        intervals = summary.get("intervals") or {}
        cols[0].metric("Accuracy clean", _pct(row["accuracy_clean"]),
                       help=_interval_help(intervals.get("clean")))
        cols[1].metric("Accuracy attacked", _pct(row["accuracy_attacked"]),
                       delta=_shared.change_delta(None if drop is None else -drop),
                       help=_interval_help(intervals.get("attacked")))
        cols[2].metric("PDR", _pct(row["pdr"]), help=row["pdr_why_none"] or
                       "1 - accuracy attacked / accuracy clean")
        if row["pdr"] is None and row["pdr_why_none"]:
            st.caption(f"PDR not computed: {md(row['pdr_why_none'])}")
        cols[3].metric("Flips", f"{row['right_to_wrong']} ↓ / {row['wrong_to_right']} ↑",
                       help="right → wrong / wrong → right (majority verdict of the N rounds)")
        cols[4].metric("McNemar p", _p(row["mcnemar_p"]),
                       help="exact test on the discordant questions")
        paired = summary.get("paired_test")
        cols[5].metric("Paired p (Wilcoxon)", "N = 1" if paired is None else _p(row["paired_p"]),
                       help="signed-rank test of per-question success rates (N > 1)")
        if intervals.get("words"):
            st.caption(md(intervals["words"]) + " (intervals over the clean questions: the "
                       "versions of one question count as one draw)")
        consistency = summary.get("consistency") or {}
        st.caption(f"Answer consistency clean vs attacked: ROUGE-L "
                   f"{md(_p(consistency.get('rouge_l')))} · same final answer "
                   f"{md(_pct(consistency.get('same_answer')))} over "
                   f"{md(consistency.get('questions_compared', 0))} questions")


def flips_section(report: dict[str, Any]) -> None:
    """The questions that flipped, right -> wrong and wrong -> right."""
    columns = ["level", "question", "original", "attacked", "reference", "clean_rate",
               "attacked_rate", "clean_answers", "attacked_answers"]
    r2w, w2r = report["flips"]["right_to_wrong"], report["flips"]["wrong_to_right"]
    tabs = st.tabs([f"Right → wrong ({len(r2w)})", f"Wrong → right ({len(w2r)})"])
    for tab, rows, key in zip(tabs, (r2w, w2r), ("r2w", "w2r")):
        with tab:
            if not rows:
                st.caption("None.")
                continue

            st.dataframe([{c: r.get(c) for c in columns}
                          | {"question": question_label(int(r["question"]) - 1)}
                          for r in rows], hide_index=True,
                         key=f"robustness.flips.{key}", column_config={
                             "original": st.column_config.TextColumn(width="large"),
                             "attacked": st.column_config.TextColumn(width="large")})


def fragile_section(report: dict[str, Any]) -> None:
    """The most fragile questions: chart, then one question's diff and answers per round."""
    rows = fragile_rows(report, top=len(report.get("fragile", [])))
    if not rows:
        st.caption("No question did worse under attack.")
        return
    st.plotly_chart(fragile_figure(report, top=15), key="robustness.fragile")
    pick = st.selectbox("Question", list(range(len(rows))), key="robustness.question",
                        format_func=lambda i: f"{fragile_label(rows[i])} · drop "
                                              f"{rows[i]['drop']:.0%} · "
                                              f"{str(rows[i]['original'])[:80]}")
    if pick is None:
        return
    row = rows[pick]
    st.markdown(f"**{md(fragile_label(row))}** · reference `{code_text(row.get('reference'))}` "
                f"· clean {md(row['clean_correct'])}/{len(row['clean_answers'])} right, attacked "
                f"{md(row['attacked_correct'])}/{len(row['attacked_answers'])} right · flags "
                f"{md(', '.join(row.get('flags') or []) or 'none')}")
    if row.get("edited_after_run"):
        st.warning("A reviewer edited this attacked question after the run: the diff shows "
                   "the current text, the run asked the one below.")
        st.text(row.get("asked_attacked", ""))
    st.html(f"<style>{DIFF_CSS}</style>" + side_by_side_html(row["original"], row["attacked"]))
    for index, before, after in row.get("options") or []:  # a word attack on the options
        st.caption(f"Option {md(chr(65 + index) if index < 26 else index + 1)} (label and "
                   "answer key unchanged)")
        st.html(side_by_side_html(before, after))
    answers = [{"round": n + 1, "clean answer": c, "attacked answer": a}
               for n, (c, a) in enumerate(zip(row["clean_answers"], row["attacked_answers"]))]
    st.dataframe(answers, hide_index=True, key="robustness.answers", column_config={
        "clean answer": st.column_config.TextColumn(width="large"),
        "attacked answer": st.column_config.TextColumn(width="large")})


CLEAN_ONLY = ("Asks the run's clean items (each once per order or template) with the run's "
              "model; the attacked items are other questions and are not asked again.")


def results(run_id: int, status: str = "done") -> None:
    """Per-level figures, flipped and fragile questions, option order and templates, the
    JSON download."""
    report = _shared.cached_report(_report, run_id)
    if report is None:
        return
    section = _shared.section  # each section on its own: one failing is one line
    with section("summary cards", run_id):
        judge = report.get("judge") or "rules"
        st.subheader(f"Run #{md(run_id)}: {md(report['model'])}, judge {md(judge)}, "
                     f"N = {md(report['rounds'])}")
        for warning in report.get("warnings", []):
            st.warning(warning)
        cols = st.columns(3)
        cols[0].metric("Clean questions", report["clean_questions"])
        cols[1].metric("Attacked questions", report["pairs"])
        cols[2].metric("Clean accuracy (all)", _pct(report.get("accuracy_clean_all")))
        nothing = report.get("nothing_to_attack") or {}
        if nothing.get("items"):
            st.caption(f"Nothing to attack in {md(nothing['items'])} of {md(nothing['of'])} "
                       "items of the attack sets (every word protected or without a safe "
                       "synonym): they are left out of the PDR.")
    with section("level cards", run_id):
        level_cards(report)
    with section("accuracy chart", run_id):
        st.plotly_chart(accuracy_figure(report), key="robustness.accuracy")
    with section("per-level table", run_id), st.expander("Per-level table"):
        st.dataframe(level_rows(report), hide_index=True, key="robustness.levels")
    with section("option order and templates", run_id):
        _variants.section(report.get("variants"), "robustness")
    if status == "done":
        _variants.form(run_id, "robustness", CLEAN_ONLY)
    st.markdown("#### Questions that flipped")
    with section("flipped questions", run_id):
        flips_section(report)
    st.markdown("#### Most fragile questions")
    with section("fragile questions", run_id):
        fragile_section(report)
    _shared.download("JSON report", lambda: json.dumps(report, ensure_ascii=False, indent=2,
                                                       default=str).encode("utf-8"),
                     (run_id, _shared.run_state(run_id)),
                     file_name=f"robustness_run{run_id}.json", mime="application/json",
                     key="robustness.json", run_id=run_id)


# ------------------------------------------------------------------ page


def main() -> None:
    _shared.page_setup("Robustness", "Ask the clean questions and their approved attacked "
                                     "versions N times each, and see how much accuracy drops.")
    eng = _shared.engine()
    has_runs = bool(list_runs(eng, kind="robustness", limit=1))
    with st.expander("Start a new run", expanded=not has_runs):
        start_form(list_datasets(eng), list_attack_sets(eng))
    run_id = _shared.run_picker("robustness", lambda run: (
        f"{run.model} · N={run.rounds} · judge {run.judge}"))
    if run_id is None:
        return
    status = _shared.progress_panel(run_id, "robustness", "calls")
    if status in FINISHED or st.toggle("Show results so far", key="robustness.partial"):
        results(run_id, status)


main()
