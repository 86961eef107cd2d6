"""The Results page's monitoring tabs: a dataset's leaderboard, a metric's trend over
time, and the trust report download. Figures come from `evalcore.report.leaderboard`,
`trend` and `trust`; this module only gathers input and draws.
"""
from __future__ import annotations

import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import streamlit as st

from evalcore.dataset import list_datasets
from evalcore.demo import DEMO_DATASET
from evalcore.errors import EvalcoreError
from evalcore.kinds import metric_specs
from evalcore.markup import code_text, md
from evalcore.metrics.gate import gate_config_text
from evalcore.report import compare_charts
from evalcore.report.gates import default_gate_configs
from evalcore.report.leaderboard import board_table, leaderboard
from evalcore.report.trend import trend, trend_figure
from evalcore.report.trust import model_runs, trust_report_html, write_pdf
from evalcore.service.runs import count_calls, list_runs
from pages import _shared


def trend_metrics() -> tuple[str, ...]:
    """The figures a gate may check, those heading a run first (`EvalKind.metrics`)."""
    specs = [s for s in metric_specs().values() if s.gated or s.heads]
    return tuple(s.name for s in sorted(specs, key=lambda s: not s.heads))


def _dataset_names() -> list[str]:
    return [d.name for d in list_datasets(_shared.engine())]


@st.cache_data(max_entries=8, show_spinner="Building the leaderboard...")
def _board(db_url: str, dataset: str, state: int) -> dict[str, Any]:
    return leaderboard(_shared.engine(), dataset)


@st.cache_data(max_entries=8, show_spinner="Reading the runs over time...")
def _trend(db_url: str, dataset: str, metric: str, gate_text: str, days: int, state: int
           ) -> dict[str, Any]:
    since = datetime.now(UTC) - timedelta(days=days) if days else None
    gate = gate_config_text(gate_text) if gate_text.strip() else None  # text, never a path
    return trend(_shared.engine(), dataset, metric, gate=gate, since=since)


def _state() -> int:
    """Cache key: the newest run id and its call count change when anything is stored."""
    runs = list_runs(_shared.engine(), limit=1)
    return hash((runs[0].id, runs[0].status, count_calls(_shared.engine(), runs[0].id))
                ) if runs else 0


def pick_dataset(key: str) -> str | None:
    names = _dataset_names()
    if not names:
        st.info("No dataset yet: import one on the Datasets page.")
        return None
    return st.selectbox("Dataset or suite", names, key=key)


def leaderboard_view() -> None:
    """One row per model that ran on the dataset; click a column header to sort."""
    dataset = pick_dataset("results.board_dataset")
    if dataset is None:
        return
    try:
        board = _board(_shared.settings().db_url, dataset, _state())
    except EvalcoreError as exc:
        st.warning(str(exc))
        return
    if not board["rows"]:
        st.info(f"No finished run on {md(dataset)} yet.")
        return
    rows = board["rows"]
    st.plotly_chart(compare_charts.interval_figure(
        [r["model"] for r in rows], [r["accuracy"] for r in rows],
        [{"low": r["accuracy_low"], "high": r["accuracy_high"]}
         if r["accuracy_low"] is not None else None for r in rows],
        f"Accuracy on {dataset}"), key="results.board_figure")
    st.dataframe(board_table(board), hide_index=True, key="results.board", column_config={
        "cost": st.column_config.NumberColumn("cost", format="%.4f"),
        "mean_latency_ms": st.column_config.NumberColumn("latency (ms)", format="%.0f")})
    st.caption("Each model's latest finished run of each kind; each figure's 95% interval "
               "is the column after it. Click a column header to sort. CLI: "
               f"`python -m evalcore leaderboard --dataset {code_text(dataset)}`")


def trend_view() -> None:
    """A metric over time per model with the baseline, gate verdicts and regressions."""
    dataset = pick_dataset("results.trend_dataset")
    if dataset is None:
        return
    left, right = st.columns([2, 1])
    metric = left.selectbox("Metric", trend_metrics(), key="results.trend_metric")
    days = int(right.number_input("Last days (0 = all)", min_value=0, value=0, step=1,
                                  key="results.trend_days"))
    gate_text = st.text_area("Gate config to mark verdicts (TOML, optional)", "",
                             key="results.trend_gate", height=100)
    try:
        result = _trend(_shared.settings().db_url, dataset, metric, gate_text, days, _state())
    except EvalcoreError as exc:
        st.warning(str(exc))
        return
    if not result["series"]:
        st.info(f"No finished run on {md(dataset)} measures {md(metric)}.")
        return
    st.plotly_chart(trend_figure(result), key="results.trend_figure")
    rows = [{"model": model, **{k: p[k] for k in ("run_id", "created_at", "value", "low", "high",
                                                   "baseline", "regression", "gate", "test")}}
            for model, points in result["series"].items() for p in points]
    flagged = [r for r in rows if r["regression"]]
    if flagged:
        st.error("Regression against the baseline (paired test significant): " + ", ".join(
            f"run {md(r['run_id'])} ({md(r['model'])})" for r in flagged))
    st.dataframe(rows, hide_index=True, key="results.trend_table")


@st.cache_data(max_entries=4, show_spinner="Writing the trust report...")
def _trust(db_url: str, model: str, runs: tuple[int, ...], state: int) -> str:
    return trust_report_html(_shared.engine(), model=model, runs=runs,
                             gates=default_gate_configs())


def _trust_runs(model: str) -> tuple[int, ...]:
    """The runs the report includes: by default the model's latest finished run of each
    kind and dataset, demo runs left out (`trust.model_runs`); the user can change it."""
    eng = _shared.engine()
    done = [r for r in list_runs(eng, status="done", limit=1000) if r.model == model]
    labels = {int(r.id): f"#{r.id} · {r.kind} · {r.name or '-'} · {r.created_at:%Y-%m-%d %H:%M}"
              for r in done}
    include_demo = st.checkbox("Include demo runs", key="results.trust_demo")
    try:
        default = model_runs(eng, model, leave_out=() if include_demo else (DEMO_DATASET,))
    except EvalcoreError:
        default = []
    chosen = st.multiselect("Runs in the report", list(labels), default=default,
                            format_func=labels.get,
                            key=f"results.trust_runs.{model}.{include_demo}")
    return tuple(sorted(int(i) for i in chosen))


def trust_view() -> None:
    """Build a model's trust report and offer it as one self-contained HTML file."""
    models = sorted({r.model for r in list_runs(_shared.engine(), status="done",
                                                        limit=1000)})
    if not models:
        st.info("No finished run yet.")
        return
    model = st.selectbox("Model", models, key="results.trust_model")
    runs = _trust_runs(model)
    if not runs:
        st.info("Pick at least one run for the report.")
        return
    if st.button("Build the trust report", key="results.trust_build"):
        st.session_state["results.trust_for"] = (model, runs)
    if st.session_state.get("results.trust_for") != (model, runs):
        return  # built on request; kept while the same model and runs are picked
    page = None
    with _shared.section(f"trust report of {model}"):
        try:
            page = _trust(_shared.settings().db_url, model, runs, _state())
        except EvalcoreError as exc:
            st.warning(str(exc))
    if page is None:
        return
    left, right = st.columns(2)
    left.download_button("Trust report (HTML, opens offline)", page.encode("utf-8"),
                         file_name=f"trust_{model}.html", mime="text/html",
                         key="results.trust_html", on_click="ignore")
    right.download_button("Trust report (PDF)", lambda: _pdf(page),
                          file_name=f"trust_{model}.pdf", mime="application/pdf",
                          key="results.trust_pdf", on_click="ignore")
    st.caption(f"CLI: `python -m evalcore report --runs {code_text(','.join(map(str, runs)))} "
               f"--html trust.html --pdf trust.pdf` (or `--model {code_text(model)}` for its "
               "latest runs; the PDF is headless chromium's print of the HTML).")


def _pdf(page: str) -> bytes:
    """The HTML printed by headless chromium (a few seconds; only when downloaded)."""
    with tempfile.TemporaryDirectory() as folder:
        html, pdf = Path(folder) / "trust.html", Path(folder) / "trust.pdf"
        html.write_text(page, encoding="utf-8")
        return write_pdf(html, pdf).read_bytes()
