"""Monitoring: schedules that run an evaluation again and again, their last runs with the
gate verdicts and alert deliveries, each gated figure against its threshold and the
baseline, the next due time; add, pause, resume, delete a schedule, send a test alert,
and mark a run as the baseline of its dataset and model.

The page only gathers input, calls evalcore (`evalcore.monitor`) and draws: the table is
`monitor.view.monitoring`, the same rows `python -m evalcore schedules list --json` prints.
"""
from __future__ import annotations

from typing import Any

import streamlit as st

from evalcore.dataset import list_datasets
from evalcore.errors import RunError
from evalcore.fairness import is_fairness_dataset
from evalcore.kinds import get_kind
from evalcore.markup import md
from evalcore.monitor import channels
from evalcore.service.baselines import baselines_in_force
from evalcore.service.monitoring import (add_schedule, delete_schedule, edit_schedule,
                                         pause_schedule, set_baseline, test_alert)
from evalcore.service.runs import list_runs
from evalcore.service.schedules import parse_every
from evalcore.monitor.runs import schedulable
from evalcore.monitor.view import figure_series, monitoring, row_state, series_figure
from evalcore.perturb.sets import list_attack_sets
from pages import _shared

NOTICE = "monitoring.notice"  # what the last action did, shown on the next draw
REFRESH_S = 10.0  # while a schedule is active, its runs and verdicts are re-read this often


def _table(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The schedules table: one row per schedule, as the CLI's JSON names the fields."""
    return [{"id": r["id"], "kind": r["kind"],
             "target": str(r["params"].get("dataset") or r["params"].get("suite")
                           or r["params"].get("attack_set_ids")),
             "model": r["params"].get("model"), "every": r["every"],
             "next due (UTC)": "paused" if r["paused"]
             else (r["next_due"] or "")[:19].replace("T", " "),
             "runs": ", ".join(str(i) for i in r["runs"]),
             "last": row_state(r["last"][-1]) if r["last"] else "", "channels": "; ".join(r["channels"])} for r in rows]


def _act(what: str, do: Any) -> None:
    try:
        do()
    except Exception as exc:  # noqa: BLE001 - bugs are raised again by error_line
        _shared.show_error(exc, f"Could not {what}: ")
        return
    st.session_state[NOTICE] = f"Done: {what}."
    st.rerun()


def _schedule(info: dict[str, Any]) -> None:
    eng, actor, sid = _shared.engine(), _shared.actor(), info["id"]
    # the run's own status (store.run_state), not the due time's "created"
    st.dataframe([{"due (UTC)": (r["due_at"] or "")[:19].replace("T", " "),
                   "run": r["run_id"],
                   "run status": r["run_status"] or ("deleted" if r["run_id"] is not None
                                                     else r["status"]),
                   "verdict": r["verdict"] or "", "reason": r["reason"] or "",
                   "alerts": "; ".join(f"{a['status']} {a['channel']}"
                                       + (f" ({a['error']})" if a["error"] else "")
                                       for a in r["alerts"])}
                  for r in info["last"]], hide_index=True)
    cols = st.columns(3)
    with cols[0]:
        label = "Resume" if info["paused"] else "Pause"
        if _shared.allowed_button(label, "schedule", key=f"monitoring.pause.{sid}"):
            _act(f"{label.lower()} schedule {sid}",
                 lambda: pause_schedule(actor, eng, sid, not info["paused"]))
    with cols[1]:
        if _shared.allowed_button("Test alert", "schedule", key=f"monitoring.test.{sid}",
                                  disabled=not info["channels"],
                                  help="send a test message to each channel now"):
            results = test_alert(actor, eng, sid)
            for r in results:
                (st.success if r["status"] == "sent" else st.error)(
                    f"{md(r['status'])}: {md(r['channel'])}"
                    + (f" ({md(r['error'])})" if r["error"] else ""))
    with cols[2]:
        if _shared.allowed_button("Delete", "schedule", key=f"monitoring.delete.{sid}",
                                  help="its runs stay"):
            _act(f"delete schedule {sid}", lambda: delete_schedule(actor, eng, sid))
    with st.form(f"monitoring.edit.{sid}"):
        every = st.text_input("New period (10s, 5m, 1h, 1d) or cron expression",
                              info["every"].removeprefix("cron "), key=f"monitoring.every.{sid}")
        if _shared.allowed_button("Change period", "schedule", form=True):
            text = every.strip()
            cron = text if len(text.split()) == 5 else None
            _act(f"change the period of schedule {sid}", lambda: edit_schedule(
                actor, eng, sid, every_s=None if cron else parse_every(text), cron=cron))
    series = figure_series(eng, sid)
    failing = sorted(series, key=lambda name: all(p["passed"] for p in series[name]))
    for name in failing[:6]:
        with _shared.section(f"trend of {name}"):
            st.plotly_chart(series_figure(name, series[name]),
                            key=f"monitoring.fig.{sid}.{name}")
    if len(failing) > 6:
        st.caption(f"{len(failing) - 6} more gated figures: `python -m evalcore schedules "
                   "list --json` and the Results page's trend tab show them all.")  # trusted markdown: a count


def _targets(kind: str) -> dict[str, Any]:
    """What a `kind` schedule runs on, picked from what exists: a robustness schedule its
    attack sets (the page offered datasets and failed with "needs --attack-set ID"), a
    fairness one a suite, a stability one a dataset."""
    eng = _shared.engine()
    target = get_kind(kind).schedule.target
    if target == "attack_sets":
        sets = {int(a.id): a for a in list_attack_sets(eng)}
        ids = st.multiselect("Attack sets", list(sets), key="monitoring.attack_sets",
                             format_func=lambda i: f"#{i} · {sets[i].name} ({sets[i].level})")
        return {"attack_sets": [int(i) for i in ids]}
    suite = target == "suite"
    names = [d.name for d in list_datasets(eng) if is_fairness_dataset(d) == suite]
    dataset = st.selectbox("Fairness suite" if suite else "Dataset", names,
                           key=f"monitoring.dataset.{kind}")
    limit = st.number_input("Only the first K items (0 = all)", 0, None, 0,
                            key="monitoring.limit")
    return {"dataset": dataset, "limit": int(limit) or None}


GATES = {"baseline": "Compared with the baseline (default)",
         "default": "The kind's example gate (absolute thresholds and the baseline)",
         "custom": "My own gate (TOML below)"}


def _gate_choice(kind: str) -> str | None:
    """The schedule's gate, as `schedules add --gate`: None = the default, relative to the
    stored baseline (`report.gates.baseline_gate`); else TOML text."""
    gate = get_kind(kind).gate
    example = _shared.PROJECT_ROOT / (gate.config if gate else "")
    choice = st.radio("Gate", list(GATES), format_func=GATES.get, key="monitoring.gate",
                      help="By default each run is compared with the baseline run of its "
                           "dataset and model (mark one below); absolute thresholds alert "
                           "on a model whose healthy level sits below them")
    text = st.text_area("Gate TOML (for \"My own gate\")",
                        example.read_text(encoding="utf-8") if example.is_file() else "",
                        height=160, key=f"monitoring.gate_text.{kind}")
    if choice == "baseline":
        return None
    if choice == "default":
        return example.read_text(encoding="utf-8")
    return text


def _add_form() -> None:
    eng = _shared.engine()
    # outside the form: the target picker follows the kind at once
    kind = str(st.selectbox("Kind", schedulable(), key="monitoring.kind",
                            format_func=lambda name: get_kind(name).title))
    with st.form("monitoring.add"):
        fields = _targets(kind)
        model = st.selectbox("Model", _shared.model_names(), key="monitoring.model")
        rounds = st.number_input(get_kind(kind).schedule.rounds_label, 1, 100, 1,
                                 key="monitoring.rounds")
        every = st.text_input("Every (10s, 5m, 1h, 1d)", "1d", key="monitoring.every")
        cron = st.text_input("or a cron expression, UTC (replaces Every)", "",
                             key="monitoring.cron")
        hook = st.text_input("Webhook URL (optional; shown masked)", "", key="monitoring.hook")
        hook_env = st.text_input("or the environment variable holding it", "",
                                 key="monitoring.hook_env")
        shape = st.selectbox("Webhook shape", list(channels.SHAPES), key="monitoring.shape")
        mail = st.text_input("E-mail alerts to (SMTP: EVALCORE_SMTP_* settings)", "",
                             key="monitoring.mail")
        gate = _gate_choice(kind)
        if not _shared.allowed_button("Add schedule", "schedule", form=True):
            return
    if not fields.get("attack_sets", True):
        st.error("Could not add the schedule: pick at least one attack set (make one on the "
                 "Attacks page).")
        return
    try:
        params = get_kind(kind).schedule.params({**fields, "model": model, "rounds": int(rounds),
                                          "samples": int(rounds)})
    except RunError as exc:
        st.error(f"Could not add the schedule: {_shared.md(exc)}")
        return

    def add() -> None:
        chans = ([channels.webhook(hook.strip(), shape=shape)] if hook.strip() else []) + (
            [channels.webhook(url_env=hook_env.strip(), shape=shape)] if hook_env.strip()
            else []) + ([channels.email(mail.strip())] if mail.strip() else [])
        add_schedule(_shared.actor(), eng, kind, params,
                             models_path=_shared.settings().models_path,
                             every_s=None if cron.strip() else parse_every(every),
                             cron=cron.strip() or None, channels=chans, gate=gate)

    _act("add the schedule", add)


def _baseline() -> None:
    """The baselines in force (the page only had a run-number box, and never showed which
    run was the baseline), and a finished run to mark."""
    eng = _shared.engine()
    rows = baselines_in_force(eng)
    if rows:
        st.dataframe([{**r, "set_at": r["set_at"][:19].replace("T", " ")} for r in rows],
                     hide_index=True, key="monitoring.baselines", column_config={
                         "run_id": st.column_config.NumberColumn("run"),
                         "set_at": "set at (UTC)", "set_by": "set by",
                         "changes": st.column_config.NumberColumn(
                             "changes", help="how many times it was set (the trend marks each)")})
    else:
        st.caption("No baseline yet: gates compare with absolute thresholds only.")
    done = [r for r in list_runs(eng, limit=200, status="done")
            if r.dataset_id is not None]
    if not done:
        st.caption("A finished run can be marked once there is one.")
        return
    names = {d.id: d.name for d in list_datasets(eng)}
    labels = {int(r.id): f"#{r.id} · {r.kind} · {r.model} on {names.get(r.dataset_id, '?')} · "
                         f"{r.created_at:%Y-%m-%d %H:%M}" for r in done}
    run_id = st.selectbox("Run", list(labels), format_func=labels.get,
                          key="monitoring.baseline_run")
    if run_id in {r["run_id"] for r in rows}:  # a run is of one dataset and model
        st.caption(f"Run {md(run_id)} is the baseline of its dataset and model.")
        return
    if _shared.allowed_button("Mark as baseline", "baseline", key="monitoring.baseline",
                              help="gates, the trend and schedules compare with it"):
        _act(f"mark run {int(run_id)} as the baseline",
             lambda: set_baseline(_shared.actor(), eng, int(run_id)))


def refresh_every(rows: list[dict[str, Any]]) -> float | None:
    """How often the schedules part re-reads the database: while a schedule is active its
    runs, verdicts and alerts come without a reload; never when all are paused."""
    return REFRESH_S if any(not r["paused"] for r in rows) else None


def _schedules() -> None:
    rows = monitoring(_shared.engine())
    if not rows:
        st.info("No schedules yet: add one below (or `python -m evalcore schedules add`). "
                "Workers start each run when it falls due.")
        return
    st.dataframe(_table(rows), hide_index=True, key="monitoring.table")
    for info in rows:
        target = info["params"].get("dataset") or info["params"].get("suite") or \
            ", ".join(f"attack set {i}" for i in info["params"].get("attack_set_ids") or [])
        with st.expander(f"Schedule {info['id']} · {info['kind']} · {md(target)} · "
                         f"{md(info['params'].get('model'))} · every {info['every']}"):
            _schedule(info)


def main() -> None:
    _shared.page_setup("Monitoring", "Runs that repeat on a schedule, gated against the "
                                     "baseline, with alerts when a gate fails.")
    if st.session_state.get(NOTICE):
        st.success(md(st.session_state.pop(NOTICE)))
    every = refresh_every(monitoring(_shared.engine()))
    st.fragment(run_every=every)(_schedules)()
    with st.expander("Add a schedule"):
        _add_form()
    with st.expander("Baseline: mark a run as its dataset's and model's production run"):
        _baseline()


main()
