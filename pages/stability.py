"""Stability: ask each question N times, judge each answer 0/1, and see how often it is right.

The page only gathers input, calls evalcore and draws. `service.runs.create_run` returns
at once and the run executes on the process-wide background loop; its status and progress
live in the database, which a fragment re-reads every few seconds while the run is live (and
stops re-reading once it has finished). Results come from `stability_report`, shaped by
`evalcore.report.frames` and drawn by `evalcore.report.stability_charts`.
"""
from __future__ import annotations

import io
import json
from typing import Any

import streamlit as st

from evalcore.service.judging import queue_rejudge, rejudge_passes, reliability_line
from evalcore.service.runs import FINISHED, create_run, get_run, list_runs
from evalcore.dataset import list_datasets, load_questions
from evalcore.dataset.numbering import question_label
from evalcore.errors import EvalcoreError
from evalcore.metrics.stability import MAX_ROUNDS
from evalcore.metrics.uncertainty import se_words
from evalcore.prompt import render_prompt
from evalcore.providers.registry import get_model
from evalcore.report import stability_charts, frames, stability_cards
from evalcore.report.estimate import default_limit
from evalcore.report.stability import not_asked_line, stability_report, write_run_csv
from evalcore.dataset.language import detect_language
from evalcore.prompt.render import option_name
from evalcore.markup import code_text, md
from pages import _cost, _shared, _stability_repeats, _submit, _variants

# No bare strings at module level below: Streamlit's magic would draw them on the page.


# ------------------------------------------------------------------ start a run


SCHEDULES = {"sequential": "sequential rounds per question", "question": "question-first order",
             "round": "round-first order"}

def _dataset_label(ds: Any) -> str:
    return f"{ds.name} ({ds.item_count} items, {ds.task_type}, {ds.language})"


def prompt_preview(dataset_id: int, style: str) -> None:
    """The prompt the model will get for the dataset's first item."""
    try:
        first = load_questions(_shared.engine(), dataset_id, limit=1)
        if not first:
            st.info("This dataset has no items.")
            return
        st.code(render_prompt(first[0], style=style), language=None, wrap_lines=True)
    except EvalcoreError as exc:
        st.warning(f"No preview: {md(exc)}")


def start_form(datasets: list[Any]) -> None:
    """Widgets for a new run; the button stores the new run id in the session."""
    if not datasets:
        st.info("No datasets yet: import one on the Datasets page first.")
        return
    models_path = _shared.settings().models_path
    models = _shared.model_names()
    if not models:
        return
    by_id = {ds.id: ds for ds in datasets}
    left, right = st.columns(2)
    dataset_id = left.selectbox("Dataset", list(by_id),
                                format_func=lambda i: _dataset_label(by_id[i]),
                                key="stability.dataset")
    model = left.selectbox("Model", models, key="stability.model",
                              index=_shared.default_model_index(models))
    judge = left.selectbox("Judge", ["rules", *models], key="stability.judge",
                           help="`rules`: the task type's scorer; or a model that judges "
                                "each answer 0/1")
    problems: list[str] = []  # out-of-range numbers: the start is refused, saying why
    rounds = _submit.number_field(right, "Rounds N (each question is asked N times)", low=1,
                                  high=MAX_ROUNDS, value=5, step=1, key="stability.rounds",
                                  problems=problems, name="Rounds N")
    n_items = int(by_id[dataset_id].item_count)
    limit = _submit.number_field(right, "Use only the first K items (0 = all)", low=0,
                                 high=max(n_items, 0),
                                 value=default_limit(_cost.model_entry(model), n_items), step=1,
                                 key=f"stability.limit.{dataset_id}", problems=problems,
                                 name="K", help="Defaults to a small K on the local model: a "
                                                "first run takes a minute or two, not hours.")
    schedule = right.radio("Schedule", list(SCHEDULES), key="stability.schedule",
                           format_func=SCHEDULES.get, index=1,
                           help="Sequential: the method's recommended scheme, a question's "
                                "round k+1 only after round k came back. Question-first and "
                                "round-first keep every slot busy but send several rounds of "
                                "a question at once.")
    style = right.radio("Prompt", ["zero", "few"], horizontal=True, key="stability.style",
                        format_func={"zero": "zero-shot", "few": "few-shot"}.get)
    name = st.text_input("Run name (optional)", key="stability.name")
    budget = _submit.number_field(st, "Budget (stop before the calls cost more; 0 = no limit)",
                                  low=0.0, high=None, value=0.0, step=1.0,
                                  key="stability.budget", problems=problems, name="Budget",
                                  help="Priced with the models' price_in / price_out per "
                                       "million tokens; a stopped run resumes with a higher "
                                       "budget.")
    st.caption("Prompt preview (first item)")
    prompt_preview(dataset_id, style)
    items = int(limit) or n_items
    calls = items * int(rounds)
    st.caption(f"{md(items)} questions x {int(rounds)} rounds = {md(calls)} answer calls"
               + ("" if judge == "rules" else f" + {md(calls)} judge calls"))
    _cost.power_caption(dataset_id, "stability", items, int(rounds))
    _cost.time_caption(model, calls, judge)
    slots = _model_concurrency(model)
    if schedule == "sequential" and slots and items < slots:
        st.info(f"Sequential rounds keep at most {md(items)} of the model's {md(slots)} slots busy "
                f"(one call per question at a time): the method's cost; the run takes at "
                f"least {int(rounds)} x one call's latency.")
    _cost.estimate_caption(dataset_id, model, judge, int(rounds), int(limit) or None)
    with _submit.submission("Start run", "run", "stability.start",
                            invalid=problems) as submit_key:
        if submit_key:
            params = dict(dataset=str(dataset_id), model=model, rounds=int(rounds), judge=judge,
                          schedule=schedule, prompt_style=style, limit=int(limit) or None,
                          name=name.strip(), budget=float(budget) or None)
            _shared.start_and_show("stability", lambda: create_run(
                _shared.actor(), _shared.engine(), "stability", params, models_path,
                submit_key=submit_key))


def _model_concurrency(name: str) -> int | None:
    try:
        return int(get_model(_shared.settings().models_path, name).concurrency)
    except Exception:
        return None


# ------------------------------------------------------------------ results


@st.cache_data(max_entries=16, show_spinner="Building the report...")
def _report(db_url: str, run_id: int, state: tuple[str, int], policy: str,
            meaning: bool | str = False) -> dict[str, Any]:
    """The run's report under a failure policy (open answers grouped by meaning or not),
    cached per `_shared.run_state`."""
    return stability_report(_shared.engine(), run_id, failure_policy=policy,  # type: ignore[arg-type]
                            meaning=meaning)


def _csv(run_id: int, lang: str, policy: str) -> bytes:
    buffer = io.StringIO(newline="")
    write_run_csv(_shared.engine(), run_id, buffer, lang=lang, failure_policy=policy)  # type: ignore[arg-type]
    return buffer.getvalue().encode("utf-8")


def failure_policy() -> str:
    """The toggle for rounds without a verdict: left out (default) or wrong (the seed rule)."""
    as_wrong = st.toggle(
        "Count rounds without a verdict as wrong (the method's seed rule)",
        key="stability.errors_as_wrong",
        help="A round has no verdict when its model call or judge call still failed after "
             "all retries. Off: success rates are over the answered rounds and the errored "
             "rounds are shown next to them. On: they count as wrong answers (failure = 0).")
    return "as_wrong" if as_wrong else "exclude"


def distribution_cards(report: dict[str, Any]) -> None:
    """One coloured card per bin, N correct down to 0 (the method's summary); one card
    per stability class when N > 20 (`class_cards_view`)."""
    n = report["repetition_count"]
    if stability_cards.grouped(report):
        return class_cards_view(report)
    cards = []
    for row in frames.distribution_frame(report).itertuples(index=False):
        cards.append(
            f'<div style="background:{row.colour};border-radius:6px;padding:6px 10px;'
            f'min-width:92px;color:#111">'
            f'<div style="font-size:0.8em">{row.correct}/{n} right</div>'
            f'<div style="font-size:1.4em;font-weight:600">{row.count}</div>'
            f'<div style="font-size:0.8em">{row.percent:.1f}%</div></div>')
    incomplete = report["distribution"].get("incomplete", 0)
    if incomplete:  # questions with rounds without a verdict sit in no bin (policy exclude)
        cards.append(
            '<div style="background:#bdbdbd;border-radius:6px;padding:6px 10px;'
            'min-width:92px;color:#111">'
            '<div style="font-size:0.8em">incomplete</div>'
            f'<div style="font-size:1.4em;font-weight:600">{incomplete}</div>'
            f'<div style="font-size:0.8em">{report["distribution"]["incomplete_percent"]:.1f}%'
            '</div></div>')
    st.markdown('<div style="display:flex;flex-wrap:wrap;gap:6px">' + "".join(cards) + "</div>",
                unsafe_allow_html=True)


def class_cards_view(report: dict[str, Any]) -> None:
    """N > 20: a card per stability class (its bins' questions), the 0..N table below."""
    cards = [f'<div style="background:{c["colour"]};border-radius:6px;padding:6px 10px;'
             f'min-width:140px;color:#111"><div style="font-size:0.8em">{c["label"]}: '
             f'{c["bins"][0]}-{c["bins"][1]} right</div>'
             f'<div style="font-size:1.4em;font-weight:600">{c["count"]}</div>'
             f'<div style="font-size:0.8em">{c["percent"]:.1f}%</div></div>'
             for c in stability_cards.class_cards(report)]
    st.markdown('<div style="display:flex;flex-wrap:wrap;gap:6px">' + "".join(cards) + "</div>",
                unsafe_allow_html=True)
    with st.expander(f"All {report['repetition_count'] + 1} bins (right j of N times)"):
        st.dataframe(frames.distribution_frame(report).drop(columns=["colour"]),
                     hide_index=True, key="stability.bins_table")


def question_drilldown(report: dict[str, Any], table: Any) -> None:
    """Every round's answer, verdict, score and reason for one question."""
    n = report["repetition_count"]
    rows = {int(r.item): r for r in table.itertuples(index=False)}
    item = st.selectbox(
        "Question", list(rows), key="stability.question",
        format_func=lambda i: f"{question_label(i)} ({rows[i].correct_count}/{n}) "
                              f"{str(rows[i].question)[:90]}")
    if item is None:
        return
    chosen = rows[item]
    st.markdown(f"**Question {md(question_label(item))}** · {md(chosen.type)} · reference: "
                f"`{code_text(_reference(chosen))}`")
    st.text(str(chosen.question))
    _stability_repeats.answer_groups(report, item)
    with st.expander(f"All {n} rounds"):
        st.dataframe(frames.rounds_frame(report, item), hide_index=True,
                     key="stability.rounds_table",
                     column_config={"answer": st.column_config.TextColumn(width="large"),
                                    "reason": st.column_config.TextColumn(width="large")})


def _reference(row: Any) -> str:
    """A choice item's reference as the prompt named the option ("choice 3"), as its
    answers are grouped: the prompt said "choice 0..3", the page said 'B' and "option D"."""
    ref = str(row.standard_answer)
    if row.type == "choice" and ref.isdigit():
        return option_name(ref, detect_language(str(row.question)))
    return ref


def rejudge_default(models: list[str], report: dict[str, Any]) -> int:
    """The judge the form starts with: the run's own judge model if it still exists (its
    noise is the question), else the model the app would start a run with."""
    judge = report.get("judge_model")
    return models.index(judge) if judge in models else _shared.default_model_index(models)


def rejudge_form(run_id: int, report: dict[str, Any]) -> None:
    """Re-judge a sample of answers J times with a judge model, to tell the judge's own
    noise (flip rate, Cohen's kappa) from the model's; a job that any worker executes,
    its judgements stored with the run as they come. No st.form: Enter in a number field
    submitted it (three passes queued for one intended), and the calls/time line must
    follow K and J as they are typed; only the button queues."""
    with st.expander("Judge reliability: re-judge a sample of answers"):
        key = f"stability.rejudge_job.{run_id}"
        if st.session_state.get(key) is not None:
            _shared.job_panel(int(st.session_state[key]), "stability.rejudge")
        models = _shared.model_names()
        if not models:
            st.info("Add a judge model on the Models page first.")
            return
        judge = st.selectbox("Judge model", models, key="stability.rejudge_model",
                             index=rejudge_default(models, report),
                             help="A model that answers the 0/1 rubric; preselected: "
                                  "the run's judge (else the default model)")
        left, right = st.columns(2)
        problems: list[str] = []  # out-of-range numbers: refused, saying why
        sample = _submit.number_field(left, "Answers to re-judge (K)", low=1, high=500,
                                      value=20, step=1, key="stability.rejudge_sample",
                                      problems=problems, name="K")
        passes = _submit.number_field(right, "Judgements per answer (J)", low=2, high=10,
                                      value=3, step=1, key="stability.rejudge_passes",
                                      problems=problems, name="J")
        if not problems:
            answers = min(int(sample), get_run(_shared.engine(), run_id).done)
            _cost.time_caption(str(judge), answers * int(passes), what="Re-judging: ")
        go = _shared.allowed_button("Re-judge", "run", key="stability.rejudge_go")
        if go and problems:
            st.error(f"Not started: {md('; '.join(problems))}.")
        elif go and _shared.queue_job(lambda: queue_rejudge(
                _shared.actor(), _shared.engine(), run_id, str(judge),
                _shared.settings().models_path, sample=int(sample), passes=int(passes)),
                key) is not None:
            st.rerun()  # draw the job's live panel


def rejudge_passes_view(run_id: int) -> None:
    """Every re-judging pass of the run, and per answer the run's verdict beside each
    re-judgement and its reason."""
    import pandas as pd

    passes = rejudge_passes(_shared.engine(), run_id)
    with st.expander(f"Re-judging passes ({len(passes)})"):
        st.dataframe(pd.DataFrame([{k: p[k] for k in (
            "job_id", "judge", "at", "answers", "passes", "failed", "failed_share",
            "flip_rate", "cohen_kappa", "kappa_note", "agreement_with_run")}
            | {"degenerate": "; ".join(p.get("degenerate") or []) or "no"} for p in passes]),
            hide_index=True, key="stability.rejudge_pass_table")
        picked = st.selectbox("Pass", range(len(passes)), index=len(passes) - 1,
                              key="stability.rejudge_pass",
                              format_func=lambda i: f"#{passes[i]['job_id']} {passes[i]['judge']}")
        st.dataframe(pd.DataFrame([{
            "Q": question_label(d.get("item_idx")), "round": d["round"],
            "run verdict": d["run_verdict"],
            **{f"judgement {j + 1}": v for j, v in enumerate(d["verdicts"])},
            "reasons": " | ".join(r or "" for r in d["reasons"])}
            for d in passes[picked]["detail"]]), hide_index=True,
            key="stability.rejudge_detail")


def errored_summary(summary: dict[str, Any]) -> None:
    """Which rule the figures use for rounds without a verdict, and how many there are."""
    not_asked = not_asked_line(summary)
    if not_asked:  # a cancelled run's unasked rounds are no errors
        st.info(not_asked[0].upper() + not_asked[1:] + ".")
    errored = summary.get("errored_rounds", 0)
    if not errored:
        return
    text = (f"{errored} rounds in {summary['questions_with_errors']} questions have no verdict "
            f"(model or judge error after all retries): {summary['failure_policy_note']}.")
    if summary["failure_policy"] == "exclude":
        text += (f" {summary['incomplete_questions']} questions are incomplete and shown "
                 "apart from the 0..N bins.")
    st.warning(text)


# Pixels for the question text: with the figures before it, the table fits the page's
# ~820 px main column, so no column (the success rate was) is cut off at its right edge.
QUESTION_WIDTH = 240


def question_columns(table: Any, sort_by: str) -> list[str]:
    """The questions table's visible columns, figures first and the question text last:
    the CI width only when it is the order, the errored rounds only when there are any.
    The reference, type and counts stay in the data (the drill-down and downloads)."""
    columns = ["Q", "success_rate", "correct_count", "ci_low", "ci_high"]
    if sort_by == "ci_width":
        columns.append("ci_width")
    if sort_by == "semantic_entropy":
        columns.append("semantic_entropy")
    columns += ["class", "answers"]  # "3 answers: 6x '42', ...": the same-answer share, spelled out
    if int(table["errored"].sum()):
        columns.append("errored")
    return [*columns, "question"]


def _percent(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1%}"


def results(run_id: int, status: str) -> None:
    """Cards, figures, the questions table, the drill-down and the downloads; each section
    drawn on its own (`_shared.section`): one that fails is one line, the rest still draw."""
    policy = failure_policy()
    report = _shared.cached_report(_report, run_id, policy, _stability_repeats.meaning_toggle(run_id))
    if report is None:
        return
    section = _shared.section
    summary = report["summary"]
    with section("summary cards", run_id):
        summary_cards(run_id, report)
    with section("repeated answers", run_id):
        _stability_repeats.headline(report)
    with section("judge reliability", run_id):
        reliability = report.get("judge_reliability")
        if reliability:
            text = (f"Judge reliability ({reliability['judge']}): {reliability['answers']} "
                    f"answers re-judged {reliability['passes']} times; {reliability['failed']} "
                    f"of {reliability['judgements']} judgements failed; "
                    + reliability_line(reliability) + ".")
            unsure = reliability["flip_rate"] is None or reliability.get("degenerate")
            (st.warning if unsure else st.caption)(text)
            rejudge_passes_view(run_id)
    with section("rounds without a verdict", run_id):
        errored_summary(summary)
    if status == "done":
        rejudge_form(run_id, report)
        _variants.form(run_id, "stability")

    st.markdown("#### Questions right j times out of N")
    with section("distribution cards", run_id):
        distribution_cards(report)
    with section("histogram", run_id):
        st.plotly_chart(stability_charts.distribution_figure(report), key="stability.hist")
    left, right = st.columns(2)
    with left, section("class chart", run_id):
        st.plotly_chart(stability_charts.class_figure(report), key="stability.classes")
        st.caption(stability_charts.class_line(report))
    with right, section("risk chart", run_id):
        st.plotly_chart(stability_charts.risk_figure(report), key="stability.risk")
        st.caption(stability_charts.risk_line(report))
    with section("pass@k chart", run_id):
        st.plotly_chart(stability_charts.pass_k_figure(report), key="stability.passk")
    with section("pass@k table", run_id), st.expander("pass^k and pass@k values"):
        st.dataframe(frames.pass_k_frame(report), hide_index=True, key="stability.passk_table")
    with section("answer spread", run_id):
        _stability_repeats.section(report)
    with section("option order and templates", run_id):
        _variants.section(report["summary"], "stability")

    st.markdown("#### Questions")
    with section("questions table", run_id):
        questions_view(report, policy)

    st.markdown("#### Downloads")
    a, b, c = st.columns(3)
    state = (run_id, _shared.run_state(run_id), policy)
    for column, label, lang in ((a, "CSV (中文表头)", "zh"), (b, "CSV (English headers)", "en")):
        _shared.download(label, lambda lang=lang: _csv(run_id, lang, policy), state,
                         file_name=f"stability_run{run_id}_{lang}.csv", mime="text/csv",
                         key=f"stability.csv_{lang}", column=column, run_id=run_id)
    _shared.download("JSON", lambda: json.dumps(report, ensure_ascii=False, indent=2,
                                                default=str).encode("utf-8"),
                     state, file_name=f"stability_run{run_id}.json",
                     mime="application/json", key="stability.json", column=c, run_id=run_id)


def summary_cards(run_id: int, report: dict[str, Any]) -> None:
    """The run's title, its warnings and the six figure cards."""
    summary = report["summary"]
    judge = report.get("judge_model") or "rules"
    st.subheader(f"Run #{md(run_id)}: {md(report['model'])}, judge {md(judge)}")
    for warning in report.get("warnings", []):
        st.warning(warning)
    cols = st.columns(6)
    questions, why = stability_cards.questions_card(report)  # "4 of 10" for a partial run
    cols[0].metric("Questions", questions, help=why)
    cols[1].metric("Rounds N", report["repetition_count"])
    cols[2].metric("Mean success rate", _percent(summary["mean"]))
    cols[3].metric("Std of rates", "n/a" if summary["std"] is None else f"{summary['std']:.3f}")
    # short labels: a six-card row cuts longer ones off; the help says the rest
    cols[4].metric("No verdict", summary["errored_rounds"],
                   help="Rounds without a verdict (model or judge error after all retries)")
    cols[5].metric("Same answer", f"{report['consistency']['mean_top_share']:.1%}",
                   help="Mean share of rounds giving a question's most common answer: a "
                        "stability figure that needs no reference answer.")
    sure = se_words(summary)
    if sure:  # how sure the mean success rate is: questions are clusters of rounds
        st.caption(f"Mean success rate {md(sure)}")


def questions_view(report: dict[str, Any], policy: str) -> None:
    """The sortable questions table and the drill-down into one question's rounds."""
    sort_by = st.selectbox("Order", list(frames.SORT_KEYS), format_func=frames.SORT_KEYS.get,
                           key="stability.sort")
    table = frames.questions_frame(report, sort_by=sort_by)
    n = report["repetition_count"]
    shown = question_columns(table, sort_by)
    extra = len(shown) - 8  # CI width, entropy, errored: 72 px each, taken from the question
    st.dataframe(table, hide_index=True, key="stability.table",
                 column_order=shown, column_config={
        "Q": st.column_config.TextColumn("Q", width=48),
        "correct_count": st.column_config.NumberColumn(
            "right", width=56, help=f"Rounds judged right, of N = {n}"),
        "class": st.column_config.TextColumn("class", width=80),
        "answered": st.column_config.NumberColumn("answered", help="Rounds with a verdict"),
        "errored": st.column_config.NumberColumn(
            "errored", width=72, help="Rounds without a verdict (model or judge error after all retries)"),
        "success_rate": st.column_config.ProgressColumn(
            "success rate", format="percent", min_value=0.0, max_value=1.0, width=120,
            help="Over the answered rounds" if policy == "exclude"
            else "Over all N rounds; errored rounds count as wrong"),
        "ci_low": st.column_config.NumberColumn("CI low", format="%.3f", width=72),
        "ci_high": st.column_config.NumberColumn("CI high", format="%.3f", width=72),
        "ci_width": st.column_config.NumberColumn("CI width", format="%.3f", width=72),
        "same_answer_share": st.column_config.NumberColumn("same answer", format="percent",
                                                           width=96),
        "answers": st.column_config.TextColumn("answers", width=144,
                                               help="Distinct answers with their counts"),
        "semantic_entropy": st.column_config.NumberColumn(
            "entropy", format="%.3f", width=72, help="Semantic entropy of the answers (nats)"),
        "question": st.column_config.TextColumn(width=QUESTION_WIDTH - 48 - 72 * extra)})
    question_drilldown(report, table)


# ------------------------------------------------------------------ page


def main() -> None:
    _shared.page_setup("Stability", "Ask every question N times, judge each answer 0/1, "
                                    "and see which questions the model gets right reliably.")
    datasets = list_datasets(_shared.engine())
    has_runs = bool(list_runs(_shared.engine(), kind="stability", limit=1))
    with st.expander("Start a new run", expanded=not has_runs):
        start_form(datasets)
    names = {ds.id: ds.name for ds in datasets}
    run_id = _shared.run_picker("stability", lambda run: (
        f"{run.model} on {names.get(run.dataset_id, '?')} · N={run.rounds} · judge {run.judge}"))
    if run_id is None:
        return
    status = _shared.progress_panel(run_id, "stability", "calls")
    if status in FINISHED or st.toggle("Show results so far", key="stability.partial"):
        results(run_id, status)


main()
