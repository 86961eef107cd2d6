"""The cost estimate a start form shows before a run (`evalcore.report.cost`)."""
from __future__ import annotations

from typing import Any

import streamlit as st

from evalcore.errors import EvalcoreError
from evalcore.markup import md
from evalcore.providers.registry import get_model
from evalcore.report.cost import estimate_run_cost
from evalcore.report.estimate import estimate_calls
from evalcore.report.plan import start_line
from pages import _shared


def estimate_caption(dataset: int | str, model: str, judge: str, rounds: int,
                     limit: int | None) -> None:
    """'Estimated cost ...' from the dataset's prompt lengths and the model prices; says
    how to get one when a model has no price."""
    try:
        path = _shared.settings().models_path
        entry = get_model(path, model)
        judge_entry = None if judge == "rules" else get_model(path, judge)
        est = estimate_run_cost(_shared.engine(), dataset, entry, rounds, limit=limit,
                                judge=judge_entry)
    except EvalcoreError as exc:
        st.caption(f"No cost estimate: {md(exc)}")
        return
    tokens = f"~{est['prompt_tokens']:,} input + ~{est['completion_tokens']:,} output tokens"
    if est["cost"] is None:
        st.caption(f"{md(tokens)}; no cost estimate: set price_in / price_out (per million "
                   "tokens) for the model" + ("" if judge == "rules" else " and the judge")
                   + " on the Models page.")
    else:
        st.caption(f"{md(tokens)}: estimated cost {est['cost']:.4f} (prices per million tokens "
                   "from the model entry; answers assumed ~256 tokens).")


def model_entry(model: str) -> Any:
    """The model's entry (None when it cannot be read: the form shows that error itself)."""
    try:
        return get_model(_shared.settings().models_path, model)
    except EvalcoreError:
        return None


def time_caption(model: str, calls: int, judge: str = "rules", what: str = "") -> None:
    """'N calls, about T on MODEL' (`evalcore.report.estimate`), before every start button."""
    entry, judge_entry = model_entry(model), None if judge == "rules" else model_entry(judge)
    if entry is None or (judge != "rules" and judge_entry is None):
        return
    est = estimate_calls(_shared.engine(), entry, calls, judge=judge_entry)
    st.markdown(f"**{md(what)}{md(est.line())}**")


def power_caption(dataset_id: int | None, kind: str, questions: int, rounds: int) -> None:
    """What the run about to start can detect (`report.plan.start_line`), always as one
    caption in one container: the form's elements keep their places whatever the dataset,
    so a rerun never shows a stale start button beside the new one."""
    try:
        line = start_line(_shared.engine(), dataset_id=dataset_id, kind=kind,
                          questions=int(questions), rounds=int(rounds))
    except EvalcoreError as exc:
        line = f"No detectable effect to show: {exc}"
    with st.container(key=f"{kind}.power"):
        st.caption(md(line))
