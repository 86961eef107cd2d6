"""Results: every run saved; browse, export, and compare runs side by side.

The page only gathers input, calls evalcore and draws. The run list, a run's details
and its raw calls come from `evalcore.report.runs`; exports from
`evalcore.report.stability` and `report.export.calls_csv_bytes`; the comparison of 2 to 8
runs lives in `pages/_results_compare.py`. The
database is the truth about a run: a live run's details re-read it every few seconds.
Robustness and fairness runs have their reports on their own pages; this page links there.
"""
from __future__ import annotations

from typing import Any

import streamlit as st

from evalcore.service.jobs import JOB_FINISHED, lease_alive, list_jobs, requeue_job
from evalcore.service.runs import (FINISHED, cancel_run, delete_run, get_run, list_runs,
                                   resume_run, retry_failed)
from evalcore.errors import EvalcoreError, RunError
from evalcore.kinds import find_kind
from evalcore.metrics.gate import GateResult, gate_config_text
from evalcore.report import runs
from evalcore.report.export import calls_csv_bytes
from evalcore.report.fairness_charts import gate_table
from evalcore.report.gates import gate_any
from evalcore.report.review_stats import run_reviews
from evalcore.report.timing import format_seconds, timing_text
from evalcore.markup import md
from pages import _results_compare, _results_monitor, _shared

# No bare strings at module level below: Streamlit's magic would draw them on the page.
PICK = "results.pick"  # the run picker's widget key
TAB = "results.tab"  # the open tab (set it in session state to open another)
NOTICE = "results.notice"  # (kind, message) an action left for the next draw
CONFIRM_DELETE = "results.confirm_delete"  # the run a "Delete run" click asks about
DELETED = "results.deleted"  # what the last delete did, shown above the list
LINKED = "results.linked"  # the `?run=N` of a link, once it has been shown
PAGE_SIZE = 100  # runs per page of the list
FILTERS = (("kind", "Kind"), ("status", "Status"), ("model", "Model"), ("dataset", "Dataset"))


def _run_label(row: Any) -> str:
    name = f"{row.name} · " if row.name else ""
    return (f"#{row.id} · {row.kind} · {name}{row.model} on {row.dataset or '?'} · "
            f"{row.status}{' (stale)' if row.stale else ''} · {row.created_at:%Y-%m-%d %H:%M}")


# ------------------------------------------------------------------ browse


def browser() -> int | None:
    """Filters, one page of the runs table and a picker; returns the run chosen for
    details. Filtering and paging happen in SQL on the summary columns only."""
    eng = _shared.engine()
    options = runs.run_filter_options(eng)
    if not options["kind"]:
        st.info("No runs yet: start one on the Stability page (or `python -m evalcore "
                "stability`). Every run is saved here.")
        return None
    cols = st.columns(len(FILTERS) + 1)
    chosen = {column: cols[i].multiselect(label, options[column],
                                          key=f"results.filter.{column}")
              for i, (column, label) in enumerate(FILTERS)}
    page = int(cols[-1].number_input("Page", min_value=1, value=1, step=1, key="results.page"))
    shown, total = runs.run_list(eng, **chosen, limit=PAGE_SIZE,
                                    offset=(page - 1) * PAGE_SIZE)
    pages = max((total + PAGE_SIZE - 1) // PAGE_SIZE, 1)
    st.caption(f"{md(total)} runs match; page {md(page)} of {md(pages)} ({len(shown)} shown, "
               "newest first)")
    st.dataframe(shown, hide_index=True, key="results.runs", column_config={
        "progress": st.column_config.ProgressColumn("progress", format="percent",
                                                    min_value=0.0, max_value=1.0),
        "duration_s": st.column_config.NumberColumn(
            "elapsed (s)", format="%.1f", help="start to end, pauses included; the run's "
                                              "details show its active time")})
    if shown.empty:
        st.info("No run matches these filters" + (" on this page." if page > 1 else "."))
        return None
    labels = {int(row.id): _run_label(row) for row in shown.itertuples(index=False)}
    linked = _linked_run()
    if linked is not None:  # an alert's link (`?run=N`): that run, on this page or not
        labels.setdefault(linked.id, f"#{linked.id} · {linked.kind} · {linked.model} · "
                                     f"{linked.status} · {linked.created_at:%Y-%m-%d %H:%M}")
        st.session_state[PICK] = linked.id
    previous = st.session_state.get(PICK)
    if previous not in labels:
        st.session_state[PICK] = next(iter(labels))
        _shared.say_if_deleted(previous, st.session_state[PICK])
    return st.selectbox("Run details", list(labels), format_func=labels.get, key=PICK)


def _linked_run() -> Any:
    """The run of the page's `?run=N` the first time this session sees that link (an
    alert links `results?run=N`; the page showed the newest run instead), else None: a
    run the user picks afterwards is not taken back."""
    wanted = st.query_params.get("run")
    if not wanted or st.session_state.get(LINKED) == wanted:
        return None
    st.session_state[LINKED] = wanted
    try:
        return get_run(_shared.engine(), int(wanted))
    except (ValueError, EvalcoreError):
        st.warning(f"The link names run {md(wanted)}, which is not stored (deleted?).")
        return None


# ------------------------------------------------------------------ one run


def _cancel(run_id: int) -> None:
    try:
        cancel_run(_shared.actor(), _shared.engine(), run_id)
    except EvalcoreError as exc:
        st.session_state[NOTICE] = ("error", f"Cannot cancel run #{run_id}: {exc}")
        return
    message = f"Cancelling run #{run_id}: it stops after the calls in flight."
    st.session_state[NOTICE] = ("info", message)


def _resume(run_id: int) -> None:
    """Button callback: it runs before the script, so a click is never lost even when the
    run's state changed since the button was drawn. The run goes back to the queue."""
    try:
        resume_run(_shared.actor(), _shared.engine(), run_id)
    except EvalcoreError as exc:
        st.session_state[NOTICE] = ("error", f"Cannot resume run #{run_id}: {exc}")
        return
    st.session_state[NOTICE] = ("success", f"Run #{run_id} queued again: a worker continues "
                                           "it; stored calls are never sent again.")


def _retry_failed(run_id: int) -> None:
    try:
        moved, _ = retry_failed(_shared.actor(), _shared.engine(), run_id)
    except EvalcoreError as exc:
        st.session_state[NOTICE] = ("error", f"Cannot retry run #{run_id}: {exc}")
        return
    st.session_state[NOTICE] = ("success", f"Run #{run_id}: {moved} failed call(s) queued "
                                           "again (their earlier record is kept).")


def _ask_delete(run_id: int) -> None:
    st.session_state[CONFIRM_DELETE] = run_id


def _keep(run_id: int) -> None:
    st.session_state.pop(CONFIRM_DELETE, None)


def _delete(run_id: int) -> None:
    """Confirmed: delete the run. The next draw (a whole page: `_status_body` reruns the
    app when its run is gone) lists the runs without it and says so above them."""
    st.session_state.pop(CONFIRM_DELETE, None)
    try:
        delete_run(_shared.actor(), _shared.engine(), run_id)
    except EvalcoreError as exc:
        st.session_state[NOTICE] = ("error", f"Cannot delete run #{run_id}: {exc}")
        return
    st.session_state.pop(PICK, None)
    st.session_state[DELETED] = f"Run #{run_id} deleted with its calls."


def _confirm_delete(run_id: int, details: dict[str, Any]) -> None:
    """The question a delete asks first (as the Datasets page does for a dataset)."""
    calls = details["usage"]["calls"]
    st.warning(f"Delete run #{md(run_id)} ({md(details['kind'])}, {md(details['model'])}) "
               f"with its {md(calls)} stored call(s)? Exports and CLI lines naming it stop working; "
               "this cannot be undone.")
    yes, no = st.columns(2)
    with yes:
        _shared.allowed_button("Yes, delete", "delete", key="results.delete_confirm",
                               type="primary", on_click=_delete, args=(run_id,))
    no.button("Keep it", key="results.delete_cancel", on_click=_keep, args=(run_id,))


def run_actions(run_id: int, details: dict[str, Any]) -> None:
    """Cancel a live or queued run; resume a cancelled, failed or stale running one; send
    failed calls again; delete a run that is not executing (finished, or still queued)."""
    status, stale = details["status"], details["stale"]
    queued = status == "queued"
    notice = st.session_state.pop(NOTICE, None)
    if notice is not None:
        getattr(st, notice[0])(notice[1])
    if queued and details.get("waiting"):
        (st.warning if stale else st.caption)(details["waiting"])
    row = st.container(horizontal=True)
    if status not in FINISHED and (queued or not stale):
        if details["progress"]["cancel_requested"]:
            st.caption("Cancel requested: the run stops after the calls in flight.")
        else:
            with row:
                _shared.allowed_button("Cancel run", "run", key="results.cancel",
                                       on_click=_cancel, args=(run_id,))
    if status in ("cancelled", "failed") or (stale and not queued):
        if stale:
            st.warning(f"Run #{md(run_id)} is {md(status)} but no worker has shown a sign of life "
                       "for a while: is a worker running? Resuming queues it again.")
        with row:
            _shared.allowed_button("Resume run", "run", key="results.resume", on_click=_resume,
                                   args=(run_id,), help="Continue where the run stopped; "
                                                        "stored calls are never sent again.")
    if status in FINISHED and details["progress"]["errors"]:
        with row:
            _shared.allowed_button("Retry failed calls", "run", key="results.retry_failed",
                                   on_click=_retry_failed, args=(run_id,),
                                   help="Send only the calls that failed again; the "
                                        "failed attempts stay on record.")
    if status in FINISHED or queued:
        with row:
            _shared.allowed_button("Delete run", "delete", key="results.delete",
                                   on_click=_ask_delete, args=(run_id,),
                                   help="Delete the run and its calls (its dataset stays).")
    if st.session_state.get(CONFIRM_DELETE) == run_id:
        _confirm_delete(run_id, details)


def _status_body(run_id: int, was_live: bool) -> None:
    try:
        get_run(_shared.engine(), run_id)
    except RunError:
        # Deleted (by the button above, in this fragment's rerun, or by someone else):
        # draw the whole page again, whose list no longer has it.
        st.rerun()
    details = runs.run_details(_shared.engine(), run_id)
    p = details["progress"]
    live = details["status"] not in FINISHED and not details["stale"]
    if live != was_live:
        st.rerun()  # the run ended or was resumed: redraw the page, (re)start refreshing
    st.progress(p["fraction"], text=f"{details['status']}: {p['done']} / {p['total']} units")
    _shared.status_badge(details["status"], details["stale"])
    usage, timing = details["usage"], details["timing"]
    active, elapsed = timing["active_s"], timing["duration_s"]
    cols = st.columns(5)
    _shared.done_metric(cols[0], p["done"], p["total"])
    cols[1].metric("Errors", p["errors"])
    cols[2].metric("Retries", p["retries"])
    cols[3].metric("Tokens", f"{usage['tokens']:,}")
    cols[4].metric("Active time", format_seconds(active),
                   help="Time a call of the run was under way (pauses between a cancel "
                        f"and a resume left out); elapsed {format_seconds(elapsed)}.")
    eta = p["eta"] if live else None  # an ended run has no ETA
    st.caption(f"Time {md(timing_text(active, elapsed))} · calls stored: "
               f"{md(runs.calls_text(usage['by_pass']))} "
               f"({md(usage['errors'])} with an error) · prompt "
               f"tokens {usage['prompt_tokens']:,} · completion tokens "
               f"{usage['completion_tokens']:,} · mean latency "
               + ("-" if usage["mean_latency_ms"] is None else f"{usage['mean_latency_ms']:.0f} ms")
               + (f" · calls/s {p['rate']:.1f}" if p["rate"] and live else "")
               + (f" · ETA {md(format_seconds(eta))}" if eta is not None else ""))
    if details["error"]:
        st.error(f"Run #{md(run_id)} {md(details['status'])}: {md(details['error'])}")
    run_actions(run_id, details)


def status_panel(run_id: int) -> dict[str, Any]:
    """Progress, usage and actions; re-read every REFRESH_S while the run is live."""
    details = runs.run_details(_shared.engine(), run_id)
    live = details["status"] not in FINISHED and not details["stale"]
    st.fragment(run_every=_shared.REFRESH_S if live else None)(_status_body)(run_id, live)
    return details


def kind_link(kind: str) -> None:
    """Where the run's full report lives (its kind's own page)."""
    found = find_kind(kind)
    if found is None:
        return
    path, title = found.page, found.title
    st.caption(f"The {md(title.lower())} report of this run (figures, per-question results) "
               f"is on the {md(title)} page.")
    if (_shared.PROJECT_ROOT / path).is_file():
        from streamlit.errors import StreamlitAPIException

        try:
            st.page_link(path, label=f"Open the {title} page", icon=":material/arrow_forward:")
        except StreamlitAPIException:  # the page is not registered in this app (yet)
            pass


def settings_view(details: dict[str, Any]) -> None:
    """The run's settings as started (API keys are never stored, only env var names)."""
    timing = details["timing"]
    st.markdown(f"**{md(details['kind'])}** run of **{md(details['model'])}** on "
                f"**{md(details['dataset'] or '?')}** · judge {md(details['judge'])} · "
                f"{md(details['rounds'])} round(s) · {md(details['items'])} items"
                + (f" · by {md(details['created_by'])}" if details["created_by"] else ""))
    st.caption(" · ".join(f"{md(label)} {timing[key]:%Y-%m-%d %H:%M:%S}"
                          for key, label in (("created_at", "created"),
                                             ("started_at", "started"),
                                             ("finished_at", "finished"),
                                             ("heartbeat_at", "last heartbeat"))
                          if timing[key] is not None))
    with st.expander("Settings (spec and model snapshots)"):
        st.json({"spec": details["spec"], "models": details["models"]}, expanded=True)


def downloads(run_id: int, kind: str) -> None:
    """Raw calls for every run, and the exports its kind defines (`evalcore.kinds`); the
    bytes are cached per run state, and a click never reruns the page (`_shared.download`)."""
    st.markdown("#### Export")
    found = find_kind(kind)
    exports = found.exports if found is not None else ()
    row = st.container(horizontal=True)  # each button as wide as its label, none cut off
    state = (run_id, _shared.run_state(run_id))
    _shared.download("Raw calls CSV", lambda: calls_csv_bytes(_shared.engine(), run_id),
                     state, file_name=f"run{run_id}_calls.csv",
                     mime="text/csv", key="results.calls_csv", column=row, run_id=run_id)
    for n, export in enumerate(exports, start=1):
        _shared.download(export.label, lambda e=export: e.make(_shared.engine(), run_id),
                         state, file_name=export.filename.format(run=run_id),
                         mime=export.mime, key=f"results.export.{n}", column=row,
                         run_id=run_id)


def calls_view(run_id: int) -> None:
    """The stored calls as they are: prompt, answer, verdict, latency, tokens, errors."""
    st.markdown("#### Calls")
    left, right = st.columns([1, 3])
    limit = left.number_input("Show the first", min_value=10, max_value=10_000, value=200,
                              step=50, key="results.calls_limit")
    errors_only = right.toggle("Only calls that ended in an error", key="results.errors_only")
    try:
        table = runs.calls_frame(_shared.engine(), run_id, int(limit),
                                    errors_only=errors_only)
    except EvalcoreError as exc:
        st.warning(str(exc))
        return
    if table.empty:
        st.info("No calls stored" + (" with an error." if errors_only else " yet."))
        return
    st.dataframe(table, hide_index=True, key="results.calls", column_config={
        "prompt": st.column_config.TextColumn(width="large"),
        "answer": st.column_config.TextColumn(width="large"),
        "reason": st.column_config.TextColumn(width="medium"),
        "latency_ms": st.column_config.NumberColumn("latency (ms)", format="%.0f")})


@st.cache_data(max_entries=16, show_spinner="Checking the gate...")
def _gate(db_url: str, run_id: int, baseline_id: int | None, config_text: str,
          state: tuple[str, int]) -> GateResult:
    return gate_any(_shared.engine(), run_id, gate_config_text(config_text),
                    baseline_id=baseline_id)


def gate_view(run_id: int, kind: str) -> None:
    """The CI gate's verdict for a run whose kind has a default gate, unless the kind shows
    it on its own page (`Gate.on_results`)."""
    found = find_kind(kind)
    if found is None or found.gate is None or not found.gate.on_results:
        return
    with st.expander("Quality gate", expanded=False):
        runs = [r for r in list_runs(_shared.engine(), kind=kind, limit=200)
                if r.id != run_id and r.status == "done"]
        labels = {None: "no baseline (absolute checks only)",
                  **{int(r.id): f"#{r.id} · {r.model} · {r.created_at:%Y-%m-%d %H:%M}"
                     for r in runs}}
        baseline = st.selectbox("Baseline run", list(labels), format_func=labels.get,
                                key="results.gate_baseline")
        example = _shared.PROJECT_ROOT / found.gate.config
        config_text = st.text_area("Gate config (TOML)", example.read_text(encoding="utf-8"),
                                   height=240, key=f"results.gate_text.{kind}")
        try:
            verdict = _gate(_shared.settings().db_url, run_id, baseline, config_text,
                            _shared.run_state(run_id))
        except EvalcoreError as exc:
            st.error(f"Gate config not usable: {md(exc)}")
            return
        _shared.gate_headline(verdict)
        st.dataframe(gate_table(verdict), hide_index=True, key="results.gate_table")
        st.code(f"python -m evalcore gate --run {run_id}"
                + (f" --baseline {baseline}" if baseline is not None else "")
                + " --config gate.toml", language="bash")


def reviews_view(run_id: int) -> None:
    """What people's reviews found about this run (the Review page's queues): its judge's
    accuracy, its attack sets' share kept in meaning; nothing when none was reviewed."""
    for row in run_reviews(_shared.engine(), [run_id]):
        share = f"{row['share']:.0%} (95% {row['low']:.0%}-{row['high']:.0%})"
        st.caption(f"People's review, {md(row['what'])}: {md(share)} of {md(row['n'])} "
                   "reviewed")


def run_view(run_id: int) -> None:
    try:
        details = status_panel(run_id)
    except EvalcoreError as exc:
        st.warning(str(exc))
        return
    with _shared.section("settings", run_id):  # each on its own: one failing is one line
        settings_view(details)
    kind_link(details["kind"])
    with _shared.section("exports", run_id):
        downloads(run_id, details["kind"])
    with _shared.section("quality gate", run_id):
        gate_view(run_id, details["kind"])
    with _shared.section("people's review", run_id):
        reviews_view(run_id)
    with _shared.section("calls table", run_id):
        calls_view(run_id)


# ------------------------------------------------------------------ the work queue


def _requeue(job_id: int) -> None:
    requeue_job(_shared.actor(), _shared.engine(), job_id)
    st.session_state[NOTICE] = ("success", f"Job #{job_id} queued again.")


def queue_view() -> None:
    """Every job (runs, re-judging, judge analysis, attack generation and import): who
    executes it, its attempts and error; a failed or cancelled one can be queued again."""
    import pandas as pd

    jobs = list_jobs(_shared.engine(), limit=200)
    if not jobs:
        st.info("No jobs yet: starting a run, a re-judging pass, an attack generation or import "
                "queues one.")
        return
    live = sum(j.status not in JOB_FINISHED for j in jobs)
    st.caption(f"{len(jobs)} most recent jobs, {md(live)} queued or running. Workers claim them "
               "from the database; a job whose worker stopped is taken over by itself.")
    st.dataframe(pd.DataFrame([{
        "id": j.id, "kind": j.kind, "status": j.status, "what": j.label,
        "worker": j.owner if lease_alive(j) else "", "attempts": j.attempts,
        "progress": (min(j.done / j.total, 1.0) if j.total else None),
        "created by": j.created_by, "created": j.created_at, "error": j.error or ""}
        for j in jobs]), hide_index=True, key="results.jobs", column_config={
        "progress": st.column_config.ProgressColumn("progress", min_value=0.0, max_value=1.0),
        "error": st.column_config.TextColumn(width="large")})
    stuck = [j for j in jobs if j.status in ("failed", "cancelled") and j.kind != "run"]
    if stuck:
        left, right = st.columns([3, 1])
        picked = left.selectbox("Queue again", [j.id for j in stuck], key="results.requeue_pick",
                                format_func=lambda i: next(f"#{j.id} {j.label} ({j.status})"
                                                           for j in stuck if j.id == i))
        with right:
            _shared.allowed_button("Queue again", "run", key="results.requeue",
                                   on_click=_requeue, args=(picked,),
                                   help="Runs are resumed from their own view (Runs tab).")


# ------------------------------------------------------------------ page


def main() -> None:
    _shared.page_setup("Results", "Every run saved: browse, export, and compare runs side "
                                  "by side.")
    sections = {"Runs": runs_section, "Compare": _results_compare.compare_view,
                "Leaderboard": _results_monitor.leaderboard_view,
                "Trend": _results_monitor.trend_view,
                "Trust report": _results_monitor.trust_view, "Work queue": queue_view}
    # lazy tabs: only the open one runs (a trend over 1,000 runs must not be computed
    # while the user browses the list)
    tabs = st.tabs(list(sections), key=TAB, on_change="rerun")
    for tab, draw in zip(tabs, sections.values()):
        if tab.open:
            with tab:
                draw()


def runs_section() -> None:
    deleted = st.session_state.pop(DELETED, None)
    if deleted:
        st.success(deleted)
    run_id = browser()
    if run_id is not None:
        run_view(run_id)


main()
