"""The Stability page's repeated-answers part: mG-Pass@k, semantic entropy and judge noise
beside the success rate, the G-Pass table, questions ranked by answer spread, accuracy by
entropy band, answers whose judges disagree, and a question's answers grouped with counts.

Only draws what `evalcore.report.repeats` put into the report (no evaluation here).
"""
from __future__ import annotations

from typing import Any

import streamlit as st

from evalcore.service.judging import meaning_cost, meaning_cost_line, queue_meaning_judge
from evalcore.scorers.meaning import MEANING_COSINE
from pages import _shared
from evalcore.dataset.numbering import question_label
from evalcore.markup import md
from evalcore.report.repeats import grouping_line, judge_noise_line, top_entropy, withheld_line

EXPLAIN = {
    "g_pass": "G-Pass@k_tau: the chance that at least ceil(tau x k) of k rounds drawn from a "
              "question's N are right (tau 1.0 = pass^k: all k right; small tau = pass@k).",
    "mg_pass": "mG-Pass@k: G-Pass@k averaged over tau from 0.5 to 1, one number for "
               "'right most of the time' (0 = right at most half the time; 1 = always right "
               "at an even k, 2 floor(k/2)/k at an odd k, as OpenCompass computes it).",
    "entropy": "Semantic entropy: how spread a question's answers are across rounds, in nats, "
               "over the shares of its distinct answers (0 = one answer every round; "
               "ln 2 = 0.69 for two answers half and half).",
    "bands": "Accuracy by entropy band: mean success rate of the questions with a reference "
             "in each band; a model that is unsure (high entropy) is usually wrong more often.",
    "judge": "Judge noise: the share of the verdicts' spread across rounds that remains "
             "unexplained by what the model said: each distinct answer text gets its judges' "
             "majority verdict (its rounds' verdicts plus the re-judgements), and the spread "
             "that goes away is the judge's.",
    "groups": "A question's replies grouped by the answer they give (the extracted choice or "
              "number, else the normalised text), biggest group first, each with its verdicts.",
}


ROUTES = ("offline: cues, then e5", "a judge model")


def meaning_toggle(run_id: int | None = None) -> bool | str:
    """How open answers are grouped: False (by text), True (by meaning offline) or
    "judge:MODEL" (by the judge's stored "same meaning?" verdicts; a form asks it)."""
    on = st.toggle(
        "Group open answers by meaning", key="stability.meaning",
        help="Choice and number answers are always grouped by the extracted answer. "
             "Offline: opposite yes/no, a negation on one side, other numbers or one swapped "
             f"word keep two replies apart, else e5 cosine >= {MEANING_COSINE} merges them "
             "(right on 31 of a blind reviewer's 40 pairs; e5 alone 20): a hint, no model "
             "call. A judge model is asked \"same meaning?\" per pair (paid calls, cost "
             "shown before it starts).")
    if not on:
        return False
    route = st.radio("Meaning by", ROUTES, horizontal=True, key="stability.meaning_route")
    if route == ROUTES[0] or run_id is None:
        return True
    models = _shared.model_names()
    if not models:
        st.info("Add a judge model on the Models page first.")
        return True
    judge = str(st.selectbox("Judge model", models, key="stability.meaning_judge",
                             index=_shared.default_model_index(models)))
    _judge_form(run_id, judge)
    return f"judge:{judge}"


def _judge_form(run_id: int, judge: str) -> None:
    """The cost of asking `judge`, and the button that queues the job (any worker runs it;
    the verdicts are stored, so the report regroups as they come)."""
    key = f"stability.meaning_job.{run_id}"
    if st.session_state.get(key) is not None:
        _shared.job_panel(int(st.session_state[key]), "stability.meaning_panel")
    cost = meaning_cost(_shared.engine(), run_id, judge)
    st.caption(md(meaning_cost_line(cost, judge)) + ".")
    if cost["max_calls"] and _shared.allowed_button(
            f"Ask {judge}", "run", key="stability.meaning_ask") and _shared.queue_job(
            lambda: queue_meaning_judge(_shared.actor(), _shared.engine(), run_id,
                                                judge, _shared.settings().models_path),
            key) is not None:
        st.rerun()


def _fmt(value: Any, spec: str = ".3f") -> str:
    return "n/a" if value is None else format(value, spec)


def headline(report: dict[str, Any]) -> None:
    """mG-Pass@k at the largest k, mean semantic entropy, and judge noise when measured."""
    summary = report["summary"]
    if "mg_pass_at_k" not in summary:
        return
    mg = summary["mg_pass_at_k"]
    noise = summary.get("judge_noise")
    cols = st.columns(3)
    if mg:
        k = list(mg)[-1]
        cols[0].metric(f"mG-Pass@{k}", _fmt(mg[k]), help=EXPLAIN["mg_pass"])
    cols[1].metric("Semantic entropy (mean)", _fmt(summary["semantic_entropy_mean"]),
                   help=EXPLAIN["entropy"])
    if noise:
        cols[2].metric("Judge noise", _fmt(noise["judge_share_of_spread"], ".1%"),
                       help=EXPLAIN["judge"])
        st.caption("Judge noise: " + judge_noise_line(noise) + ".")
    elif withheld := summary.get("judge_noise_withheld"):
        cols[2].metric("Judge noise", "not measured", help=EXPLAIN["judge"])
        st.caption("Judge noise: " + withheld_line(withheld) + ".")


def section(report: dict[str, Any]) -> None:
    """The G-Pass table, the entropy ranking and bands, and the judges' disagreements."""
    import pandas as pd

    summary = report["summary"]
    if "g_pass_at_k" not in summary:
        return
    st.markdown("#### Repeated answers")
    st.caption(EXPLAIN["g_pass"] + " " + EXPLAIN["mg_pass"])
    st.dataframe(pd.DataFrame([
        {"k": int(k), **{f"tau {t}": v for t, v in taus.items()},
         "mG-Pass": summary["mg_pass_at_k"].get(k)}
        for k, taus in summary["g_pass_at_k"].items()]), hide_index=True,
        key="stability.gpass_table")
    st.caption(EXPLAIN["entropy"])
    ranked = [{"Q": question_label(int(k)), "semantic entropy": h, "answers": line}
              for k, h, line in top_entropy(report, 20)]
    st.dataframe(pd.DataFrame(ranked, columns=["Q", "semantic entropy", "answers"]),
                 hide_index=True, key="stability.entropy_table",
                 column_config={"answers": st.column_config.TextColumn(width="large")})
    bands = summary.get("accuracy_by_entropy") or []
    if any(b["questions"] for b in bands):
        st.caption(EXPLAIN["bands"])
        st.dataframe(pd.DataFrame(bands), hide_index=True, key="stability.entropy_bands")
    if summary.get("judge_noise"):
        _judge_flicker(report)


def _judge_flicker(report: dict[str, Any]) -> None:
    import pandas as pd

    st.caption(EXPLAIN["judge"])
    rows = []
    for key, res in report["stability_results"].items():
        flicker = res.get("judge_flicker")
        if not flicker or flicker["judge_share"] is None:
            continue
        rows.append({"Q": question_label(int(key)), "verdict spread": flicker["observed_spread"],
                     "model's spread": flicker["model_spread"],
                     "judge's share": flicker["judge_share"],
                     "answers judged both ways": "; ".join(
                         f"{(a.get('label') or a['answer'])[:60]!r} rounds {a['rounds']}: {a['right']} right, "
                         f"{a['wrong']} wrong" for a in flicker["flicker_answers"])})
    st.dataframe(pd.DataFrame(rows, columns=["Q", "verdict spread", "model's spread",
                                             "judge's share", "answers judged both ways"]),
                 hide_index=True, key="stability.judge_flicker")


def answer_groups(report: dict[str, Any], item: int) -> None:
    """One question's answers grouped with counts (the round-by-round table is below)."""
    import pandas as pd

    res = report["stability_results"].get(str(item), {})
    groups = res.get("answer_groups")
    if groups is None:
        return
    entropy = res.get("semantic_entropy")
    spread = "n/a (no answer)" if entropy is None else f"{_fmt(entropy)} nats"
    st.markdown(f"**{md(res.get('answers_line', ''))}** · semantic entropy {md(spread)}")
    st.caption(EXPLAIN["groups"])
    if report["summary"].get("answer_grouping"):
        st.caption("Grouping: " + md(grouping_line(report["summary"])) + ".")
    st.dataframe(pd.DataFrame([
        {"answer": "no answer" if g["answer"] is None else g.get("label") or g["answer"],
         "count": g["count"],
         "right": g["correct"], "wrong": g["wrong"],
         "no verdict": g["count"] - g["correct"] - g["wrong"], "example": g["example"]}
        for g in groups], columns=["answer", "count", "right", "wrong", "no verdict",
                                   "example"]),
        hide_index=True, key="stability.groups_table",
        column_config={"example": st.column_config.TextColumn(width="large")})
