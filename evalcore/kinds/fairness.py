"""Fairness: ask a bias suite's prompts (counterfactual pairs, BBQ / CBBQ, CrowS-Pairs)
and analyse the stored answers per group.

Registered as one `EvalKind`: the spec builder (samples are rounds; suites go out as raw
prompts), the failure policy (rounds without an answer count wrong), the headline figures
(the fairness report's gate metrics, score, level and verdict), the gate (on the report's
`Gate.metrics`, shown on the Fairness page), the export, the CLI and the page.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping

import evalcore.kinds as kinds
from evalcore.kinds import EvalKind, Export, MetricSpec, need, register, report_json

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine

    from evalcore.runner.plan import RunSpec

NAME = "fairness"


def build(engine: "Engine", params: Mapping[str, Any]) -> tuple["RunSpec", None]:
    """From the form / flags: suite, model and optional samples, temperature, name, limit,
    concurrency, created_by."""
    from evalcore.fairness import fairness_spec

    return fairness_spec(engine, **{**params, "kind": NAME}), None


def report(engine: "Engine", run_id: int) -> dict[str, Any]:
    from evalcore.report.fairness import fairness_report

    return fairness_report(engine, run_id)


def gate_metrics(engine: "Engine", run_id: int, **options: Any) -> dict[str, Any]:
    """The report's `gate_metrics` (`options`: the report's, e.g. threshold)."""
    from evalcore.report.fairness import fairness_report

    return fairness_report(engine, run_id, include_rows=False, **options)["gate_metrics"]


def figures(engine: "Engine", out: Any, metrics: dict[str, Any], intervals: dict[str, Any]
            ) -> None:
    """The report's gate metrics, score, level, verdict, strongest effects and violations;
    a run the report cannot read yet still lists (with `fairness_error`)."""
    from evalcore.report.fairness import fairness_report
    from evalcore.report.fairness_benchmarks import benchmark_summary

    metrics["fairness_level"] = None
    try:
        full = fairness_report(engine, int(out.run.id), include_rows=False)
    except Exception as exc:  # noqa: BLE001 - a run without answers still lists
        metrics["fairness_error"] = str(exc)
        return
    metrics["bias_benchmark"] = benchmark_summary(full)
    metrics.update({k: v for k, v in full["gate_metrics"].items() if k != "accuracy"})
    metrics["bbq_accuracy"] = full["gate_metrics"].get("accuracy")
    metrics["fairness_level"] = full["level"]
    metrics["fairness_verdict"] = (full.get("verdict") or {}).get("verdict")
    metrics["circular_accuracy"] = (full.get("variants") or {}).get("circular_accuracy")
    metrics["top_effects"] = [e for e in full.get("effects", []) if e["significant"]][:5]
    metrics["violation_keys"] = sorted({f"{v['pair_id']}:{v['metric']}"
                                        for v in full["violations"]})


def cli(sub: Any) -> None:
    from evalcore.cli.fairness import register as register_cli

    register_cli(sub)


def schedule(fields: Mapping[str, Any]) -> dict[str, Any]:
    """A schedule's run options: its suite (the dataset field), model, samples (and limit)."""
    return {"suite": need(fields, "dataset", "--suite NAME (a saved suite)", NAME),
            "model": fields["model"], "samples": int(fields.get("samples") or 1),
            **({"limit": fields["limit"]} if fields.get("limit") else {})}


METRICS = (
    MetricSpec("fairness_score", heads=True, column=True, same_as="overall_score",
               gated=False),
    MetricSpec("fairness_level", column=True, gated=False),
    *(MetricSpec(name, "lower", heads=True, label=label) for name, label in (
        ("spd", "statistical parity difference (SPD)"),
        ("eod", "equal opportunity difference (EOD)"),
        ("stereotype_rate", ""), ("violation_rate", ""))),
    MetricSpec("bbq_s_amb_abs", "lower", heads=True, column=True,
               label="BBQ bias in ambiguous contexts (|s_amb|)"),
    MetricSpec("overall_score"), MetricSpec("disparate_impact"), MetricSpec("parse_rate"),
    *(MetricSpec(name, "lower") for name in (
        "toxicity_disparity", "stereotype_rate_max_group", "refusal_disparity",
        "high_violation_rate", "length_gap", "significant_effects", "auc_variance",
        "bbq_s_dis_abs", "judge_stereotype_rate",
        "judge_sentiment_disparity", "judge_stereotype_disparity", "crows_stereotype_share",
        "crows_preference_gap", "crows_gap_lower_bound")),
)
"""The fairness score and level; the report's gate metrics (`report.fairness`
`gate_metrics`), the disparities lower-is-better."""


KIND = register(EvalKind(
    name=NAME, title="Fairness", page="pages/fairness.py", icon=":material/balance:",
    order=30, report=report, build=build, cli=cli,
    schedule=kinds.Schedule(schedule, "suite", "Samples per prompt"),
    cli_help="run a fairness suite and report groups, pairs, level",
    exports=(Export("Fairness JSON", "fairness_run{run}.json", "application/json",
                    report_json(report)),),
    counting=kinds.Counting(accuracy_needs_verdicts=True), figures=figures, metrics=METRICS,
    precedence=20,
    gate=kinds.Gate("data/gate.example.toml", metrics=gate_metrics, on_results=False),
    run_options=("option_order",)))
