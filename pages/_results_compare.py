"""The Results page's compare tab: 2 to 8 runs of one kind side by side, the paired
findings, a per-question view, and (for exactly two stability runs) the detailed
stability comparison. Input is gathered here; every figure comes from
`evalcore.report.compare_runs` / `compare` and is drawn by `compare_charts`.
"""
from __future__ import annotations

import json
from typing import Any

import streamlit as st

from evalcore.dataset import list_datasets
from evalcore.dataset.numbering import question_label
from evalcore.errors import EvalcoreError
from evalcore.kinds import find_kind, get_kind, kind_names
from evalcore.report import compare, compare_charts
from evalcore.report.compare_runs import (compare_runs, comparison_frame, differing_questions,
                                          question_view, question_view_html)
from evalcore.service.runs import get_run, list_runs
from evalcore.markup import code_text, md
from pages import _shared

MAX_LISTED = 1000


@st.cache_data(max_entries=8, show_spinner="Comparing the runs...")
def _many(db_url: str, run_ids: tuple[int, ...], state: tuple) -> dict[str, Any]:
    """The comparison, cached per the runs' `_shared.run_state`."""
    return compare_runs(_shared.engine(), list(run_ids))


@st.cache_data(max_entries=8, show_spinner="Comparing the runs...")
def _pair(db_url: str, run_a: int, run_b: int, state: tuple) -> dict[str, Any]:
    kind = get_kind(get_run(_shared.engine(), run_a).kind)
    return kind.compare_pair(_shared.engine(), run_a, run_b)


def pick_runs() -> list[int]:
    """Kind, then 2-8 runs of it (the two newest preselected)."""
    kind = st.radio("Kind", kind_names(), horizontal=True, key="results.compare_kind")
    runs = list_runs(_shared.engine(), kind=kind, limit=MAX_LISTED)
    if len(runs) < 2:
        st.info(f"Comparing needs two {md(kind)} runs; start them on the {md(kind.title())} page.")
        return []
    names = {d.id: d.name for d in list_datasets(_shared.engine())}  # runs of one dataset
    labels = {int(r.id): (f"#{r.id} · {r.name + ' · ' if r.name else ''}{r.model} on "
                          f"{names.get(r.dataset_id, '?')} · N={r.rounds} · {r.status} · "
                          f"{r.created_at:%Y-%m-%d %H:%M}") for r in runs}
    ids = list(labels)
    default = default_pair(runs)
    chosen = st.multiselect("Runs to compare (2 to 8; the first is the baseline)", ids,
                            default=default, format_func=labels.get, max_selections=8,
                            key="results.compare_runs")
    if len(chosen) < 2:
        st.info("Pick two different runs of the same questions." if default else
                f"No two {md(kind)} runs share a dataset: runs are compared on the questions "
                "they share, so pick two runs of one dataset.")
        return []
    return [int(i) for i in chosen]


def default_pair(runs: list[Any]) -> list[int]:
    """[older, newer]: the two newest runs of one dataset (newest first in `runs`), since
    runs are compared on their shared questions and the two newest overall may share none;
    [] when no two runs share a dataset."""
    newest: dict[Any, int] = {}
    for run in runs:
        if run.dataset_id in newest:
            return [int(run.id), newest[run.dataset_id]]
        newest[run.dataset_id] = int(run.id)
    return []


def alignment_note(result: dict[str, Any]) -> None:
    align = result["alignment"]
    st.caption(f"Aligned by {md(align['by'])}: {md(align['shared'])} items in every run, "
               f"{md(align['union'])} in any.")
    lacking = [r for r in align["per_run"] if r["lacks"]]
    if lacking:
        st.warning("Some runs lack items the others have: " + "; ".join(
            f"run {md(r['run_id'])} lacks {md(r['lacks'])}" for r in lacking)
            + ". Figures on shared items use only the items in every run.")


def findings(result: dict[str, Any]) -> None:
    """Every pair's paired-test finding; the best run only when it beats every other."""
    st.markdown(f"**Paired tests** (Wilcoxon signed-rank on the shared items' success "
                f"rates, two-sided, alpha {md(result['alpha'])}):")
    for t in result["tests"]:
        st.markdown(f"- {md(t['finding'])}")
        if t.get("paired_words"):  # how big the difference is, and how sure
            st.markdown(f"  {md(t['paired_words'])}")
    if result["best"] is not None:
        st.success(f"Run {md(result['best'])} is significantly better than every other run.")
    else:
        st.info("No run is significantly better than every other.")


def kind_extras(result: dict[str, Any]) -> None:
    """Gate metric changes against the first run; fairness violations found in one run only."""
    worse = [d for d in result["gate_deltas"] if d["worse"] and d["delta"]]
    with st.expander(f"Gate metrics against run {result['runs'][0]['run']['id']} "
                     f"({len(worse)} worse)"):
        st.dataframe(result["gate_deltas"], hide_index=True, key="results.compare_deltas")
    only = {k: v for k, v in result["violations_only_in"].items() if v}
    for run_id, keys in only.items():
        st.markdown(f"Violations only in run {md(run_id)}: "
                    + ", ".join(f"`{code_text(k)}`" for k in keys))


def question_picker(result: dict[str, Any], run_ids: list[int]) -> None:
    """Pick a shared item (differing ones first) and see every run's answers to it."""
    differing = differing_questions(result)
    st.markdown(f"#### Per question ({len(differing)} of {len(result['questions'])} shared "
                "items differ)")

    if differing:
        st.dataframe([{"Q": question_label(q.get("item_idx")),
                       **{f"run {k}": v for k, v in q["rates"].items()}}
                      for q in differing], hide_index=True, key="results.compare_differ")
    labels = {q["item_id"]: question_label(q.get("item_idx")) for q in result["questions"]}
    items = [q["item_id"] for q in differing] + [q["item_id"] for q in result["questions"]
                                                 if not q["differs"]]
    item = st.selectbox("Question", items, key="results.compare_item", format_func=labels.get)
    if item is None:
        return
    view = question_view(_shared.engine(), run_ids, int(item))
    st.html(question_view_html(view))  # every text escaped in evalcore


def repeats_caption(side: dict[str, Any]) -> str:
    """mG-Pass@N, semantic entropy and judge noise of one side, in one line."""
    def num(value: Any, spec: str = ".3f") -> str:
        return "n/a" if value is None else format(value, spec)

    text = (f"mG-Pass@N {num(side.get('mg_pass_at_n'))} (right in most rounds) · "
            f"semantic entropy {num(side.get('semantic_entropy_mean'))} nats (answer spread)")
    if side.get("judge_noise") is not None:
        text += f" · judge noise {num(side['judge_noise'], '.1%')} of the verdict spread"
    if side.get("circular_accuracy") is not None:
        text += f" · circular accuracy {num(side['circular_accuracy'], '.1%')}"
    if side.get("template_spread") is not None:
        text += (f" · template spread {num(side['template_spread'], '.1%')} "
                 f"(worst {side.get('worst_template')})")
    return text


def stability_detail(run_a: int, run_b: int) -> None:
    """Two stability runs: summary cards, distributions, the rate scatter, changes."""
    result = _pair(_shared.settings().db_url, run_a, run_b,
                   (_shared.run_state(run_a), _shared.run_state(run_b)))
    a, b = result["a"], result["b"]
    for col, letter, side in zip(st.columns(2), "AB", (a, b)):
        with col.container(border=True):
            st.markdown(f"**{md(letter)}: run #{md(side['run_id'])}** {md(side['model'])} · "
                        f"N = {md(side['repetition_count'])} · {md(side['status'])}")
            cards = st.columns(3)
            cards[0].metric("Questions", side["questions"])
            cards[1].metric("Mean success rate", f"{side['mean']:.1%}")
            cards[2].metric("Std of rates", f"{side['std']:.3f}")
            st.caption(repeats_caption(side))
    st.plotly_chart(compare_charts.distributions_figure(result), key="results.compare_hist")
    if result["questions"]:
        st.plotly_chart(compare_charts.rates_scatter(result), key="results.compare_scatter")
    with st.expander("Classes, risk levels and pass^k side by side"):
        st.dataframe(compare.counts_frame(result), hide_index=True, key="results.compare_counts")
        st.dataframe(result["pass_k"], hide_index=True, key="results.compare_passk")
    changed = compare.questions_frame(result, changed_only=True)
    if not changed.empty:
        st.markdown("#### Questions that changed most")
        changed = changed.drop(columns=["item_id"]).assign(
            item_a=changed["item_a"].map(question_label),
            item_b=changed["item_b"].map(question_label))
        st.dataframe(changed, hide_index=True, key="results.compare_changed", column_config={
            "item_a": st.column_config.TextColumn("Q in A"),
            "item_b": st.column_config.TextColumn("Q in B"),
            "question": st.column_config.TextColumn(width="large"),
            "delta": st.column_config.NumberColumn("change (B - A)", format="%+.2f")})


def compare_view() -> None:
    """Pick 2-8 runs of one kind and see them side by side."""
    run_ids = pick_runs()
    if not run_ids:
        return
    result = None
    with _shared.section("comparison", run_ids):
        try:
            result = _many(_shared.settings().db_url, tuple(run_ids),
                           tuple(_shared.run_state(i) for i in run_ids))
        except EvalcoreError as exc:
            st.warning(f"Cannot compare: {md(exc)}")
    if result is None:
        return
    section = _shared.section  # each block on its own: one failing is one line
    with section("alignment note", run_ids):
        alignment_note(result)
    with section("interval chart", run_ids):
        shared = result["shared"]
        st.plotly_chart(compare_charts.interval_figure(
            [f"run {s['run_id']} · {f['run']['model']}" for s, f in zip(shared, result["runs"])],
            [s["accuracy"] for s in shared], [s["interval"] for s in shared],
            "Success rate on the shared items"), key="results.compare_intervals")
    with section("findings", run_ids):
        findings(result)
    if all("distribution" in f for f in result["runs"]):  # the kind has the 0..N bins
        with section("distributions chart", run_ids):
            st.plotly_chart(compare_charts.distributions_overlay(result),
                            key="results.compare_overlay")
    with section("comparison table", run_ids):
        st.dataframe(comparison_frame(result), hide_index=True, key="results.compare_table")
    with section("gate deltas", run_ids):
        kind_extras(result)
    with section("question view", run_ids):
        question_picker(result, run_ids)

    kind = find_kind(result["kind"])
    if kind is not None and kind.compare_pair is not None and len(run_ids) == 2:
        with st.expander(f"Two {kind.name} runs in detail", expanded=False), \
                section("two-run detail", run_ids):
            stability_detail(run_ids[0], run_ids[1])
    st.download_button("Comparison JSON",
                       json.dumps(result, ensure_ascii=False, indent=2, default=str),
                       file_name=f"compare_{'_'.join(map(str, run_ids))}.json",
                       mime="application/json", key="results.compare_json",
                       on_click="ignore")
