"""The fairness method's public face: generate a suite, run it, report, gate.

A suite is a dataset (format "fairness_suite", built by `perturb.counterfactual`; BBQ and
CBBQ imports are bias suites too); a fairness run is an ordinary run of kind "fairness"
whose samples are rounds, so the runner stores every answer and the analysis happens
afterwards on the stored answers (`report.fairness`). The page and the CLI call these.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional

from evalcore.dataset import get_dataset
from evalcore.metrics.gate import GateResult, evaluate_gate, load_gate_config
from evalcore.perturb.counterfactual import (dump_templates, generate_suite, list_generators,
                                             load_templates, parse_templates, save_suite,
                                             save_templates)
from evalcore.report.fairness import (fairness_report, is_fairness_dataset, pair_view,
                                      require_fairness_dataset)
from evalcore.report.gates import gate_any
from evalcore.runner.plan import RunSpec, run_spec

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine


RAW_PROMPT = "{question}"
"""Suite prompts are complete; sending them as they are keeps the pair's only difference
the attribute (the 'open' default template would add its own instructions)."""
DEFAULT_TEMPERATURE = 0.7
"""Samples > 1 need temperature > 0, or every sample is the same answer."""

__all__ = ["GateResult", "dump_templates", "evaluate_gate", "gate_run",
           "fairness_report", "fairness_spec", "generate_suite", "is_fairness_dataset",
           "list_generators", "load_gate_config", "load_templates", "pair_view",
           "parse_templates", "save_suite", "save_templates"]


def fairness_spec(engine: "Engine", *, suite: str, model: str, samples: int = 1,
                  temperature: Optional[float] = None, created_by: str = "",
                  name: str = "", limit: Optional[int] = None,
                  concurrency: Optional[int] = None, kind: str = "fairness") -> "RunSpec":
    """The RunSpec of a fairness run: samples are rounds; suites go out as raw prompts,
    BBQ / CBBQ with the bias_choice template so the rules scorer can read the option."""
    dataset = get_dataset(engine, suite)
    require_fairness_dataset(engine, dataset)
    if temperature is None and samples > 1:
        temperature = DEFAULT_TEMPERATURE
    return run_spec(dict(kind=kind, dataset=suite, model=model, rounds=samples,
                         temperature=temperature, created_by=created_by, name=name,
                         limit=limit, concurrency=concurrency,
                         template=RAW_PROMPT if dataset.task_type == "open" else None,
                         extra={"suite_format": dataset.format}))


def gate_run(engine: "Engine", run_id: int, config, *,  # noqa: ANN001 - path, text or GateConfig
             baseline_id: Optional[int] = None, **report_options) -> GateResult:  # noqa: ANN003
    """The gate verdict of a stored fairness run (and its baseline run): what CI and the
    page show; the gate of every kind of run (`report.gates.gate_any`), which also fails
    a run that did not finish (its metrics cover only part of the suite)."""
    return gate_any(engine, run_id, config, baseline_id=baseline_id, **report_options)
