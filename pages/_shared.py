"""What every page shares: page setup, the cached engine, and the sidebar.

Pages gather input, call evalcore and draw; anything more belongs in evalcore. The
engine is cached per database URL, so a test (or a user) that points EVALCORE_HOME or
EVALCORE_DB_URL elsewhere gets its own engine instead of a stale one.
"""
from __future__ import annotations

import runpy
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, ContextManager

import streamlit as st

from evalcore.service.jobs import cancel_job
from evalcore.service.runs import (FINISHED, NO_WORKER, busy_text, cancel_run, count_calls,
                                   get_run, is_stale, list_runs, resume_run, run_progress,
                                   waiting_text)
from evalcore.auth import why_not as _why_not
from evalcore.error_text import describe_error
from evalcore.errors import EvalcoreError, RunError
from evalcore.providers.registry import load_models
from evalcore.metrics.gate import GateResult
from evalcore.report.gates import verdict_line, verdict_of
from evalcore.report.sections import failure_line, guarded_section, log
from evalcore.report.timing import format_seconds
from evalcore.config import DEFAULT_MODEL
from evalcore.markup import code_text, md  # noqa: F401 - the pages' one escape
from evalcore.service import jobs
from pages._engine import REFRESH_S, engine, settings
from pages._local_model import local_model_body, sidebar_refresh
from pages._signin import current_actor, sidebar_identity

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine


PROJECT_ROOT = Path(__file__).resolve().parents[1]
SAMPLES_DIR = PROJECT_ROOT / "data" / "samples"
"""Small bundled files for trying the app without data of one's own."""


def error_line(exc: BaseException) -> str:
    """The one line the CLI prints for an expected failure (`evalcore.error_text.describe_error`);
    a bug (no description) is raised again so it is not hidden."""
    message = describe_error(exc)
    if message is None:
        raise exc
    return message


def show_error(exc: BaseException, prefix: str = "") -> None:
    """`st.error` with the CLI's message for `exc` (settings, database, validation ...)."""
    st.error(prefix + error_line(exc))


def guarded(draw: Callable[[], Any]) -> None:
    """Run `draw` (the router's page); an expected failure is shown, not a traceback."""
    try:
        draw()
    except Exception as exc:  # noqa: BLE001 - bugs are raised again by error_line
        show_error(exc)


def section(name: str, run_id: int | list[int] | None = None) -> ContextManager[None]:
    """`with _shared.section("histogram", run_id):` around one report section (a card row,
    a figure, a table, an export): if it raises, the page shows one line naming the
    section and the run, the traceback goes to the log, and the rest of the page draws
    (`evalcore.report.sections`)."""
    return guarded_section(name, run_id, st.error)


def page_setup(title: str, intro: str) -> None:
    """Title and one line saying what the page is for (after making sure the app's router runs)."""
    _route_through_app()
    st.title(title)
    st.caption(intro)


def _route_through_app() -> None:
    """Serve a page opened in Streamlit's legacy `pages/` mode through streamlit_app.py.

    Streamlit starts every server process in its old "pages directory" mode and leaves
    it only when a session calls `st.navigation`; until then a visit straight to
    /attacks runs pages/attacks.py on its own (no shared sidebar, no wide layout, a page
    list with `_shared` in it). Here the page has drawn nothing yet, so the router runs
    in its place, in this same run (widget events are kept), and serves this URL.
    """
    from streamlit.runtime.pages_manager import PagesManager

    if not PagesManager.uses_pages_directory:
        return

    runpy.run_path(str(PROJECT_ROOT / "streamlit_app.py"), run_name="__main__")
    st.stop()


def actor() -> Any:
    """The acting user of this session (`evalcore.auth.Actor`; the local admin-equivalent
    user unless EVALCORE_AUTH turns team mode on)."""
    return current_actor()


def why_not(permission: str) -> str | None:
    """None if this session's user may do it, else why not (a disabled button's help)."""
    return _why_not(actor(), permission)


def allowed_button(label: str, permission: str, *, disabled: bool = False,
                   help: str | None = None, form: bool = False, **kwargs: Any) -> bool:
    """A button this session's role may lack `permission` for: then disabled, saying why
    (evalcore refuses the action anyway; this only spares the click)."""
    denied = why_not(permission)
    button = st.form_submit_button if form else st.button
    clicked = button(label, disabled=disabled or denied is not None, help=denied or help,
                     **kwargs)
    if denied:
        st.caption(denied)
    return bool(clicked)


def sidebar(url_path: str = "") -> None:
    """The sidebar every page shows: who is signed in, which database is in use and the
    local model's state (re-read as `_local_model.sidebar_refresh` says for the page
    at `url_path`)."""
    with st.sidebar:
        sidebar_identity()
        st.caption("Database")
        st.code(settings().redacted_db_url(), language=None, wrap_lines=True)
        st.caption("Local model")
        # while a worker loads it, re-read every REFRESH_S ("starting" -> "loaded"); on
        # Monitoring while a schedule is active, as often as its schedules
        st.fragment(run_every=sidebar_refresh(url_path))(local_model_body)()


# ------------------------------------------------------------------ downloads


@st.cache_data(max_entries=16, show_spinner="Preparing the download...")
def _download_bytes(cache_key: tuple[Any, ...], _make: Callable[[], bytes]) -> bytes:
    """`_make()` once per `cache_key` (not hashed: the key names what it builds)."""
    return _make()


def download(label: str, make: Callable[[], bytes], cache_key: tuple[Any, ...], *,
             file_name: str, mime: str, key: str, column: Any = None,
             run_id: int | None = None) -> None:
    """A download button that never hangs.

    Streamlit's deferred downloads (`data=callable`) get a new file id on every rerun and
    drop the old one, and a download click reruns the page by default: a second quick
    click then asks for a file that is gone (`MediaFileStorageError: Deferred file ...
    not found`, the button waits forever). Here the bytes are built when the button is
    drawn, cached under `cache_key` (the run, its `run_state` and the export's options;
    the database and the button's `key` are added here), so a rerun
    hands the same content the same URL, and a click does not rerun the page.
    An export that fails to build says so in one line (naming it and `run_id`) beside a
    disabled button; the page's other exports are still offered.
    """
    target = column or st
    try:  # the database and the button's key namespace every caller's cache key
        data = _download_bytes((settings().db_url, key, *cache_key), make)
    except EvalcoreError as exc:  # nothing to export yet (no judged answer ...): say why
        target.download_button(label, b"", file_name=file_name, mime=mime, key=key,
                               disabled=True, help=f"Not available yet: {exc}",
                               on_click="ignore")
        return
    except Exception as exc:  # noqa: BLE001 - one broken export never hides the others
        log.error("export %r of run %s failed", label, run_id, exc_info=True)
        line = failure_line(f"{label} export", run_id, exc, verb="build")
        target.download_button(label, b"", file_name=file_name, mime=mime, key=key,
                               disabled=True, help=line, on_click="ignore")
        st.error(line)
        return
    target.download_button(label, data, file_name=file_name, mime=mime, key=key,
                           on_click="ignore")


# ------------------------------------------------------------------ run progress

def change_delta(change: float | None, fmt: str = "{:+.1%}") -> str | None:
    """A metric card's delta text; None (no arrow) when the change rounds to zero, so a
    "+0.0%" is never drawn as a green rise."""
    if change is None:
        return None
    text = fmt.format(change)
    return None if fmt.format(0.0) in (text, text.replace("-", "+", 1)) else text


STATUS_COLORS = {"done": "green", "running": "blue", "queued": "gray", "cancelled": "orange",
                 "failed": "red"}


def done_metric(where: Any, done: int, total: int) -> None:
    """How much of a run is done, as a card that fits a fifth of a 1366 px window: the
    count as the value, the total in the label ("1,508 / 1,508" was cut off)."""
    where.metric(f"Done of {total:,}", f"{done:,}")


def status_badge(status: str, stale: bool = False) -> None:
    """The run's status as a coloured word on its own line (a metric card cuts
    "cancelled" off in a narrow column)."""
    label = f"{status} (no worker)" if stale else status
    st.badge(label, color=STATUS_COLORS.get(status, "gray"))


def _progress_body(run_id: int, was_live: bool, key: str, unit: str) -> None:
    eng = engine()
    p = run_progress(eng, run_id)
    finished = p["status"] in FINISHED
    if was_live and finished:
        st.rerun()  # once, when the run ends: draw the results, stop refreshing
    if not was_live and not finished:
        st.rerun()  # resumed (here or elsewhere): draw the page again, refreshing
    st.progress(p["fraction"], text=f"{p['status']}: {p['done']} / {p['total']} {unit}")
    cols = st.columns(5)
    done_metric(cols[0], p["done"], p["total"])
    cols[1].metric(f"{unit.capitalize()}/s", "-" if p["rate"] is None else f"{p['rate']:.1f}")
    cols[2].metric("Errors", p["errors"])
    cols[3].metric("Retries", p["retries"])
    if finished:  # an ended run has no ETA: its status says how it ended
        with cols[4]:
            st.caption("Status")
            status_badge(p["status"])
    else:
        cols[4].metric("ETA", format_seconds(p["eta"]))
    if finished:
        run = get_run(eng, run_id)
        if run.error:
            st.error(f"Run #{md(run_id)} {md(run.status)}: {md(run.error)}")
        if run.status in ("cancelled", "failed"):
            _resume_offer(run_id, key, p, unit)
        return
    _waiting_line(eng, run_id, p["status"])
    if p["cancel_requested"]:
        st.caption("Cancel requested: the run stops after the calls in flight.")
    elif st.button("Cancel run", key=f"{key}.cancel", disabled=why_not("run") is not None,
                   help=why_not("run")):
        cancel_run(actor(), eng, run_id)
        st.toast(f"Cancelling run #{md(run_id)}")


def _resume_offer(run_id: int, key: str, p: dict[str, Any], unit: str) -> None:
    """A stopped run says that its figures are partial, and can be resumed where it is
    shown (not only on Results)."""
    notice = st.session_state.pop(f"{key}.resume_notice", None)
    if notice:
        st.error(notice)
    st.warning(f"Run #{md(run_id)} {md(p['status'])} at {p['done']:,} of {p['total']:,} "
               f"{md(unit)}: the figures below cover only what was answered. Resume it to "
               "finish the rest; stored calls are never sent again.")
    reason = why_not("run")
    st.button("Resume run", key=f"{key}.resume", disabled=reason is not None, help=reason,
              on_click=_resume, args=(run_id, key))


def _resume(run_id: int, key: str) -> None:
    """Button callback (before the script runs, so the click is never lost)."""
    try:
        resume_run(actor(), engine(), run_id)
    except EvalcoreError as exc:
        st.session_state[f"{key}.resume_notice"] = f"Cannot resume run #{run_id}: {exc}"


def _waiting_line(eng: Engine, run_id: int, status: str) -> None:
    """Who executes the run, or why nobody does yet (a queued run: waiting behind busy
    workers, or no worker at all: `runner.start.waiting_text`)."""
    job = jobs.run_job(eng, run_id)
    run = get_run(eng, run_id)
    waiting = waiting_text(eng, run)
    if job is not None and jobs.lease_alive(job):
        st.caption(f"Executed by worker `{code_text(job.owner)}` (attempt {md(job.attempts)}).")
    elif waiting is not None:
        (st.warning if waiting.startswith(NO_WORKER) else st.caption)(waiting)
    elif is_stale(run):
        st.warning("No worker has taken this run for a while: start one with "
                   "`python -m evalcore worker`, or check that the app's embedded worker is "
                   "on (EVALCORE_EMBEDDED_WORKER).")
    elif status == "queued" or job is not None:
        st.caption("Waiting for a worker; a run whose worker stopped is taken over by "
                   "itself within seconds.")


def _job_body(job_id: int, was_live: bool, key: str) -> None:
    job = jobs.get_job(engine(), job_id)
    finished = job.status in jobs.JOB_FINISHED
    if was_live and finished:
        st.session_state[f"{key}.ended_seen.{job_id}"] = True
        st.rerun()  # once, when the job ends: draw what it made
    fraction = min(job.done / job.total, 1.0) if job.total else 0.0
    st.progress(fraction, text=f"{job.label}: {job.status}, {job.done} / {job.total or '?'}")
    if job.status == "failed":
        st.error(f"Job #{md(job.id)} failed: {md(job.error)}")
    elif job.status == "running":
        st.caption(f"Executed by worker `{code_text(job.owner)}` (attempt {md(job.attempts)}).")
    elif job.status == "queued":
        waiting = busy_text(engine(), f"job #{job.id}") or "Waiting for a worker."
        st.caption(md(waiting))
    if not finished and not job.cancel_requested and allowed_button(
            "Cancel", "run", key=f"{key}.cancel_job"):
        cancel_job(actor(), engine(), job_id)
        st.toast(f"Cancelling job #{md(job_id)}")


def job_panel(job_id: int, key: str) -> str:
    """Live progress of a job (attack generation, re-judging, judge analysis), re-read
    from the database every REFRESH_S while it is live; returns its status. The page
    reruns once when it ends."""
    status = jobs.get_job(engine(), job_id).status
    live = status not in jobs.JOB_FINISHED
    seen = f"{key}.ended_seen.{job_id}"
    if not live and not st.session_state.get(seen):
        # The job may have ended after this run drew what it made (a report above the
        # panel): draw the page once more, so nothing on it predates the job's end.
        st.session_state[seen] = True
        st.rerun()
    st.fragment(run_every=REFRESH_S if live else None)(_job_body)(job_id, live, key)
    return status


def queue_job(create: Callable[[], int], key: str) -> int | None:
    """Queue a job with `create()` and remember it as the page's job under `key`; an
    error the user can act on is shown instead of raised."""
    try:
        job_id = create()
    except EvalcoreError as exc:
        st.error(str(exc))
        return None
    st.session_state[key] = job_id
    st.toast(f"Job #{md(job_id)} queued")
    return job_id


def progress_panel(run_id: int, key: str, unit: str = "calls") -> str:
    """Live progress of a run (done, rate, errors, retries, ETA, Cancel), re-read from the
    database every REFRESH_S while the run is live; returns the run's status.

    `key` namespaces the widgets (the page's kind). A fragment, so the page
    around it is not rerun; it reruns the page once when the run finishes.
    """
    status = get_run(engine(), run_id).status
    live = status not in FINISHED
    st.fragment(run_every=REFRESH_S if live else None)(_progress_body)(run_id, live, key, unit)
    return status


def run_picker(kind: str, describe: Callable[[Any], str]) -> int | None:
    """Select box of the runs of `kind`, newest first; returns the chosen run id.

    The choice is kept in session_state["<kind>.run_id"] (a run just started there is
    shown first); `describe(run)` gives the middle of each label.
    """
    runs = list_runs(engine(), kind=kind, limit=200)
    if not runs:
        st.info(f"No {md(kind)} runs yet: start one above.")
        return None
    # No status in the label: a keyed select box keeps the labels it was first drawn with,
    # so "queued" would stay after the run ended; the progress panel shows the status.
    labels = {run.id: (f"#{run.id} · {run.name + ' · ' if run.name else ''}{describe(run)} · "
                       f"{run.created_at:%Y-%m-%d %H:%M}") for run in runs}
    run_key, pick_key = f"{kind}.run_id", f"{kind}.pick"
    wanted = st.session_state.get(run_key)
    previous = st.session_state.get(pick_key)
    if previous not in labels:
        st.session_state[pick_key] = wanted if wanted in labels else runs[0].id
        say_if_deleted(previous, st.session_state[pick_key])
    picked = st.selectbox("Run", list(labels), format_func=labels.get, key=pick_key)
    st.session_state[run_key] = picked
    return picked


def say_if_deleted(previous: Any, shown: int) -> None:
    """A run picked in this session that no longer exists (deleted in another tab or by
    someone else) is named, rather than silently replaced by another run."""
    if not isinstance(previous, int) or previous == shown:
        return
    try:
        get_run(engine(), previous)
    except RunError:
        st.warning(f"Run #{md(previous)} no longer exists (deleted in another tab or by "
                   f"someone else): showing run #{md(shown)}.")


def model_names() -> list[str]:
    """The models of models.toml, sorted; an unreadable file is shown as an error (empty list)."""
    try:
        return sorted(load_models(settings().models_path))
    except EvalcoreError as exc:
        show_error(exc)
        return []


def default_model_index(models: list[str]) -> int:
    """Which model a new run starts with: the model of the newest run if it still exists,
    else the embedded `local` model, else the first one (never an arbitrary judge)."""
    if not models:
        return 0
    last = list_runs(engine(), limit=1)
    if last and last[0].model in models:
        return models.index(last[0].model)
    return models.index(DEFAULT_MODEL) if DEFAULT_MODEL in models else 0


def start_and_show(kind: str, start: Callable[[], int]) -> int | None:
    """Start a run with `start()` and make it the one the page shows (the picker is drawn
    later this run); an error the user can act on is shown instead of raised."""
    try:
        run_id = start()
    except Exception as exc:  # noqa: BLE001 - bugs are raised again by error_line
        show_error(exc, "Could not start the run: ")
        return None
    st.session_state[f"{kind}.run_id"] = run_id
    st.session_state[f"{kind}.pick"] = run_id
    st.toast(f"Run #{md(run_id)} started")
    return run_id


def run_state(run_id: int) -> tuple[str, int]:
    """(status, calls stored) of a run: the cache key of anything built from its calls.

    It changes when the run stores a call or ends, and also when calls are added after it
    ended (a re-judged sample, a judge model's ratings), so cached reports never go stale.
    """
    eng = engine()
    return get_run(eng, run_id).status, count_calls(eng, run_id)


def cached_report(build: Callable[..., dict[str, Any]], run_id: int,
                  *args: Any) -> dict[str, Any] | None:
    """`build(db_url, run_id, run_state(run_id), *args)`, a page's cached report function;
    None, with the reason shown, when the run has nothing to report yet."""
    try:
        return build(settings().db_url, run_id, run_state(run_id), *args)
    except EvalcoreError as exc:
        st.info(f"No results yet: {md(exc)}")
        return None
    except Exception as exc:  # noqa: BLE001 - the page around the report still draws
        log.error("report of run %s failed", run_id, exc_info=True)
        st.error(failure_line("report", run_id, exc, verb="build"))
        return None


def gate_headline(result: GateResult) -> None:
    """The gate's verdict in the words of the headline card, the CLI and the trust report
    (`report.gates.verdict_line`): PASSED, FAILED (a measured figure broke a limit) or NOT
    MEASURED, as every gate panel shows it."""
    show = {"pass": st.success, "fail": st.error}.get(verdict_of(result), st.warning)
    show(f"Gate {verdict_line(result)}")
