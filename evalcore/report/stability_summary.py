"""A stability run's report figures without its per-round detail, computed once for a
finished run and stored (`store.run_summary`): what `runs show`, compare and the trust
report read, so none of them walks a million calls again.

Each question keeps its figures (success rate, counts, answer groups, entropy); only its
`rounds` list (every round's answer, verdict and reason) is left out: that is the
detail of one question, read from the calls when it is shown or exported.
"""
from __future__ import annotations

from typing import Any

from sqlalchemy.engine import Engine

from evalcore.metrics.stability import FailurePolicy
from evalcore.report.run_figures import COUNTING
from evalcore.report.stability import stability_report
from evalcore.store import queries
from evalcore.store.run_summary import summary


def report_figures(engine: Engine, run_id: int, failure_policy: FailurePolicy = "exclude",
                   meaning: bool | str = False) -> dict[str, Any]:
    """`stability_report(..., with_rounds=False)`, stored for a finished run in its state."""
    run = queries.get_run(engine, run_id)
    # named with the counting rule (`run_figures.COUNTING`): a report stored under an
    # older rule is not read
    return summary(engine, run, f"stability:{COUNTING}:{failure_policy}:{meaning}",
                   lambda: stability_report(engine, run_id, failure_policy=failure_policy,
                                            meaning=meaning, with_rounds=False))


def repeats_metrics(engine: Any, run_id: int) -> dict[str, Any]:
    """Mean semantic entropy and judge noise (share of the verdict spread; None without a
    re-judging pass) of a stability run, for the trust report's headline."""
    summary = report_figures(engine, run_id)["summary"]
    return {"semantic_entropy_mean": summary.get("semantic_entropy_mean"),
            "judge_noise": (summary.get("judge_noise") or {}).get("judge_share_of_spread"),
            "circular_accuracy": summary.get("circular_accuracy"),  # run options (variants)
            "template_spread": summary.get("template_spread")}
