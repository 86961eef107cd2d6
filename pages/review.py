"""Review: a queue a team shares, one card at a time, one key per decision.

The page gathers input, calls evalcore (`evalcore.service.reviews` actions) and
draws. The card is always the item this reviewer holds, else the next one reserved for
them (`review next`): a reload resumes at the first undecided item. Streamlit has no key
bindings of its own; each decision is a button with a `shortcut` (docs/review.md).
"""
from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from evalcore.service.reviews import (ITEMS, VERDICTS, create_review_queue, list_queues,
                                      review_adjudicate, review_next, review_skip, review_stats,
                                      review_submit, review_undo)
from evalcore.service.runs import list_runs
from evalcore.errors import EvalcoreError
from evalcore.markup import md
from evalcore.perturb.sets import list_attack_sets
from pages import _shared

QUEUE = "review.queue"  # the chosen queue id
EDITING = "review.state.editing"  # the card is in edit mode
PREVIOUS = "review.state.previous"  # showing this reviewer's latest decision instead of the card
NOTICE = "review.state.notice"
# One key per decision ("R" and "C" are Streamlit's own).
KEYS = {"approve": "A", "right": "A", "reject": "X", "wrong": "X", "edit": "E", "skip": "S",
        "undo": "U", "next": "N", "previous": "P"}


def _queue_label(queue: Any) -> str:
    source = (f"attack set {queue.attack_set_id}" if queue.kind == "attack"
              else f"run {queue.run_id} answers")
    return f"#{queue.id}: {source}, {queue.item_count} items"


def create_form() -> None:
    """Make a queue from an attack set or a run's judged answers."""
    with st.expander("New review queue", expanded=False):
        sets = {f"{s.name} (#{s.id})": s.id for s in list_attack_sets(_shared.engine())}
        runs = {f"run {r.id}: {r.name or r.model}": r.id
                for r in list_runs(_shared.engine(), limit=200)}
        with st.form("review.create_form"):
            source = st.radio("Review", ["attacked questions", "a run's judged answers"],
                              horizontal=True)
            chosen_set = st.selectbox("Attack set", list(sets) or ["(none)"])
            chosen_run = st.selectbox("Run", list(runs) or ["(none)"])
            items = st.selectbox("Items", ITEMS)
            sample = st.number_input("Sample (0: every item)", min_value=0, value=0)
            seed = st.number_input("Seed", min_value=0, value=0)
            double = st.slider("Second, blind review (% of items)", 0, 100, 0)
            minutes = st.number_input("Reservation (minutes)", min_value=1, value=15)
            guidelines = st.text_area("Guidelines shown on every card")
            if not _shared.allowed_button("Create queue", "review", form=True):
                return
        attack = source == "attacked questions"
        try:
            queue = create_review_queue(
                _shared.actor(), _shared.engine(),
                attack_set_id=sets.get(chosen_set) if attack else None,
                run_id=None if attack else runs.get(chosen_run), items=items,
                sample=int(sample) or None, seed=int(seed), double_share=double / 100,
                reserve_s=float(minutes) * 60, guidelines=guidelines)
        except EvalcoreError as exc:
            _shared.show_error(exc)
            return
        st.session_state[QUEUE] = queue
        st.rerun()


def _act(do: Any) -> None:
    try:
        do()
    except EvalcoreError as exc:
        st.session_state[NOTICE] = _shared.error_line(exc)
    st.session_state[EDITING] = False
    st.session_state[PREVIOUS] = False
    st.rerun()


def progress(stats: dict[str, Any], card: dict[str, Any] | None) -> None:
    """x of N, mine, the team's, items per hour, time left."""
    cols = st.columns(5)
    cols[0].metric("Item", f"{card['position'] + 1} of {card['total']}" if card else "-")
    cols[1].metric("Mine", stats["mine"] or 0)
    cols[2].metric("Team decided", f"{stats['decided']} of {stats['total']}")
    rate = stats["per_hour"]
    cols[3].metric("Items per hour", "-" if rate is None else f"{rate:.0f}")
    left = stats["total"] - stats["decided"]
    cols[4].metric("Time left", "-" if not rate else f"{left / rate:.1f} h")


def draw_card(card: dict[str, Any]) -> None:
    if card["guidelines"]:
        st.info(md(card["guidelines"]))
    if card["kind"] == "attack":
        left, right = st.columns(2)
        left.caption("original")
        left.markdown(md(card["original"]))
        right.caption("attacked")
        right.markdown(md(card["attacked"]))
        for n, (old, new) in enumerate(zip(card["options"], card["attacked_options"])):
            st.markdown(f"{md(n)}. {md(old)}" if old == new
                        else f"{md(n)}. {md(old)} -> {md(new)}")
        if card["flags"]:
            st.caption(md("flags: " + ", ".join(card["flags"])))
    else:
        st.markdown(f"**Question:** {md(card['question'])}")
        st.markdown(f"**Reference:** {md(card['reference'])}")
        st.markdown(f"**Answer:** {md(card['answer'])}")
        st.markdown(f"**Judge ({md(card['judge'])}):** {md(card['judge_verdict'])}")
        if card["reason"]:
            st.caption(md(card["reason"]))


def edit_form(queue: int, card: dict[str, Any]) -> None:
    with st.form("review.edit_form"):
        question = st.text_area("Attacked question", value=card["attacked"])
        options = {n: st.text_input(f"Option {n}", value=text)
                   for n, text in enumerate(card["attacked_options"])}
        verdict = st.radio("Verdict", VERDICTS["attack"], horizontal=True)
        if st.form_submit_button("Save the edit"):
            changed = {n: t for n, t in options.items() if t != card["attacked_options"][n]}
            _act(lambda: review_submit(
                _shared.actor(), _shared.engine(), queue, card["item_id"], verdict,
                question=question if question != card["attacked"] else None,
                options=changed or None))


def keys(queue: int, kind: str, card: dict[str, Any] | None) -> None:
    """The decision buttons, each with its key."""
    actor, engine = _shared.actor(), _shared.engine()
    denied = _shared.why_not("review")
    cols = st.columns(7)
    buttons = [*VERDICTS[kind], *(("edit",) if kind == "attack" else ()), "skip", "undo",
               "next", "previous"]
    for col, name in zip(cols, buttons):
        off = denied is not None or (card is None and name in (*VERDICTS[kind], "edit", "skip"))
        if col.button(f"{name.capitalize()} ({KEYS[name]})", key=f"review.{name}",
                      shortcut=KEYS[name], disabled=off, help=denied):
            if name in VERDICTS[kind]:
                _act(lambda v=name: review_submit(actor, engine, queue,
                                                          card["item_id"], v))  # type: ignore[index]
            elif name == "skip":
                _act(lambda: review_skip(actor, engine, queue, card["item_id"]))  # type: ignore[index]
            elif name == "undo":
                _act(lambda: review_undo(actor, engine, queue))
            elif name == "edit":
                st.session_state[EDITING] = True
                st.rerun()
            elif name == "previous":
                st.session_state[PREVIOUS] = True
                st.rerun()
            else:
                _act(lambda: None)


def previous(stats: dict[str, Any]) -> None:
    """This reviewer's latest decision (undo takes it back)."""
    last = stats["my_last"]
    if last is None:
        st.caption("You have no decision in this queue yet.")
        return
    st.markdown(f"Your latest decision: item {md(last['item_id'])}, **{md(last['verdict'])}** "
                f"(undo it with {md(KEYS['undo'])}, back to your card with {md(KEYS['next'])})")


def figures(stats: dict[str, Any], queue: int) -> None:
    """Agreement, disagreements (with adjudication), precision or the judge's accuracy."""
    agree = stats["agreement"]
    value = "-" if agree["value"] is None else f"{agree['value']:.3f}"
    st.markdown(f"Agreement: {md(agree['method'].replace('_', ' '))} {md(value)} over "
                f"{md(agree['pairs'])} items reviewed twice; {md(stats['unresolved'])} "
                "disagreement(s) to adjudicate.")
    if stats["disagreements"]:
        st.dataframe(pd.DataFrame([{"item": d["item_id"], **d["verdicts"],
                                    "final": d["adjudication"] or ""}
                                   for d in stats["disagreements"]]), hide_index=True)
        with st.form("review.adjudicate_form"):
            item = st.selectbox("Item", [d["item_id"] for d in stats["disagreements"]])
            verdict = st.radio("Final verdict", VERDICTS[stats["kind"]], horizontal=True)
            if _shared.allowed_button("Adjudicate", "review", form=True):
                _act(lambda: review_adjudicate(_shared.actor(), _shared.engine(),
                                                       queue, int(item), verdict))
    for name, groups in stats["precision"].items():
        if name == "overall" or not groups:
            continue
        st.caption(f"kept in meaning by {md(name)}")
        st.dataframe(pd.DataFrame([{name: g, "kept": p["kept"], "reviewed": p["n"],
                                    "share": f"{p['share']:.0%}",
                                    "95% interval": f"{p['low']:.0%}-{p['high']:.0%}"}
                                   for g, p in groups.items()]), hide_index=True)
    if stats["judge"]:
        j = stats["judge"]
        kappa = "-" if j["kappa"] is None else format(j["kappa"], ".3f")
        st.markdown(f"The judge is right on {md(j['kept'])} of {md(j['n'])} "
                    f"({md(format(j['share'], '.0%'))}, 95% {md(format(j['low'], '.0%'))}-"
                    f"{md(format(j['high'], '.0%'))}); kappa with people {md(kappa)}.")
        st.dataframe(pd.DataFrame([j["confusion"]]), hide_index=True)


def main() -> None:
    _shared.page_setup("Review", "A queue a team shares: each reviewer gets the next item "
                                 "nobody holds; one key per decision.")
    create_form()
    queues = list_queues(_shared.engine())
    if not queues:
        st.info("No review queue yet: make one above (or `python -m evalcore review create`).")
        return
    ids = [int(q.id) for q in queues]
    labels = {int(q.id): _queue_label(q) for q in queues}
    if st.session_state.get(QUEUE) not in ids:
        st.session_state[QUEUE] = ids[0]
    queue = int(st.selectbox("Queue", ids, key=QUEUE, format_func=labels.get))
    if notice := st.session_state.pop(NOTICE, None):
        st.warning(notice)
    actor, engine = _shared.actor(), _shared.engine()
    kind = next(q.kind for q in queues if int(q.id) == queue)
    card = None
    if _shared.why_not("review") is None:
        card = review_next(actor, engine, queue)
    stats = review_stats(actor, engine, queue)
    progress(stats, card)
    if st.session_state.get(PREVIOUS):
        previous(stats)
    elif card is None:
        st.success("Nothing left for you in this queue.")
    elif st.session_state.get(EDITING) and kind == "attack":
        edit_form(queue, card)
    else:
        draw_card(card)
    keys(queue, kind, card)
    with _shared.section("review figures"):
        figures(stats, queue)


main()
