"""The option-order and template part of a run's page (Stability, Robustness, Fairness):
circular accuracy beside plain accuracy with intervals, position bias per slot, the
items that follow a slot, the per-template table, for BBQ / CBBQ the bias score on each
option order, and the form that asks for them (its cost shown before the button).

The options offered are the kind's (`EvalKind.run_options`). Only draws what
`evalcore.report.variants` put into the report and queues the job through
`evalcore.service.variants` (no evaluation here).
"""
from __future__ import annotations

from typing import Any, Optional

import streamlit as st

from evalcore.service.variants import (queue_variants, template_params, variants_cost,
                                       variants_cost_line)
from evalcore.errors import EvalcoreError
from evalcore.kinds import get_kind
from evalcore.markup import md
from evalcore.prompt.render import check_template
from evalcore.prompt.variants import MAX_SHUFFLES, Template
from evalcore.report.variants import worst_words
from pages import _shared

EXPLAIN = {
    "circular": "Circular accuracy (CircularEval): an item counts right only if it is right "
                "under every order of its options that was asked; plain accuracy is the "
                "original order. A model that picks a slot, not an answer, loses the "
                "difference.",
    "bias": "Position bias: per slot, how often it was chosen against how often it held "
            "the right option; a small chi-square p says the choices follow the slots more "
            "than the answers explain (expected: right answers where the right option "
            "sits, wrong ones spread over the other slots).",
    "templates": "Accuracy per prompt template on the same items (Wilson 95% intervals); "
                 "the spread is best minus worst, McNemar tests best against worst on the "
                 "items both answered.",
    "by_order": "The bias score recomputed on each option order asked (original option "
                "indices in the order shown; 0,1,2 is the run's own, round 1). The run's "
                "bias score above stays the original order's; a score that moves between "
                "orders follows the slots, not the groups.",
}


def _pct(value: Optional[float]) -> str:
    return "n/a" if value is None else f"{value:.1%}"


def _ci(interval: Any) -> str:
    low, high = interval or (None, None)
    return "n/a" if low is None else f"{low:.1%} to {high:.1%}"


def section(figures: Optional[dict[str, Any]], kind: str) -> None:
    """Circular accuracy, position bias, the bias score by order and the per-template
    table, when measured (`figures`: a stability summary or a report's `variants`)."""
    import pandas as pd

    figures = figures or {}
    if figures.get("circular_items"):
        st.markdown("#### Option order")
        cols = st.columns(3)
        cols[0].metric("Circular accuracy", _pct(figures["circular_accuracy"]),
                       help=EXPLAIN["circular"])
        cols[1].metric("Plain accuracy", _pct(figures["plain_accuracy"]))
        p = figures["position_bias_p"]
        cols[2].metric("Position bias p", "n/a" if p is None else f"{p:.3g}",
                       help=EXPLAIN["bias"])
        st.caption(f"{EXPLAIN['circular']} Circular {_ci(figures['circular_ci'])}, plain "
                   f"{_ci(figures.get('plain_ci'))} (Wilson 95%) over "
                   f"{figures['circular_items']} items, {figures['orders_per_item']} orders "
                   "each.")  # trusted markdown: our own text and numbers
        asked = figures["circular_items"] * figures["orders_per_item"]
        st.caption(f"{EXPLAIN['bias']} Over the {figures.get('position_bias_orders') or 0} "
                   f"of {asked} orders asked whose reply named an option; slot A is the "
                   "first option shown.")  # trusted markdown: our own text and numbers
        st.dataframe(pd.DataFrame([{"slot": s, "chosen": v["chosen"], "right": v["right"]}
                                   for s, v in figures["position_bias"].items()]),
                     hide_index=True, key=f"{kind}.position_bias", column_config={
                         "chosen": st.column_config.NumberColumn(format="percent"),
                         "right": st.column_config.NumberColumn(format="percent")})
        followers = figures.get("slot_followers") or []
        if followers:
            st.caption(f"Answer follows the slot in {len(followers)} items: " + md(", ".join(
                f"Q{f['item_idx'] + 1} ({f['slot']})" for f in followers
                if f["item_idx"] is not None)))  # trusted markdown: md() escapes the list
    by_order = figures.get("bias_score_by_order")
    if by_order:
        st.markdown("#### Bias score by option order")
        st.caption(EXPLAIN["by_order"])
        st.dataframe(pd.DataFrame([{"order": order, **v} for order, v in by_order.items()]),
                     hide_index=True, key=f"{kind}.bias_by_order")
        spread = figures.get("bias_score_range") or {}
        ranges = ", ".join(f"{score} {r[0]:.3f} to {r[1]:.3f}" for score, r in spread.items()
                           if r is not None and score != "accuracy")
        st.caption("Range over the orders: " + md(ranges) + ".")
    if figures.get("template_accuracy"):
        st.markdown("#### Prompt templates")
        st.caption(EXPLAIN["templates"])
        st.dataframe(pd.DataFrame([
            {"template": t, "accuracy": v, "low": figures["template_ci"][t][0],
             "high": figures["template_ci"][t][1],
             "worst": "worst" if t == figures["worst_template"] else ""}
            for t, v in figures["template_accuracy"].items()]),
            hide_index=True, key=f"{kind}.templates",
            column_config={c: st.column_config.NumberColumn(format="percent")
                           for c in ("accuracy", "low", "high")})
        test = figures.get("template_mcnemar")
        line = f"Spread {_pct(figures['template_spread'])}; " + worst_words(figures)
        if test:
            line += (f"; McNemar {figures['best_template']} vs {figures['worst_template']}: "
                     f"{test['b']} vs {test['c']} items, p = {test['p']:.3g}")
        st.caption(md(line) + ".")


def _templates(kind: str) -> list[Template]:
    """The templates picked (built-in and the user's, previewed and checked)."""
    chosen = st.multiselect("Templates (2 to 6)", ["zero", "few"], default=[],
                            key=f"{kind}.templates_pick")
    own = st.text_area("Your template (placeholders {question}, {choices} ...)",
                       key=f"{kind}.template_text")
    templates = [Template(t, None, t) for t in chosen]
    if own.strip():
        st.code(own, language=None)  # the preview of the user's template
        check_template(own)
        templates.append(Template("custom", own, "zero"))
    if templates and len(templates) < 2:
        raise EvalcoreError("pick at least 2 templates to compare (or none)")
    return templates


def form(run_id: int, kind: str, where: str = "") -> None:
    """Ask the run's items under other option orders (and templates, where the kind
    takes them): a job any worker executes, its calls stored with the run; the extra
    calls are shown before the button. `where`: which items are asked."""
    options = get_kind(kind).run_options
    title = "Option order and prompt templates" if "templates" in options else "Option order"
    with st.expander(f"{title}: ask the items again"):
        if where:
            st.caption(where)
        key = f"{kind}.variants_job.{run_id}"
        if st.session_state.get(key) is not None:
            _shared.job_panel(int(st.session_state[key]), f"{kind}.variants_panel")
        left, right = st.columns(2)
        mode = left.radio("Option order", ("none", "circular", "shuffles"), horizontal=True,
                          key=f"{kind}.option_order")
        shuffles = right.number_input("Shuffles", 1, MAX_SHUFFLES, 3,
                                      key=f"{kind}.shuffles", disabled=mode != "shuffles")
        order = {"none": None, "circular": "circular"}.get(str(mode), f"shuffle:{shuffles}")
        try:
            params = template_params(_templates(kind)) if "templates" in options else []
            if order is None and not params:
                st.caption("Choose an option order" + (" or 2 to 6 templates."
                                                       if "templates" in options else "."))
                return
            cost = variants_cost(_shared.engine(), run_id, order, params)
        except EvalcoreError as exc:
            st.error(md(exc))
            return
        st.caption(md(variants_cost_line(cost)) + ".")
        if not cost["calls"] + cost["stored"]:
            st.info("No item of this run can be asked another way: option orders reorder "
                    "choice items (and BBQ / CBBQ ones) only.")
            return
        if not cost["calls"]:  # a button here queued a job that did nothing
            st.info("Nothing to ask: every variant chosen is stored already (the figures "
                    "are below).")
            return
        if _shared.allowed_button("Ask", "run", key=f"{kind}.variants_ask") and \
                _shared.queue_job(lambda: queue_variants(
                    _shared.actor(), _shared.engine(), run_id, option_order=order,
                    templates=params), key) is not None:
            st.rerun()
