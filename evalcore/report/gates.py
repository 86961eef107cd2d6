"""The quality gate of a stored run of any kind, and of its baseline: what CI and the
pages show (`python -m evalcore gate --run ID [--baseline ID] --config F`).

A run is gated on its kind's gate metrics (`EvalKind.gate`'s metrics, e.g. a fairness
report's `gate_metrics`) or else on `run_figures`' metrics (see `metrics.gate` for the
names). The run and its baseline
must be of one kind; a run that did not finish fails a check of its own, since its
figures cover only part of its items.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec
from sqlalchemy.engine import Engine

from evalcore.kinds import all_kinds, find_kind, metric_specs
from evalcore.metrics.gate import (
    Check,
    GateConfig,
    GateError,
    GateResult,
    evaluate_gate,
    known_metrics,
    load_gate_config,
)
from evalcore.metrics.uncertainty import paired_difference
from evalcore.report.run_figures import load_outcomes, run_figures
from evalcore.resources import PROJECT_ROOT
from evalcore.store import queries


def default_gates() -> dict[str, str]:
    """kind -> its gate config (under the project root) when none is given
    (`EvalKind.gate`)."""
    return {name: kind.gate.config for name, kind in all_kinds().items() if kind.gate}


VERDICT_WORDS = {"pass": "PASSED", "fail": "FAILED", "not measured": "NOT MEASURED",
                 "inconclusive": "INCONCLUSIVE"}
"""How the gate block, the CLI's `gate` and the trust report write a verdict."""


def verdict_of(result: GateResult) -> str:
    """One verdict for every place that shows a gate (`metrics.gate.gate_verdict`): "fail"
    when a measured figure broke a limit, "not measured" when a check the gate needs had no
    value or no check applied to the run at all, else "pass"."""
    return result.verdict()


def verdict_line(result: GateResult) -> str:
    """The verdict as one line: the word, then what it rests on (checks that did not
    apply are named as not measured, never counted as passed)."""
    verdict, failed = verdict_of(result), result.failed()
    skipped = result.not_counted()
    counted = [c for c in result.checks if c.counted]
    aside = (f"; not measured: {', '.join(c.name for c in skipped)}" if skipped else "")
    if verdict == "not measured":
        if not failed:
            return (f"NOT MEASURED (none of the {len(result.checks)} checks could be "
                    f"measured on this run{aside}; pick a gate with checks for this kind "
                    "of run)")
        names = ", ".join(c.name for c in failed)
        return (f"NOT MEASURED ({len(failed)} of {len(counted)} checks had no value: {names}; "
                "the gate fails these closed unless its config says missing = \"skip\""
                f"{aside})")
    if verdict == "pass":
        return f"PASSED ({len(counted)} checks passed{aside})"
    if verdict == "inconclusive":
        return ("INCONCLUSIVE (the run is too small to tell whether it regressed: "
                + "; ".join(inconclusive_words(c) for c in result.inconclusive())
                + f"{aside})")
    return f"FAILED ({len(failed)} of {len(counted)} checks failed{aside})"


def inconclusive_words(check: Check) -> str:
    """An inconclusive check for a reader: what it could not tell and what would."""
    return (f"{check.name.removeprefix('regression:')} moved from {check.baseline:.3f} to "
            f"{check.value:.3f}, within the noise of this size; about {check.needed:,} "
            "questions would tell")


def gate_reason(result: GateResult) -> str:
    """Why the verdict is what it is, in one line (the Monitoring "reason" column): the
    broken checks against their bounds, else the checks without a value; "" on a pass."""
    verdict = verdict_of(result)
    if verdict == "pass":
        return ""
    if verdict == "fail":
        return failed_text([msgspec.to_builtins(c) for c in result.failed()
                            if not c.inconclusive])
    if verdict == "inconclusive":
        return "inconclusive: " + "; ".join(inconclusive_words(c)
                                            for c in result.inconclusive())
    missing = [c for c in result.failed() if c.value is None]
    if missing:
        return "; ".join(c.detail for c in missing)
    return "none of the gate's checks applies to this run"


def check_word(check: Check) -> str:
    """PASS, FAIL or NOT MEASURED: how the CLI and the tables mark one check."""
    return check.status.upper()


def failed_text(checks: list[Mapping[str, Any]]) -> str:
    """The failed checks as a reader expects them: each value against its bound
    ("spd_max 0.250 > 0.05"), from stored check dicts."""
    parts = []
    for check in checks:
        value, bound = check.get("value"), check.get("threshold")
        if value is None:
            continue
        name = str(check.get("name", ""))
        lower = name.endswith("_max") or (name.startswith("regression:")
                                          and bound is not None and value > bound)
        sign = ">" if lower else "<"
        parts.append(f"{name} {value:.3f}" + ("" if bound is None else f" {sign} {bound:.4g}"))
    return "; ".join(parts)


def verdict_reason(verdict: Mapping[str, Any]) -> str:
    """What a stored default verdict (`report.fairness.default_verdict`) rests on, in
    words: the broken checks against their bounds, the unmeasured and the not applicable
    ones (the page's card and the CLI's verdict line)."""
    broken = failed_text(verdict.get("failed") or [])
    unmeasured = verdict.get("unmeasured") or []
    skipped = verdict.get("not_applicable") or []
    parts = [broken] if broken else []
    if unmeasured:
        parts.append(f"no value: {', '.join(unmeasured)} (the CI gate fails these)")
    if not parts:
        parts.append(f"{verdict.get('checks', 0)} checks passed"
                     if verdict.get("verdict") == "pass" else "no check applies to this run")
    if skipped:
        parts.append(f"not measured (do not apply): {', '.join(skipped)}")
    return "; ".join(parts)


def baseline_gate(kind: str) -> GateConfig:
    """A schedule's default gate: the kind's default gate's [relative] checks only, so a
    schedule compares each run with the stored baseline of its dataset and model instead
    of absolute thresholds a healthy baseline may sit below (alerting every period)."""
    found = find_kind(kind)
    path = found.gate.config if found is not None and found.gate else None
    base = load_gate_config(str(PROJECT_ROOT / path)) if path else None
    if base is None or base.max_regression is None:
        return GateConfig(max_regression=0.10, min_delta=0.01, source=f"{kind} baseline gate")
    return GateConfig(max_regression=base.max_regression, min_delta=base.min_delta,
                      missing=base.missing, source=f"{base.source} [relative]")


NO_BASELINE = Check(
    name="baseline", value=None, threshold=None, passed=False,
    detail="no baseline for this dataset and model: mark a finished run as the baseline "
           "(Monitoring page, or `python -m evalcore baseline set RUN`) to compare with it")
"""The one check of a schedule's default gate before a baseline is set: not measured."""


def default_gate_configs() -> dict[str, str]:
    """kind -> path of its default gate config, for the kinds whose file is there."""
    return {kind: str(PROJECT_ROOT / path) for kind, path in default_gates().items()
            if (PROJECT_ROOT / path).is_file()}


def gate_metrics(engine: Engine, run_id: int, **fairness_options: Any) -> tuple[Any, dict]:
    """(run row, flat metrics) of a run, whatever its kind (`Gate.metrics`, else
    its run figures); `fairness_options` go to a kind's own gate metrics."""
    run = queries.get_run(engine, run_id)
    kind = find_kind(run.kind)
    if kind is not None and kind.gate is not None and kind.gate.metrics is not None:
        return run, kind.gate.metrics(engine, run_id, **fairness_options)
    return run, run_figures(engine, run_id)["metrics"]


def paired_rates(engine: Engine, baseline_id: int, run_id: int, kind: str) -> dict[str, Any]:
    """{metric: run minus baseline on their shared questions} for the kind's gate metrics
    that are the mean of per-question success rates (`MetricSpec.paired`; each under its
    run's failure policy); {} when it has none (nothing is read then)."""
    names = [name for name, spec in metric_specs(kind).items() if spec.paired]
    if not names:
        return {}
    base, now = load_outcomes(engine, baseline_id), load_outcomes(engine, run_id)
    paired = paired_difference(base.all_counts(), now.all_counts())
    return dict.fromkeys(names, paired)


def gate_any(engine: Engine, run_id: int, config: GateConfig | str | Any, *,
             baseline_id: int | None = None, **fairness_options: Any) -> GateResult:
    """The gate verdict of a run (and its baseline run): absolute, relative, status."""
    run, metrics = gate_metrics(engine, run_id, **fairness_options)
    base_run, baseline = (gate_metrics(engine, baseline_id, **fairness_options)
                          if baseline_id is not None else (None, None))
    if base_run is not None and base_run.kind != run.kind:
        raise GateError(f"run {run.id} is a {run.kind} run but baseline {base_run.id} is a "
                        f"{base_run.kind} run; pick a {run.kind} baseline")
    paired = (paired_rates(engine, baseline_id, run_id, run.kind) or None
              if baseline_id is not None else None)
    result = evaluate_gate(metrics, config, baseline, paired=paired)
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
    result.passed = result.verdict() == "pass"
    return result
