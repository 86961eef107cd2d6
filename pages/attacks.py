"""Attacks: generate perturbed copies of a dataset, then review them item by item.

The page gathers input, calls evalcore and draws. Generation can take minutes (sentence
level translates every question with an LLM), so it is a job in the database that any
worker executes; the page follows its progress there, and a restart of the app loses
nothing. Review state (status, reviewer,
time, edits) lives in the database, so several reviewers can share one attack set; each
action passes the status the reviewer saw, and a clash is reported instead of silently
overwriting someone else's decision.
"""
from __future__ import annotations

import io
import json
from typing import Any

import pandas as pd
import streamlit as st

from evalcore.service.attacks import approve_unflagged, edit_attack_item, queue_attack, set_review
from evalcore.service.jobs import get_job
from evalcore.config import DEFAULT_MODEL
from evalcore.dataset import list_datasets
from evalcore.dataset.numbering import question_label
from evalcore.errors import EvalcoreError
from evalcore.markup import code_text, md
from evalcore.perturb.attack import resolve_params
from evalcore.perturb.degenerate import flag_reasons
from evalcore.perturb.export import write_attack_set_csv
from evalcore.perturb.guard import FLAGS
from evalcore.perturb.params import parse_params
from evalcore.perturb.review import (list_attack_items, option_diffs, question_numbers, review_log,
                                     review_progress, review_version, swaps_line,
                                     unique_pairs)
from evalcore.perturb.sets import list_attack_sets
from evalcore.report.diff import DIFF_CSS, side_by_side_html
from evalcore.report.review_stats import set_precision
from pages import _shared, _submit
from pages._attack_sets import (CONFIRM_BULK, JOB, LEVELS, SET, delete_controls,
                                failed_generation, import_form, set_jobs, set_state,
                                show_flash)

# No bare strings at module level below: Streamlit's magic would draw them on the page.
PAGE_SIZE = 10  # review cards per page
REVIEWER = "attacks.reviewer"  # the reviewer's name, kept across pages
STATUSES = ["all", "pending", "approved", "rejected"]
ANY_FLAG, NO_FLAG = "(any flag)", "(no flags)"


# ------------------------------------------------------------------ generation jobs


def job_panel() -> None:
    """Live progress of this session's generation job (executed by any worker)."""
    job_id = st.session_state.get(JOB)
    if job_id is not None:
        _shared.job_panel(int(job_id), "attacks.generate")


def select_new_set() -> None:
    """Once this session's job has made a set, show that set (once: then it is free)."""
    job_id = st.session_state.get(JOB)
    if job_id is None or st.session_state.get(f"{JOB}.shown") == job_id:
        return
    job = get_job(_shared.engine(), int(job_id))
    if job.status == "done" and job.result.get("attack_set_id") is not None:
        st.session_state[f"{JOB}.shown"] = job_id
        st.session_state[SET] = int(job.result["attack_set_id"])
        st.success(f"{md(job.label)}: attack set #{md(job.result['attack_set_id'])} is ready for "
                   "review below.")


# ------------------------------------------------------------------ generate form


EMBEDDED_CHECK = "embedded check"  # the swap judge picker's default: fluency.py's check


def _translators(models: list[str]) -> list[str]:
    """Translator specs, the embedded local model first (no key, no network): the
    alphabetically first model was the default, often a mock or a paid model."""
    first = [DEFAULT_MODEL] if DEFAULT_MODEL in models else []
    return [*(f"llm:{m}" for m in first + [m for m in models if m not in first]), "google"]


def generate_form(datasets: list[Any], reviewer: str) -> None:
    """Widgets for a new attack set; the button starts the background job."""
    if not datasets:
        st.info("No datasets yet: import one on the Datasets page first.")
        return
    models = _shared.model_names()
    by_id = {ds.id: ds for ds in datasets}
    left, right = st.columns(2)
    dataset_id = left.selectbox(
        "Dataset", list(by_id), key="attacks.dataset",
        format_func=lambda i: f"{by_id[i].name} ({by_id[i].item_count} items, "
                              f"{by_id[i].language})")
    level = left.radio("Level", list(LEVELS), format_func=LEVELS.get, horizontal=True,
                       key="attacks.level")
    problems: list[str] = []  # out-of-range numbers: the start is refused, saying why
    seed = _submit.number_field(left, "Seed", low=0, high=None, value=0, step=1,
                                key="attacks.seed", problems=problems)
    n_items = int(by_id[dataset_id].item_count)
    limit = _submit.number_field(right, "Attack only the first K items (0 = all)", low=0,
                                 high=max(n_items, 0), value=0, step=1,
                                 key=f"attacks.limit.{dataset_id}", problems=problems, name="K")
    translator = None
    if level == "sentence":
        translator = right.selectbox("Translator", _translators(models), key="attacks.translator",
                                     help="`llm:MODEL` translates with a configured model; "
                                          "`google` needs internet access")
    params_text = right.text_area(
        "Parameters (JSON)", value=json.dumps(resolve_params(level, None), ensure_ascii=False),
        key=f"attacks.params.{level}", height=68,
        help="The engine's defaults for this level; change a value or remove keys. char: "
             "ops (insert, swap, drop, keyboard), insertions (null = the method's rule); "
             "word: replacements, min_similarity; sentence: pivot language; all: "
             "threshold (least question similarity), similarity (false skips it)")
    keep_register = level != "word" or right.checkbox(
        "Keep register", value=True, key="attacks.keep_register",
        help="Refuse swaps that move formality (want -> desire, car -> automobile); "
             "untick to allow them")
    judge = EMBEDDED_CHECK if level != "word" else right.selectbox(
        "Swap judge", [EMBEDDED_CHECK, *models], key="attacks.swap_judge",
        help="Who judges each word swap in its sentence (meaning kept, natural to a native "
             "reader). The embedded check reads English only (Chinese then takes reviewed "
             "table swaps only); a model from the Models page judges English and Chinese, "
             "one call per swap tried")
    name = st.text_input("Attack set name (optional)", key="attacks.name")
    similarity = st.checkbox(
        "Check meaning with e5 similarity", value=True, key="attacks.similarity",
        help="Flags attacked questions whose e5 similarity to the original is below the "
             "threshold (low_similarity). Off: faster, the other checks still run.")
    with _submit.submission("Generate attack set", "attack", "attacks.generate",
                            invalid=problems) as submit_key:
        if submit_key:
            _queue_generation(submit_key, params_text, similarity, keep_register,
                              None if judge == EMBEDDED_CHECK else judge,
                              dataset=int(dataset_id),
                              level=level, seed=int(seed), translator=translator,
                              name=name.strip() or None, created_by=reviewer,
                              limit=int(limit) or None)


def _queue_generation(submit_key: str, params_text: str, similarity: bool,
                      keep_register: bool, swap_judge: str | None, **settings: Any) -> None:
    """Check the parameters' JSON, then queue the generation once for `submit_key`."""
    try:
        params = parse_params(params_text)
    except EvalcoreError as exc:
        st.error(md(exc))
        return
    if not similarity:
        params["similarity"] = False
    if not keep_register:
        params["keep_register"] = False
    if swap_judge:
        params["swap_judge"] = swap_judge

    _shared.queue_job(lambda: queue_attack(
        _shared.actor(), _shared.engine(), params=params, submit_key=submit_key, **settings),
        JOB)


# ------------------------------------------------------------------ pick a set


def set_picker(sets: list[Any], datasets: list[Any]) -> Any | None:
    """Select box of attack sets, newest first; returns the chosen set."""
    if not sets:
        st.info("No attack sets yet: generate one above, or import an attacked file.")
        return None
    names = {ds.id: ds.name for ds in datasets}
    by_id = {s.id: s for s in reversed(sets)}
    jobs = set_jobs()
    labels = {s.id: (f"#{s.id} · {s.name} · {s.level} · from "
                     f"{names.get(s.source_dataset_id, '?')} · "
                     f"{set_state(s, jobs.get(int(s.id)))}") for s in by_id.values()}
    if st.session_state.get(SET) not in labels:
        st.session_state[SET] = next(iter(labels))
    picked = st.selectbox("Attack set", list(labels), format_func=labels.get, key=SET)
    return by_id[picked]


# ------------------------------------------------------------------ review


def progress_bar(set_id: int) -> dict[str, Any]:
    """How far the review is, from the database (all reviewers together)."""
    p = review_progress(_shared.engine(), set_id)
    reviewed = p["approved"] + p["rejected"]
    st.progress(min(float(p["reviewed_share"]), 1.0),
                text=f"Reviewed {reviewed} / {p['total']}")
    cols = st.columns(5)
    cols[0].metric("Pending", p["pending"])
    cols[1].metric("Approved", p["approved"])
    cols[2].metric("Rejected", p["rejected"])
    cols[3].metric("Flagged", p["flagged"])
    cols[4].metric("Edited", p["edited"])
    if p["reviewers"]:
        last = (p["last_reviewed_at"] or "")[:16].replace("T", " ")
        st.caption("Reviewed by "
                   + ", ".join(f"{md(who)} ({md(n)})" for who, n in p["reviewers"].items())
                   + (f" · last review {md(last)} UTC" if last else ""))
    return p


def _act(item_id: int, seen: str, reviewer: str, status: str, edit_key: str = "",
         original: str = "", option_keys: tuple[tuple[int, str, str], ...] = ()) -> None:
    """Button callback: one review action on what the reviewer saw when the card was drawn.

    `seen` is the status shown on the card (callbacks get their arguments from that run):
    if someone else reviewed the item meanwhile, the service refuses and the card says who
    and when. An edit (text from the widget under `edit_key`) is re-checked by the service;
    its result is noted on the card; an edit that changes nothing is only noted.
    `option_keys`: (index, widget key, stored text) of each attacked option's text area.
    """
    eng, actor = _shared.engine(), _shared.actor()
    state = st.session_state
    options = {i: state.get(key, stored) for i, key, stored in option_keys}
    same = all(options[i].strip() == stored.strip() for i, _, stored in option_keys)
    try:
        if edit_key and state.get(edit_key, "").strip() == original.strip() and same:
            note = ("info", "Nothing to save: the text is as stored. Change it first.")
        elif edit_key:
            saved = edit_attack_item(actor, eng, item_id, state.get(edit_key, ""),
                                             reviewer=reviewer, expected_status=seen,
                                             approve=status == "approved",
                                             options=None if same else options)
            sim = "-" if saved.similarity is None else f"{saved.similarity:.3f}"
            text = (f"Edit saved and re-checked: similarity {sim}, flags "
                    f"{', '.join(saved.flags) or 'none'}; now {saved.status}.")
            note = ("info", text)
        else:
            set_review(actor, eng, item_id, status, reviewer=reviewer,
                               expected_status=seen)
            note = None
    except EvalcoreError as exc:
        note = ("warning", str(exc))
    st.session_state[_note_key(item_id)] = note


def _note_key(item_id: int) -> str:
    return f"attacks.note.{item_id}"


def _flags_line(item: Any) -> str:
    flags = ", ".join(f"`{f}`" for f in item.flags) if item.flags else "none"
    sim = "-" if item.similarity is None else f"{item.similarity:.3f}"
    where = {(str(p[0]), str(p[1])): _where(p) for p in item.pairs or [] if len(p) == 3}
    swaps = unique_pairs(item.pairs)
    pairs = " · ".join(f"{a} → {b}" + (f" ({where[a, b]})" if (a, b) in where else "")
                       for a, b in swaps)
    # word level: distinct swaps and where (perturb.review.item_changes); a method file's
    # attack_num counts each replaced place, shown beside it when it differs
    count = (f"**{swaps_line(item.pairs)}**" + (
        f" (attack_num {item.attack_num})" if item.attack_num != len(swaps) else "")
        if swaps else f"insertions/replacements **{item.attack_num}**")
    parts = [count, f"similarity **{sim}**", f"flags {flags}"]
    if pairs:
        parts.append(f"pairs: {pairs}")
    return " · ".join(parts)


def _letter(index: int) -> str:
    """An option's label as the cards and prompts show it: A, B, ... (27th on: 27, ...)."""
    return chr(65 + index) if index < 26 else str(index + 1)


def _where(pair: list[str]) -> str:
    """"question, option 2" -> "question, option C" (the letters the review shows)."""
    return ", ".join(f"option {chr(65 + int(w[7:]))}" if w.startswith("option ")
                     and w[7:].isdigit() and int(w[7:]) < 26 else w
                     for w in str(pair[2]).split(", "))


def _reasons_line(item: Any) -> str:
    """Why each degenerate-output flag fired (cut off, loops, pivot left in...), as Markdown
    with the quoted model text escaped."""
    why = flag_reasons(item.flags, item.original, item.attacked)
    return " · ".join(f"`{code_text(flag)}`: {md(text)}" for flag, text in why.items())


def _who(item: Any) -> str:
    if item.status == "pending" or not item.reviewer:
        return "not reviewed yet" + (" (edited)" if item.edited else "")
    when = f"{item.reviewed_at:%Y-%m-%d %H:%M} UTC" if item.reviewed_at else "?"
    return f"{item.status} by {item.reviewer} at {when}" + (" (edited)" if item.edited else "")


def item_card(item: Any, position: int, reviewer: str, number: int | None,
              options: list[tuple[int, str, str]] | None = None) -> None:
    """Original vs attacked with the changes marked, the checks, and the review buttons.

    `number` is the question's number in its source dataset (what a reviewer can look up);
    `options`: (index, original, attacked) of every option of a choice item, shown under
    the question (a stem is judged with its endings), a changed one as a diff; each can be
    edited.
    """
    with st.container(border=True):
        label = question_label(None if number is None else number - 1)
        st.markdown(f"**{md(position)}.** {md(label)} · **{md(item.status)}** · {md(_who(item))}")
        st.html(side_by_side_html(item.original, item.attacked))
        for index, before, after in options or []:
            if before == after:
                st.markdown(f"Option {md(_letter(index))}: {md(after)}")
                continue
            st.caption(f"Option {md(_letter(index))} (label and answer key unchanged)")
            st.html(side_by_side_html(before, after))
        st.caption(_flags_line(item))
        if reasons := _reasons_line(item):
            st.caption(reasons)  # trusted markdown: _reasons_line escapes the model's text
        note = st.session_state.get(_note_key(item.id))
        if note:
            getattr(st, note[0])(note[1])
        a, b, _ = st.columns([1, 1, 4])
        disabled = not reviewer
        seen = (int(item.id), item.status, reviewer)
        a.button("Approve", key=f"attacks.approve.{item.id}", on_click=_act,
                 args=(*seen, "approved"), disabled=disabled or item.status == "approved")
        b.button("Reject", key=f"attacks.reject.{item.id}", on_click=_act,
                 args=(*seen, "rejected"), disabled=disabled or item.status == "rejected")
        with st.expander("Edit the attacked text"), st.form(f"attacks.edit.{item.id}",
                                                             border=False):
            # A form: the text is sent with the click, so typing then clicking saves it
            # (a plain text area only reaches the script after Ctrl+Enter or leaving it).
            text_key = f"attacks.text.{item.id}"
            st.text_area("Attacked text", value=item.attacked, key=text_key)
            option_keys = []
            for index, _, after in options or []:
                key = f"attacks.option.{item.id}.{index}"
                st.text_area(f"Attacked option {_letter(index)} (label and answer key "
                             "unchanged)", value=after, key=key)
                option_keys.append((index, key, after))
            st.caption("Type the new text, then click a save button (no Ctrl+Enter needed).")
            c, d, _ = st.columns([1, 1, 2])
            edit = (*seen, "pending", text_key, item.attacked, tuple(option_keys))
            c.form_submit_button("Save edit (re-check)", key=f"attacks.save.{item.id}",
                                 on_click=_act, args=edit, disabled=disabled)
            d.form_submit_button("Save edit and approve", key=f"attacks.save_approve.{item.id}",
                                 on_click=_act, args=(*edit[:3], "approved", *edit[4:]),
                                 disabled=disabled)


def bulk_approve(set_id: int, progress: dict[str, Any], reviewer: str) -> None:
    """Approve every pending item without flags, after a confirmation."""
    candidates = int(progress["unflagged_pending"])
    if not st.session_state.get(CONFIRM_BULK):
        if st.button("Approve all unflagged pending items", key="attacks.bulk",
                     disabled=not reviewer or not candidates):
            st.session_state[CONFIRM_BULK] = True
            st.rerun()
        return
    st.warning(f"Approve up to {md(candidates)} pending items without flags as {md(reviewer)}? "
               "Flagged items stay pending.")
    yes, no, _ = st.columns([1, 1, 4])
    if yes.button("Confirm bulk approve", key="attacks.bulk_confirm", type="primary",
                  disabled=not reviewer):
        count = approve_unflagged(_shared.actor(), _shared.engine(), set_id,
                                          reviewer=reviewer)
        st.session_state[CONFIRM_BULK] = False
        st.toast(f"Approved {md(count)} items")
        st.rerun()
    if no.button("Cancel", key="attacks.bulk_cancel"):
        st.session_state[CONFIRM_BULK] = False
        st.rerun()


def _filtered(set_id: int, status: str, flag: str) -> list[Any]:
    flagged = {ANY_FLAG: True, NO_FLAG: False}.get(flag)
    return list_attack_items(_shared.engine(), set_id,
                             status=None if status == "all" else status,
                             flag=None if flag in ("all", ANY_FLAG, NO_FLAG) else flag,
                             flagged=flagged)


def review_log_table(set_id: int) -> None:
    """Every review action (who, when, from which status to which), newest first."""
    log = review_log(_shared.engine(), set_id, limit=500)
    if not log:
        st.caption("No reviews yet.")
        return
    st.caption("Every action is kept, also those a later review overrode (latest 500).")
    st.dataframe(log, hide_index=True, key="attacks.log",
                 column_order=["reviewed_at", "question", "previous_status", "status",
                               "reviewer", "edited", "note", "attacked"])


def review_queue(attack_set: Any, reviewer: str) -> None:
    """Filters, the review progress, bulk approval and one page of item cards."""
    set_id = int(attack_set.id)
    progress = progress_bar(set_id)
    bulk_approve(set_id, progress, reviewer)
    left, right, page_col = st.columns([1, 1, 1])
    status = left.selectbox("Status", STATUSES, key="attacks.status")
    flag = right.selectbox("Flag", ["all", ANY_FLAG, NO_FLAG, *FLAGS], key="attacks.flag")
    items = _filtered(set_id, status, flag)
    if not items:
        job = set_jobs().get(set_id)
        if not attack_set.item_count and job is not None and job.status != "done":
            st.info(f"This set has no items yet: {md(set_state(attack_set, job))}. They appear "
                    "here as a worker makes them (see the job's progress above).")
        else:
            st.info("No items match these filters.")
        return
    pages = (len(items) + PAGE_SIZE - 1) // PAGE_SIZE
    page = page_col.number_input(f"Page (of {pages})", min_value=1, max_value=pages, value=1,
                                 step=1, key=f"attacks.page.{set_id}.{status}.{flag}")
    start = (int(page) - 1) * PAGE_SIZE
    st.caption(f"{len(items)} items match; showing {md(start + 1)}-"
               f"{min(start + PAGE_SIZE, len(items))}")
    shown = items[start:start + PAGE_SIZE]
    numbers = question_numbers(_shared.engine(), shown)
    options = option_diffs(_shared.engine(), shown, every=True)
    for n, item in enumerate(shown, start=start + 1):
        item_card(item, n, reviewer, numbers.get(int(item.id)), options.get(int(item.id)))


def _csv(set_id: int) -> bytes:
    buffer = io.StringIO(newline="")
    write_attack_set_csv(_shared.engine(), set_id, buffer)
    return buffer.getvalue().encode("utf-8")


# ------------------------------------------------------------------ page


def reviewed_precision(set_id: int) -> None:
    """The share of attacked items its review queues kept in meaning, by level, language
    and swap source, with Wilson intervals (the Review page makes the queues)."""
    found = set_precision(_shared.engine(), set_id)
    if not found:
        st.caption("No review queue of this set has a decided item yet (Review page).")
        return
    rows = [{"by": name, "group": group, "kept": p["kept"], "reviewed": p["n"],
             "share": f"{p['share']:.0%}", "95% interval": f"{p['low']:.0%}-{p['high']:.0%}"}
            for name, groups in found.items() if name != "overall"
            for group, p in groups.items()]
    st.dataframe(pd.DataFrame(rows), hide_index=True)


def reviewer_input() -> str:
    """The reviewer's name; kept in the session under REVIEWER across pages. In team mode
    it is the signed-in identity (no typing), and empty for a role that may not review.
    The single local user starts from their identity (`evalcore.auth.local_user_name`,
    the name every other row records), so a reload never forgets who reviews."""
    actor = _shared.actor()
    if actor.team:
        denied = _shared.why_not("review")
        st.caption(f"Reviewing: {md(denied)}" if denied else f"Reviewing as **{md(actor.label)}**")
        return "" if denied else actor.label
    name = st.text_input("Your name (recorded with each review)",
                         value=st.session_state.get(REVIEWER) or actor.label,
                         key="attacks.reviewer_input",
                         help="Starts as your local identity (EVALCORE_USER, else your system "
                              "user name), as the audit log and your runs record it.")
    st.session_state[REVIEWER] = name.strip()
    return name.strip()


def main() -> None:
    _shared.page_setup("Attacks", "Perturb a dataset at character, word or sentence level, "
                                  "then review every attacked question before it is used.")
    eng = _shared.engine()
    datasets = list_datasets(eng)
    sets = list_attack_sets(eng)
    reviewer = reviewer_input()
    with st.expander("Generate an attack set", expanded=not sets):
        generate_form(datasets, reviewer)
    with st.expander("Import an attacked file"):
        import_form(datasets, reviewer)
    show_flash()
    job_panel()
    select_new_set()
    attack_set = set_picker(sets, datasets)
    if attack_set is None:
        return
    failed_generation(attack_set)
    if not reviewer and not _shared.actor().team:
        st.warning("Enter your name above to approve, reject or edit items.")
    export, delete = st.columns([1, 3])

    set_id = int(attack_set.id)
    _shared.download("Export CSV", lambda: _csv(set_id),
                     (set_id, attack_set.item_count, review_version(_shared.engine(), set_id)),
                     file_name=f"attack_set_{set_id}.csv", mime="text/csv", key="attacks.csv",
                     column=export)
    with delete:
        delete_controls(attack_set)
    st.html(f"<style>{DIFF_CSS}</style>")
    review_queue(attack_set, reviewer)
    with st.expander("What the review queues found (precision by source)"):
        reviewed_precision(int(attack_set.id))
    with st.expander("Review log (who reviewed what, when)"):
        review_log_table(int(attack_set.id))


main()
