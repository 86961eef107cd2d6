"""The quality gate of a stored run of any kind, and of its baseline: what CI and the
pages show (`python -m evalcore gate --run ID [--baseline ID] --config F`).

A run is gated on its kind's gate metrics (`EvalKind.gate_metrics`, e.g. a fairness
report's `gate_metrics`) or else on `run_figures`' metrics (see `metrics.gate` for the
names). The run and its baseline
must be of one kind; a run that did not finish fails a check of its own, since its
figures cover only part of its items.
"""
from __future__ import annotations

from typing import Any

from sqlalchemy.engine import Engine

from evalcore.kinds import all_kinds, find_kind
from evalcore.metrics.gate import (
    Check,
    GateConfig,
    GateError,
    GateResult,
    evaluate_gate,
    known_metrics,
)
from evalcore.report.run_figures import run_figures
from evalcore.resources import PROJECT_ROOT
from evalcore.store import queries

def default_gates() -> dict[str, str]:
    """kind -> its gate config (under the project root) when none is given
    (`EvalKind.default_gate`)."""
    return {name: kind.default_gate for name, kind in all_kinds().items() if kind.default_gate}


VERDICT_WORDS = {"pass": "PASSED", "fail": "FAILED", "not measured": "NOT MEASURED"}
"""How the gate block, the CLI's `gate` and the trust report write a verdict."""


def verdict_of(result: GateResult) -> str:
    """One verdict for every place that shows a gate: "fail" when a measured figure broke a
    limit, "not measured" when none did but some checks had no value (a CI gate still fails
    those closed unless `missing = "skip"`), else "pass"."""
    failed = result.failed()
    if any(c.value is not None for c in failed):
        return "fail"
    return "not measured" if failed else "pass"


def verdict_line(result: GateResult) -> str:
    """The verdict as one line: the word, then what it rests on."""
    verdict, failed = verdict_of(result), result.failed()
    total = len(result.checks)
    if verdict == "not measured":
        names = ", ".join(c.name for c in failed)
        return (f"NOT MEASURED ({len(failed)} of {total} checks had no value: {names}; "
                "the gate fails these closed unless its config says missing = \"skip\")")
    if verdict == "pass":
        return f"PASSED ({total} checks)"
    return f"FAILED ({len(failed)} of {total} checks failed)"


def default_gate_configs() -> dict[str, str]:
    """kind -> path of its default gate config, for the kinds whose file is there."""
    return {kind: str(PROJECT_ROOT / path) for kind, path in default_gates().items()
            if (PROJECT_ROOT / path).is_file()}


def gate_metrics(engine: Engine, run_id: int, **fairness_options: Any) -> tuple[Any, dict]:
    """(run row, flat metrics) of a run, whatever its kind (`EvalKind.gate_metrics`, else
    its run figures); `fairness_options` go to a kind's own gate metrics."""
    run = queries.get_run(engine, run_id)
    kind = find_kind(run.kind)
    if kind is not None and kind.gate_metrics is not None:
        return run, kind.gate_metrics(engine, run_id, **fairness_options)

    return run, run_figures(engine, run_id)["metrics"]


def gate_any(engine: Engine, run_id: int, config: GateConfig | str | Any, *,
             baseline_id: int | None = None, **fairness_options: Any) -> GateResult:
    """The gate verdict of a run (and its baseline run): absolute, relative, status."""
    run, metrics = gate_metrics(engine, run_id, **fairness_options)
    base_run, baseline = (gate_metrics(engine, baseline_id, **fairness_options)
                          if baseline_id is not None else (None, None))
    if base_run is not None and base_run.kind != run.kind:
        raise GateError(f"run {run.id} is a {run.kind} run but baseline {base_run.id} is a "
                        f"{base_run.kind} run; pick a {run.kind} baseline")
    result = evaluate_gate(metrics, config, baseline)
    directions = known_metrics()
    for check in result.checks:  # say which way each regression check counts
        metric = check.name.removeprefix("regression:")
        if check.name.startswith("regression:") and metric in directions:
            check.detail += f" ({directions[metric]} is better)"
    for which, row in (("run", run), ("baseline", base_run)):
        if row is not None and row.status != "done":
            result.checks.insert(0, Check(
                name=f"{which}_status", value=None, threshold=None, passed=False,
                detail=f"{which} {row.id} is {row.status}, not done; finish or resume it "
                       "before gating"))
    result.passed = all(c.passed for c in result.checks)
    return result
