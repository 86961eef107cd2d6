"""The Attacks page's set actions: import an already-attacked file, delete a set.

Split from pages/attacks.py (generation and review) to keep each file short. Both go
through `evalcore.service` (role-checked and audited, as the CLI's `attacks import` and
`attacks delete`); a message for the next draw is kept under FLASH and shown once.
"""
from __future__ import annotations

from typing import Any

import streamlit as st

from evalcore.service.attacks import attack_set_jobs, delete_attack_set, queue_attack_import
from evalcore.service.jobs import get_job
from evalcore.dataset import dataset_users
from evalcore.dataset.readers import SUPPORTED_SUFFIXES
from evalcore.errors import EvalcoreError
from evalcore.markup import md
from evalcore.perturb.sets import DuplicateAttackFileError, get_attack_set
from pages import _shared

SET = "attacks.set"  # the attack set under review (kept across pages)
JOB = "attacks.job"  # the generation or import job this session started
CONFIRM_BULK = "attacks.confirm_bulk"
CONFIRM_DELETE = "attacks.confirm_delete"  # the id of the set the user asked to delete
FLASH = "attacks.flash"  # (kind, text) to show once on the next draw (after a rerun)
LEVELS = {"char": "character (insert symbols)", "word": "word (synonym swaps)",
          "sentence": "sentence (back-translation)"}


def set_state(attack_set: Any, job: Any | None) -> str:
    """What a set holds, in words: "30 items · generated", or while its generation job
    has not finished "generation queued" / "generating 12 / 30" / "generation failed"."""
    if job is None or job.status == "done":
        return f"{attack_set.item_count} items · {attack_set.origin}"
    if job.status == "queued":
        return "generation queued"
    if job.status == "running":
        return f"generating {job.done} / {job.total or '?'}"
    return f"{attack_set.item_count} items · generation {job.status}"


def set_jobs() -> dict[int, Any]:
    """{attack set id: its newest job}, from the database."""
    return attack_set_jobs(_shared.engine())


def failed_generation(attack_set: Any) -> None:
    """Why the picked set's generation failed (the job's error), also when another session
    or a reload started it; this session's own job says it in its panel already."""
    job = set_jobs().get(int(attack_set.id))
    if job is not None and job.status == "failed" and job.id != st.session_state.get(JOB):
        st.error(f"Generation of this set failed (job #{md(job.id)}): {md(job.error)}")


def _flash(kind: str, text: str, link: tuple[str, str] | None = None) -> None:
    st.session_state[FLASH] = (kind, text, link)


def show_flash() -> None:
    """The message an action left for this draw (shown once), with a page link if any."""
    flash = st.session_state.pop(FLASH, None)
    if flash:
        kind, text, link = flash
        getattr(st, kind)(text)
        if link:
            st.page_link(link[0], label=link[1], icon=":material/arrow_forward:")


def import_form(datasets: list[Any], reviewer: str) -> None:
    """Store an already-attacked CSV (the method's layout) as an attack set, as
    `evalcore attacks import` does: the file is checked at once, a worker imports it (the
    checks and e5 similarity of every row) and the job panel follows it."""
    denied = _shared.why_not("import")  # a role that cannot import picks no file either
    upload = st.file_uploader(
        "Attacked file: the original columns plus attacked_question and attack_num (e.g. "
        "Math23K_underwordattack.csv)", type=[x.lstrip(".") for x in SUPPORTED_SUFFIXES],
        key="attacks.import_file", disabled=denied is not None, help=denied)
    left, right = st.columns(2)
    level = left.selectbox("Level", [None, *LEVELS], key="attacks.import_level",
                           format_func=lambda v: "from the file name" if v is None else LEVELS[v])
    by_id = {ds.id: ds.name for ds in datasets}
    source = right.selectbox("Clean dataset it was attacked from", [None, *by_id],
                             key="attacks.import_source",
                             format_func=lambda v: ("find it, or create it from the file"
                                                    if v is None else by_id[v]))
    name = left.text_input("Attack set name (optional: the file name)", key="attacks.import_name")
    similarity = right.checkbox(
        "Check meaning with e5 similarity", value=True, key="attacks.import_similarity",
        help="Flags attacked questions whose e5 similarity to the original is below the "
             "threshold (low_similarity), as a generated set is checked. The import runs "
             "as a job, so the page stays free while it embeds.")
    again = right.checkbox("Import even if this file was imported before",
                           key="attacks.import_again")
    if not _shared.allowed_button("Import attack set", "import", key="attacks.import",
                                  disabled=upload is None):
        return
    try:
        job_id = queue_attack_import(
            _shared.actor(), _shared.engine(), upload.getvalue(), filename=upload.name,
            name=name.strip() or None, level=level, source_dataset=source,
            similarity=similarity, created_by=reviewer, allow_duplicate=again)
    except DuplicateAttackFileError as exc:
        st.error(f"{md(upload.name)} was already imported as attack set #{md(exc.existing_id)} "
                 f"'{md(exc.existing)}': review that one, or tick \"Import even if this file was "
                 "imported before\" and import again.")
        return
    except EvalcoreError as exc:
        st.error(str(exc))
        return
    st.session_state[JOB] = job_id
    st.toast(f"Job #{md(job_id)} queued: importing {md(upload.name)}")


# ------------------------------------------------------------------ delete a set


def _ask_delete(set_id: int) -> None:
    st.session_state[CONFIRM_DELETE] = set_id


def _cancel_delete() -> None:
    st.session_state.pop(CONFIRM_DELETE, None)


def _forget_set(set_id: int) -> None:
    """Drop what this session kept about a deleted set (notes, confirmations, its job)."""
    state = st.session_state
    for key in [k for k in state if str(k).startswith("attacks.note.")]:
        del state[key]
    for key in (CONFIRM_DELETE, CONFIRM_BULK, SET):
        state.pop(key, None)
    job_id = state.get(JOB)
    if job_id is not None:
        try:
            mine = get_job(_shared.engine(), int(job_id)).attack_set_id == set_id
        except EvalcoreError:  # deleted with the set
            mine = True
        if mine:
            state.pop(JOB, None)
            state.pop(f"{JOB}.shown", None)


def _delete(set_id: int, name: str) -> None:
    """Confirmed: delete the set through evalcore.service (admins; audited)."""
    try:
        delete_attack_set(_shared.actor(), _shared.engine(), set_id)
    except EvalcoreError as exc:
        st.session_state.pop(CONFIRM_DELETE, None)
        derived = get_attack_set(_shared.engine(), set_id).dataset_id
        runs = dataset_users(_shared.engine(), int(derived))["runs"] if derived else []
        _flash("error", str(exc), ("pages/results.py", f"Open Results to see or delete run(s) "
                                   f"{', '.join(map(str, runs[:10]))}") if runs else None)
        return
    _forget_set(set_id)
    _flash("success", f"Deleted attack set #{set_id} '{name}' with its review log and its "
                      "attacked dataset.")


def delete_controls(attack_set: Any) -> None:
    """Delete the set shown, after a confirmation."""
    set_id = int(attack_set.id)
    if st.session_state.get(CONFIRM_DELETE) == set_id:
        st.warning(f"Delete attack set #{md(set_id)} '{md(attack_set.name)}', its "
                   f"{md(attack_set.item_count)} items, their reviews and the attacked dataset? "
                   "This cannot be undone.")
        yes, no, _ = st.columns([1, 1, 4])
        yes.button("Yes, delete", key="attacks.delete_confirm", type="primary",
                   on_click=_delete, args=(set_id, attack_set.name))
        no.button("Cancel", key="attacks.delete_cancel", on_click=_cancel_delete)
        return
    _shared.allowed_button("Delete this attack set...", "delete", key="attacks.delete",
                           on_click=_ask_delete, args=(set_id,))
