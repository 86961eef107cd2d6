"""Robustness: ask the clean questions and their approved attacked versions in one run and
measure the drop per attack level.

Registered as one `EvalKind`: the spec builder (the sets' approved pairs, frozen into the
spec), the failure policy (rounds without a verdict count wrong), the headline figures
(accuracy on the clean items, attacked accuracy, PDR and flips per level), the default
gate, the export, the CLI and the page.
"""
from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING, Any, Mapping

from evalcore.kinds import EvalKind, Export, Gate, MetricSpec, Schedule, need, register, report_json
from evalcore.metrics.robustness import PairedOutcome, floor_warning, robustness_summary

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine

    from evalcore.runner.plan import RunSpec

NAME = "robustness"


def build(engine: "Engine", params: Mapping[str, Any]) -> tuple["RunSpec", list[int]]:
    """From the form / flags: attack_set_ids, model, rounds and optional dataset, judge,
    prompt_style, template, schedule, concurrency, temperature, name, created_by."""
    from evalcore.runner.robustness import robustness_spec

    return robustness_spec(engine, **{**params, "kind": NAME})


def report(engine: "Engine", run_id: int) -> dict[str, Any]:
    from evalcore.report.robustness import robustness_report

    return robustness_report(engine, run_id)


def figures(engine: "Engine", out: Any, metrics: dict[str, Any], intervals: dict[str, Any]
            ) -> dict[str, Any]:
    """Per level: PDR, attacked accuracy, flips (bootstrap over pairs); the accuracy is
    the clean items' ("rated"). At a clean accuracy too low to measure a drop, PDR has no
    interval and `warnings` says so."""
    from evalcore.report.run_figures import bootstrap, pdr, rate_interval

    extra = ((out.run.config or {}).get("spec") or {}).get("extra") or {}
    pairs = extra.get("pairs") or []
    rounds = metrics["rounds"]
    by_level: dict[str, list] = defaultdict(list)
    for attack_item_id, clean_id, attacked_id, _set_id, level, *_ in pairs:
        by_level[level].append(PairedOutcome(
            attack_item_id, out.verdicts.get(clean_id, [None] * rounds),
            out.verdicts.get(attacked_id, [None] * rounds)))
    all_clean, all_attacked = [], []
    warnings: list[str] = []
    flips = 0
    for level, outcomes in sorted(by_level.items()):
        summary = robustness_summary(outcomes)
        clean = [o.clean_rate for o in outcomes]
        attacked = [o.attacked_rate for o in outcomes]
        all_clean += clean
        all_attacked += attacked
        flips += len(summary.flips.right_to_wrong)
        metrics[f"pdr_{level}"] = summary.pdr
        metrics[f"accuracy_attacked_{level}"] = summary.accuracy_attacked
        metrics[f"accuracy_clean_{level}"] = summary.accuracy_clean
        metrics[f"mcnemar_p_{level}"] = summary.mcnemar.p_value
        intervals[f"accuracy_clean_{level}"] = rate_interval(clean, rounds)
        # at the floor a resampled clean mean near 0 gives PDRs like -1100%: no interval
        intervals[f"pdr_{level}"] = None if summary.warning else bootstrap([clean, attacked],
                                                                           pdr)
        if summary.warning:
            warnings.append(f"{level}: {summary.warning}")
        intervals[f"accuracy_attacked_{level}"] = rate_interval(attacked, rounds)
    metrics["levels"] = sorted(by_level)
    metrics["flips_right_to_wrong"] = flips
    if all_attacked:
        metrics["accuracy_attacked"] = sum(all_attacked) / len(all_attacked)
        intervals["accuracy_attacked"] = rate_interval(all_attacked, rounds)
        clean_mean = sum(all_clean) / len(all_clean)
        metrics["pdr"] = (clean_mean - metrics["accuracy_attacked"]) / clean_mean \
            if clean_mean else None
        floor = floor_warning(clean_mean, metrics["accuracy_attacked"])
        intervals["pdr"] = None if floor else bootstrap([all_clean, all_attacked], pdr)
        if floor and len(by_level) > 1:
            warnings.append(f"all levels: {floor}")
    metrics["warnings"] = warnings
    return {"rated": list(dict.fromkeys(p[1] for p in pairs))}


def clean_items(run: Any) -> list[int]:
    """The clean items of a run: what its option-order and template passes ask (the
    attacked ones would double the cost and mix two questions' figures)."""
    extra = ((run.config or {}).get("spec") or {}).get("extra") or {}
    return list(dict.fromkeys(p[1] for p in extra.get("pairs") or []))


def more_figures(engine: "Engine", run_id: int) -> dict[str, Any]:
    """Circular accuracy and template spread of the clean items, when asked."""
    from evalcore.report.variants import variant_figures

    figures = variant_figures(engine, run_id) or {}
    return {k: figures.get(k) for k in ("circular_accuracy", "template_spread")}


def cli(sub: Any) -> None:
    from evalcore.cli.robustness import register as register_cli

    register_cli(sub)


def schedule(fields: Mapping[str, Any]) -> dict[str, Any]:
    """A schedule's run options: its attack sets, model and rounds."""
    return {"attack_set_ids": list(need(fields, "attack_sets", "--attack-set ID (repeatable)",
                                        NAME)),
            "model": fields["model"], "rounds": int(fields.get("rounds") or 1)}


LEVELS = ("char", "word", "sentence")
"""The attack levels (`perturb.attack.LEVELS`; not imported: `--help` loads this module)."""

METRICS = (
    MetricSpec("accuracy", heads=True, column=True, label="accuracy (clean items)"),
    MetricSpec("pdr", "lower", heads=True, column=True, label="accuracy drop rate (PDR)"),
    *(MetricSpec(f"pdr_{level}", "lower", heads=True, column=True,
                 label=f"accuracy drop rate (PDR), {level} attacks") for level in LEVELS),
    MetricSpec("accuracy_attacked", heads=True, column=True, label="accuracy under attack"),
    MetricSpec("flips_right_to_wrong", "lower", heads=True,
               label="questions right when clean, wrong when attacked"),
    *(MetricSpec(f"accuracy_attacked_{level}") for level in LEVELS),
)
"""The clean items' accuracy, accuracy under attack and the drop (PDR) overall and per
level, and the flips."""


KIND = register(EvalKind(
    name=NAME, title="Robustness", page="pages/robustness.py", icon=":material/shield:",
    order=20, report=report, build=build, cli=cli,
    schedule=Schedule(schedule, "attack_sets"),
    cli_help="run clean vs attacked questions and report the drop",
    exports=(Export("Robustness JSON", "robustness_run{run}.json", "application/json",
                    report_json(report)),),
    needs_references=True, figures=figures, metrics=METRICS,
    precedence=10, gate=Gate("data/gate.robustness.example.toml"),
    run_options=("option_order", "templates"), variant_items=clean_items,
    more_figures=more_figures))
