"""The Stability page's option-order and template part: circular accuracy beside plain
accuracy, position bias per slot, the items that follow a slot, the per-template table,
and the form that asks for them (its cost shown before the button).

Only draws what `evalcore.report.variants` put into the report and queues the job
through `evalcore.actions` (no evaluation here).
"""
from __future__ import annotations

from typing import Any, Optional

import streamlit as st

from evalcore import actions
from evalcore.errors import EvalcoreError
from evalcore.markup import md
from evalcore.prompt.variants import MAX_SHUFFLES, Template
from evalcore.runner.variants import cost_line, template_params, variants_cost
from pages import _shared

EXPLAIN = {
    "circular": "Circular accuracy (CircularEval): an item counts right only if it is right "
                "under every order of its options that was asked; plain accuracy is the "
                "original order. A model that picks a slot, not an answer, loses the "
                "difference.",
    "bias": "Position bias: per slot, how often it was chosen against how often it held "
            "the right option; a small chi-square p says the choices follow the slots more "
            "than the right answers explain.",
    "templates": "Accuracy per prompt template on the same items (Wilson 95% intervals); "
                 "the spread is best minus worst, McNemar tests best against worst on the "
                 "items both answered.",
}


def _pct(value: Optional[float]) -> str:
    return "n/a" if value is None else f"{value:.1%}"


def section(report: dict[str, Any]) -> None:
    """Circular accuracy, position bias and the per-template table, when measured."""
    import pandas as pd

    summary = report["summary"]
    if summary.get("circular_items"):
        st.markdown("#### Option order")
        cols = st.columns(3)
        low, high = summary["circular_ci"]
        cols[0].metric("Circular accuracy", _pct(summary["circular_accuracy"]),
                       help=EXPLAIN["circular"])
        cols[1].metric("Plain accuracy", _pct(summary["plain_accuracy"]))
        p = summary["position_bias_p"]
        cols[2].metric("Position bias p", "n/a" if p is None else f"{p:.3g}",
                       help=EXPLAIN["bias"])
        st.caption(f"{EXPLAIN['circular']} Circular: {_pct(low)} to {_pct(high)} (95%) over "
                   f"{summary['circular_items']} items, {summary['orders_per_item']} orders "
                   "each.")  # trusted markdown: our own text and numbers
        asked = summary["circular_items"] * summary["orders_per_item"]
        st.caption(f"{EXPLAIN['bias']} Over the {summary.get('position_bias_orders') or 0} "
                   f"of {asked} orders asked whose reply named an option; slot A is the "
                   "first option shown.")  # trusted markdown: our own text and numbers
        st.dataframe(pd.DataFrame([{"slot": s, "chosen": v["chosen"], "right": v["right"]}
                                   for s, v in summary["position_bias"].items()]),
                     hide_index=True, key="stability.position_bias", column_config={
                         "chosen": st.column_config.NumberColumn(format="percent"),
                         "right": st.column_config.NumberColumn(format="percent")})
        followers = summary.get("slot_followers") or []
        if followers:
            st.caption(f"Answer follows the slot in {len(followers)} items: " + md(", ".join(
                f"Q{f['item_idx'] + 1} ({f['slot']})" for f in followers
                if f["item_idx"] is not None)))  # trusted markdown: md() escapes the list
    if summary.get("template_accuracy"):
        st.markdown("#### Prompt templates")
        st.caption(EXPLAIN["templates"])
        st.dataframe(pd.DataFrame([
            {"template": t, "accuracy": v, "low": summary["template_ci"][t][0],
             "high": summary["template_ci"][t][1],
             "worst": "worst" if t == summary["worst_template"] else ""}
            for t, v in summary["template_accuracy"].items()]),
            hide_index=True, key="stability.templates",
            column_config={c: st.column_config.NumberColumn(format="percent")
                           for c in ("accuracy", "low", "high")})
        test = summary.get("template_mcnemar")
        line = f"Spread {_pct(summary['template_spread'])}; worst {summary['worst_template']}"
        if test:
            line += (f"; McNemar {summary['best_template']} vs {summary['worst_template']}: "
                     f"{test['b']} vs {test['c']} items, p = {test['p']:.3g}")
        st.caption(md(line) + ".")


def _nothing_to_ask(run_id: int, order: Optional[str], cost: dict[str, int]) -> str:
    """Why asking would send no call: every variant chosen is stored, or the run has no
    multiple-choice item to reorder (a button there queued a job that did nothing)."""
    if order and not sum(variants_cost(_shared.engine(), run_id, order, []).values()):
        return ("Nothing to ask: option orders apply to multiple-choice items only, and this "
                "run has none." + (" Its templates are stored already." if cost["stored"]
                                   else ""))
    return "Nothing to ask: every variant chosen is stored already (the figures are below)."


def form(run_id: int) -> None:
    """Ask the run's items under other option orders and templates: a job any worker
    executes, its calls stored with the run; the extra calls are shown before."""
    with st.expander("Option order and prompt templates: ask the items again"):
        key = f"stability.variants_job.{run_id}"
        if st.session_state.get(key) is not None:
            _shared.job_panel(int(st.session_state[key]), "stability.variants_panel")
        left, right = st.columns(2)
        mode = left.radio("Option order", ("none", "circular", "shuffles"), horizontal=True,
                          key="stability.option_order")
        shuffles = right.number_input("Shuffles", 1, MAX_SHUFFLES, 3,
                                      key="stability.shuffles", disabled=mode != "shuffles")
        order = {"none": None, "circular": "circular"}.get(str(mode), f"shuffle:{shuffles}")
        chosen = st.multiselect("Templates (2 to 6)", ["zero", "few"], default=[],
                                key="stability.templates_pick")
        own = st.text_area("Your template (placeholders {question}, {choices} ...)",
                           key="stability.template_text")
        templates = [Template(t, None, t) for t in chosen]
        try:
            if own.strip():
                from evalcore.prompt.render import check_template

                st.code(own, language=None)  # the preview of the user's template
                check_template(own)
                templates.append(Template("custom", own, "zero"))
            if templates and len(templates) < 2:
                raise EvalcoreError("pick at least 2 templates to compare (or none)")
            params = template_params(templates)
            if order is None and not params:
                st.caption("Choose an option order or 2 to 6 templates.")
                return
            cost = variants_cost(_shared.engine(), run_id, order, params)
        except EvalcoreError as exc:
            st.error(md(exc))
            return
        st.caption(md(cost_line(cost)) + ".")
        if not cost["calls"]:
            st.info(_nothing_to_ask(run_id, order, cost))
            return
        if _shared.allowed_button("Ask", "run", key="stability.variants_ask") and \
                _shared.queue_job(lambda: actions.queue_variants(
                    _shared.actor(), _shared.engine(), run_id, option_order=order,
                    templates=params), key) is not None:
            st.rerun()
