"""Results: every run saved; browse, export, and compare runs side by side.

The page only gathers input, calls evalcore and draws. The run list, a run's details
and its raw calls come from `evalcore.report.compare`; exports from
`evalcore.report.stability` and `compare.calls_csv_bytes`; the comparison of two
stability runs from `compare.compare_stability`, drawn by `compare_figures`. The
database is the truth about a run: a live run's details re-read it every few seconds.
Robustness and fairness runs have their reports on their own pages; this page links there.
"""
from __future__ import annotations

import json
from typing import Any

import streamlit as st

from evalcore.errors import EvalcoreError
from evalcore.report import compare
from evalcore.store import queries
from pages import _shared

# No bare strings at module level below: Streamlit's magic would draw them on the page.
PICK = "results.pick"  # the run picker's widget key
NOTICE = "results.notice"  # (kind, message) an action left for the next draw
MAX_RUNS = 1000  # newest runs listed
FILTERS = (("kind", "Kind"), ("status", "Status"), ("model", "Model"), ("dataset", "Dataset"))


def _run_label(row: Any) -> str:
    name = f"{row.name} · " if row.name else ""
    return (f"#{row.id} · {row.kind} · {name}{row.model} on {row.dataset or '?'} · "
            f"{row.status}{' (stale)' if row.stale else ''} · {row.created_at:%Y-%m-%d %H:%M}")


# ------------------------------------------------------------------ browse


def browser() -> int | None:
    """Filters, the runs table and a picker; returns the run chosen for details."""
    from evalcore.dataset import list_datasets

    eng = _shared.engine()
    runs = queries.list_runs(eng, limit=MAX_RUNS)
    if not runs:
        st.info("No runs yet: start one on the Stability page (or `python -m evalcore "
                "stability`). Every run is saved here.")
        return None
    frame = compare.runs_frame(runs, {ds.id: ds.name for ds in list_datasets(eng)})
    cols = st.columns(len(FILTERS))
    chosen = {column: cols[i].multiselect(label, sorted(set(frame[column])),
                                          key=f"results.filter.{column}")
              for i, (column, label) in enumerate(FILTERS)}
    shown = compare.filter_runs(frame, **chosen)
    st.caption(f"{len(shown)} of {len(frame)} runs" + (f" (the newest {MAX_RUNS})"
                                                        if len(frame) >= MAX_RUNS else ""))
    st.dataframe(shown, hide_index=True, key="results.runs", column_config={
        "progress": st.column_config.ProgressColumn("progress", format="percent",
                                                    min_value=0.0, max_value=1.0),
        "duration_s": st.column_config.NumberColumn("duration (s)", format="%.1f")})
    if shown.empty:
        st.info("No run matches these filters.")
        return None
    labels = {int(row.id): _run_label(row) for row in shown.itertuples(index=False)}
    if st.session_state.get(PICK) not in labels:
        st.session_state[PICK] = next(iter(labels))
    return st.selectbox("Run details", list(labels), format_func=labels.get, key=PICK)


# ------------------------------------------------------------------ one run


def _cancel(run_id: int) -> None:
    from evalcore import actions

    try:
        actions.cancel_run(_shared.actor(), _shared.engine(), run_id)
    except EvalcoreError as exc:
        st.session_state[NOTICE] = ("error", f"Cannot cancel run #{run_id}: {exc}")
        return
    message = f"Cancelling run #{run_id}: it stops after the calls in flight."
    st.session_state[NOTICE] = ("info", message)


def _resume(run_id: int) -> None:
    """Button callback: it runs before the script, so a click is never lost even when the
    run's state changed since the button was drawn. The run goes back to the queue."""
    from evalcore import actions

    try:
        actions.resume_run(_shared.actor(), _shared.engine(), run_id)
    except EvalcoreError as exc:
        st.session_state[NOTICE] = ("error", f"Cannot resume run #{run_id}: {exc}")
        return
    st.session_state[NOTICE] = ("success", f"Run #{run_id} queued again: a worker continues "
                                           "it; stored calls are never sent again.")


def _retry_failed(run_id: int) -> None:
    from evalcore import actions

    try:
        moved, _ = actions.retry_failed(_shared.actor(), _shared.engine(), run_id)
    except EvalcoreError as exc:
        st.session_state[NOTICE] = ("error", f"Cannot retry run #{run_id}: {exc}")
        return
    st.session_state[NOTICE] = ("success", f"Run #{run_id}: {moved} failed call(s) queued "
                                           "again (their earlier record is kept).")


def _delete(run_id: int) -> None:
    from evalcore import actions

    try:
        actions.delete_run(_shared.actor(), _shared.engine(), run_id)
    except EvalcoreError as exc:
        st.session_state[NOTICE] = ("error", f"Cannot delete run #{run_id}: {exc}")
        return
    st.session_state.pop(PICK, None)
    st.session_state[NOTICE] = ("success", f"Run #{run_id} deleted with its calls.")


def actions(run_id: int, details: dict[str, Any]) -> None:
    """Cancel a live run; resume a cancelled, failed or stale one; send failed calls
    again; delete a run that is not executing."""
    status, stale = details["status"], details["stale"]
    notice = st.session_state.pop(NOTICE, None)
    if notice is not None:
        getattr(st, notice[0])(notice[1])
    cols = st.columns(4)
    if status not in queries.FINISHED and not stale:
        if details["progress"]["cancel_requested"]:
            st.caption("Cancel requested: the run stops after the calls in flight.")
        else:
            with cols[0]:
                _shared.allowed_button("Cancel run", "run", key="results.cancel",
                                       on_click=_cancel, args=(run_id,))
    if status in ("cancelled", "failed") or stale:
        if stale:
            st.warning(f"Run #{run_id} is {status} but no worker has shown a sign of life "
                       "for a while: is a worker running? Resuming queues it again.")
        with cols[1]:
            _shared.allowed_button("Resume run", "run", key="results.resume", on_click=_resume,
                                   args=(run_id,), help="Continue where the run stopped; "
                                                        "stored calls are never sent again.")
    if status in queries.FINISHED:
        if details["progress"]["errors"]:
            with cols[2]:
                _shared.allowed_button("Retry failed calls", "run", key="results.retry_failed",
                                       on_click=_retry_failed, args=(run_id,),
                                       help="Send only the calls that failed again; the "
                                            "failed attempts stay on record.")
        with cols[3]:
            _shared.allowed_button("Delete run", "delete", key="results.delete",
                                   on_click=_delete, args=(run_id,),
                                   help="Delete the run and its calls (its dataset stays).")


def _status_body(run_id: int, was_live: bool) -> None:
    details = compare.run_details(_shared.engine(), run_id)
    p = details["progress"]
    live = details["status"] not in queries.FINISHED and not details["stale"]
    if live != was_live:
        st.rerun()  # the run ended or was resumed: redraw the page, (re)start refreshing
    st.progress(p["fraction"], text=f"{details['status']}: {p['done']} / {p['total']} units")
    usage, timing = details["usage"], details["timing"]
    cols = st.columns(6)
    cols[0].metric("Status", details["status"])
    cols[1].metric("Done", f"{p['done']} / {p['total']}")
    cols[2].metric("Errors", p["errors"])
    cols[3].metric("Retries", p["retries"])
    cols[4].metric("Tokens", f"{usage['tokens']:,}")
    cols[5].metric("Duration", _shared.duration(timing["duration_s"]))
    st.caption(f"Calls stored: {usage['calls']} ({usage['errors']} with an error) · prompt "
               f"tokens {usage['prompt_tokens']:,} · completion tokens "
               f"{usage['completion_tokens']:,} · mean latency "
               + ("-" if usage["mean_latency_ms"] is None else f"{usage['mean_latency_ms']:.0f} ms")
               + (f" · calls/s {p['rate']:.1f}" if p["rate"] else "")
               + (f" · ETA {_shared.duration(p['eta'])}" if p["eta"] is not None else ""))
    if details["error"]:
        st.error(f"Run #{run_id} {details['status']}: {details['error']}")
    actions(run_id, details)


def status_panel(run_id: int) -> dict[str, Any]:
    """Progress, usage and actions; re-read every REFRESH_S while the run is live."""
    details = compare.run_details(_shared.engine(), run_id)
    live = details["status"] not in queries.FINISHED and not details["stale"]
    st.fragment(run_every=_shared.REFRESH_S if live else None)(_status_body)(run_id, live)
    return details


def kind_link(kind: str) -> None:
    """Where the run's full report lives (its kind's own page)."""
    from evalcore.kinds import KINDS

    if kind not in KINDS:
        return
    path, title = KINDS[kind].page, KINDS[kind].title
    st.caption(f"The {title.lower()} report of this run (figures, per-question results) "
               f"is on the {title} page.")
    if (_shared.PROJECT_ROOT / path).is_file():
        from streamlit.errors import StreamlitAPIException

        try:
            st.page_link(path, label=f"Open the {title} page", icon=":material/arrow_forward:")
        except StreamlitAPIException:  # the page is not registered in this app (yet)
            pass


def settings_view(details: dict[str, Any]) -> None:
    """The run's settings as started (API keys are never stored, only env var names)."""
    timing = details["timing"]
    st.markdown(f"**{details['kind']}** run of **{details['model']}** on "
                f"**{details['dataset'] or '?'}** · judge {details['judge']} · "
                f"{details['rounds']} round(s) · {details['items']} items"
                + (f" · by {details['created_by']}" if details["created_by"] else ""))
    st.caption(" · ".join(f"{label} {timing[key]:%Y-%m-%d %H:%M:%S}"
                          for key, label in (("created_at", "created"),
                                             ("started_at", "started"),
                                             ("finished_at", "finished"),
                                             ("heartbeat_at", "last heartbeat"))
                          if timing[key] is not None))
    with st.expander("Settings (spec and model snapshots)"):
        st.json({"spec": details["spec"], "models": details["models"]}, expanded=True)


def downloads(run_id: int, kind: str) -> None:
    """Raw calls for every run, and the exports its kind defines (`evalcore.kinds`)."""
    from evalcore.kinds import KINDS

    st.markdown("#### Export")
    exports = KINDS[kind].exports if kind in KINDS else ()
    cols = st.columns(1 + len(exports))
    cols[0].download_button("Raw calls CSV", lambda: compare.calls_csv_bytes(_shared.engine(),
                                                                             run_id),
                            file_name=f"run{run_id}_calls.csv", mime="text/csv",
                            key="results.calls_csv")
    for n, export in enumerate(exports, start=1):
        cols[n].download_button(export.label,
                                lambda e=export: e.make(_shared.engine(), run_id),
                                file_name=export.filename.format(run=run_id), mime=export.mime,
                                key=f"results.export.{n}")


def calls_view(run_id: int) -> None:
    """The stored calls as they are: prompt, answer, verdict, latency, tokens, errors."""
    st.markdown("#### Calls")
    left, right = st.columns([1, 3])
    limit = left.number_input("Show the first", min_value=10, max_value=10_000, value=200,
                              step=50, key="results.calls_limit")
    errors_only = right.toggle("Only calls that ended in an error", key="results.errors_only")
    try:
        table = compare.calls_frame(_shared.engine(), run_id, int(limit),
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


def run_view(run_id: int) -> None:
    try:
        details = status_panel(run_id)
    except EvalcoreError as exc:
        st.warning(str(exc))
        return
    settings_view(details)
    kind_link(details["kind"])
    downloads(run_id, details["kind"])
    calls_view(run_id)


# ------------------------------------------------------------------ compare


@st.cache_data(max_entries=8, show_spinner="Comparing the runs...")
def _comparison(db_url: str, run_a: int, run_b: int, state: tuple) -> dict[str, Any]:
    """The comparison, cached per both runs' `_shared.run_state`."""
    return compare.compare_stability(_shared.engine(), run_a, run_b)


def summary_cards(result: dict[str, Any]) -> None:
    """Run A and run B side by side; B's numbers carry their difference to A."""
    a, b = result["a"], result["b"]
    for col, letter, side in zip(st.columns(2), "AB", (a, b)):
        with col.container(border=True):
            st.markdown(f"**{letter}: run #{side['run_id']}** {side['name']}  \n"
                        f"{side['model']} on {side['dataset'] or '?'} · judge {side['judge']} · "
                        f"N = {side['repetition_count']} · {side['status']}")
            cards = st.columns(4)
            other = a if letter == "B" else None
            cards[0].metric("Questions", side["questions"])
            cards[1].metric("Mean success rate", f"{side['mean']:.1%}",
                            delta=None if other is None else f"{side['mean'] - other['mean']:+.1%}")
            cards[2].metric("Std of rates", f"{side['std']:.3f}",
                            delta=None if other is None else f"{side['std'] - other['std']:+.3f}",
                            delta_color="inverse")
            n = side["repetition_count"]
            cards[3].metric(f"pass^{n}", f"{side['pass_hat_k'][str(n)]:.1%}")


def test_line(test: dict[str, Any], join: dict[str, Any]) -> None:
    how = "the same items" if join["by"] == "item" else "identical question text"
    st.caption(f"{join['matched']} questions matched on {how}; {join['only_a']} only in A, "
               f"{join['only_b']} only in B.")
    if test["p_value"] is None:
        st.info(f"No paired test: {test['reason']}.")
        return
    st.markdown(
        f"**Wilcoxon signed-rank test** (two-sided, per-question success rates, "
        f"{test['n_changed']} of {test['n_pairs']} questions changed; unchanged ones are "
        f"dropped): W = {test['statistic']:g}, p = {test['p_value']:.4g}. B better on "
        f"{test['n_better_b']}, A better on {test['n_better_a']}; mean change "
        f"{test['mean_delta']:+.3f}.")


def compare_view() -> None:
    """Pick two stability runs and see them side by side."""
    from evalcore.report import compare_figures

    runs = queries.list_runs(_shared.engine(), kind="stability", limit=MAX_RUNS)
    if len(runs) < 2:
        st.info("Comparing needs two stability runs; start them on the Stability page.")
        return
    labels = {int(r.id): (f"#{r.id} · {r.name + ' · ' if r.name else ''}{r.model} · N={r.rounds}"
                          f" · {r.status} · {r.created_at:%Y-%m-%d %H:%M}") for r in runs}
    ids = list(labels)
    left, right = st.columns(2)
    run_a = left.selectbox("Run A", ids, index=1, format_func=labels.get, key="results.compare_a")
    run_b = right.selectbox("Run B", ids, index=0, format_func=labels.get, key="results.compare_b")
    if run_a == run_b:
        st.info("Pick two different runs.")
        return
    try:
        result = _comparison(_shared.settings().db_url, run_a, run_b,
                             (_shared.run_state(run_a), _shared.run_state(run_b)))
    except EvalcoreError as exc:
        st.warning(f"Cannot compare: {exc}")
        return
    summary_cards(result)
    test_line(result["test"], result["join"])
    st.plotly_chart(compare_figures.distributions_figure(result), key="results.compare_hist")
    if result["questions"]:
        st.plotly_chart(compare_figures.rates_scatter(result), key="results.compare_scatter")
    with st.expander("Classes, risk levels and pass^k side by side"):
        st.dataframe(compare.counts_frame(result), hide_index=True, key="results.compare_counts")
        st.dataframe(result["pass_k"], hide_index=True, key="results.compare_passk")
    st.markdown("#### Questions that changed most")
    changed = compare.questions_frame(result, changed_only=True)
    if changed.empty:
        st.info("No matched question changed its success rate.")
    else:
        st.dataframe(changed, hide_index=True, key="results.compare_changed", column_config={
            "question": st.column_config.TextColumn(width="large"),
            "delta": st.column_config.NumberColumn("change (B - A)", format="%+.2f")})
    st.download_button("Comparison JSON",
                       json.dumps(result, ensure_ascii=False, indent=2, default=str),
                       file_name=f"compare_run{run_a}_run{run_b}.json", mime="application/json",
                       key="results.compare_json")


# ------------------------------------------------------------------ the work queue


def _requeue(job_id: int) -> None:
    from evalcore import actions

    actions.requeue_job(_shared.actor(), _shared.engine(), job_id)
    st.session_state[NOTICE] = ("success", f"Job #{job_id} queued again.")


def queue_view() -> None:
    """Every job (runs, re-judging, judge analysis, attack generation): who executes it,
    its attempts and error; a failed or cancelled one can be queued again."""
    import pandas as pd

    from evalcore.store.jobs import JOB_FINISHED, lease_alive, list_jobs

    jobs = list_jobs(_shared.engine(), limit=200)
    if not jobs:
        st.info("No jobs yet: starting a run, a re-judging pass or an attack generation "
                "queues one.")
        return
    live = sum(j.status not in JOB_FINISHED for j in jobs)
    st.caption(f"{len(jobs)} most recent jobs, {live} queued or running. Workers claim them "
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
    runs_tab, compare_tab, queue_tab = st.tabs(["Runs", "Compare", "Work queue"])
    with runs_tab:
        run_id = browser()
        if run_id is not None:
            run_view(run_id)
    with compare_tab:
        compare_view()
    with queue_tab:
        queue_view()


main()
