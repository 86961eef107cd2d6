"""Fairness page, the quality gate: `fairness.gate_run`, the function behind
`python -m evalcore gate`, so page and CI give the same verdict."""
from __future__ import annotations

from typing import Any

import streamlit as st

from evalcore.errors import EvalcoreError
from evalcore.fairness import gate_run
from evalcore.metrics.gate import GateResult, gate_config_text, gate_text
from evalcore.report.fairness import DEFAULT_THRESHOLD
from evalcore.report.fairness_charts import gate_table
from evalcore.report.fairness_view import records_frame
from evalcore.service.runs import list_runs
from evalcore.markup import md
from pages import _shared

# No bare strings at module level below: Streamlit's magic would draw them on the page.
GATE_EXAMPLE = _shared.PROJECT_ROOT / "data" / "gate.example.toml"


@st.cache_data(max_entries=16, show_spinner="Checking the gate...")
def _gate(db_url: str, run_id: int, baseline_id: int | None, config_text: str, threshold: float,
          state: tuple[str, int]) -> GateResult:
    return gate_run(_shared.engine(), run_id, gate_config_text(config_text),
                    baseline_id=baseline_id, threshold=threshold)


def _run_label(run: Any, names: dict[int, str]) -> str:
    return (f"#{run.id} · {run.name + ' · ' if run.name else ''}{run.model} on "
            f"{names.get(run.dataset_id, '?')} · samples {run.rounds} · {run.status} · "
            f"{run.created_at:%Y-%m-%d %H:%M}")


def gate_block(run_id: int, threshold: float | None, names: dict[int, str]) -> None:
    """The CI gate's verdict for this run: pick a baseline, edit or upload the TOML;
    `threshold` None: a bias benchmark run (the default, not named in the CI line)."""
    st.markdown("#### Quality gate")
    runs = [r for r in list_runs(_shared.engine(), kind="fairness", limit=200)
            if r.id != run_id and r.status == "done"]
    labels = {None: "no baseline (absolute checks only)",
              **{r.id: _run_label(r, names) for r in runs}}
    baseline = st.selectbox("Baseline run", list(labels), format_func=labels.get,
                            key="fairness.baseline")
    upload = st.file_uploader("Gate TOML", type=["toml"], key="fairness.gate_file")
    try:
        default = (gate_text(upload.getvalue(), upload.name) if upload is not None
                   else GATE_EXAMPLE.read_text(encoding="utf-8"))
    except EvalcoreError as exc:  # not UTF-8: say which file, not a UnicodeDecodeError
        st.error(f"Gate TOML not usable: {md(exc)}")
        return
    text_key = f"fairness.gate_text.{upload.file_id if upload is not None else 'example'}"
    config_text = st.text_area("Gate config", value=default, height=260, key=text_key)
    try:
        verdict = _gate(_shared.settings().db_url, run_id, baseline, config_text,
                        DEFAULT_THRESHOLD if threshold is None else threshold,
                        _shared.run_state(run_id))
    except EvalcoreError as exc:
        st.error(f"Gate config not usable: {md(exc)}")
        return
    _shared.gate_headline(verdict)
    st.dataframe(records_frame(gate_table(verdict)), hide_index=True, key="fairness.gate_table",
                 column_config={"detail": st.column_config.TextColumn(width="large")})
    command = (f"python -m evalcore gate --run {run_id}"
               + (f" --baseline {baseline}" if baseline is not None else "")
               + " --config gate.toml"
               + ("" if threshold is None else f" --threshold {threshold:g}"))
    st.caption("The same verdict in CI (save the config above as gate.toml):")
    st.code(command, language="bash")
