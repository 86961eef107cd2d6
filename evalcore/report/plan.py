"""How many questions and rounds a decision needs, from one or two stored runs.

From one run: the questions at K' rounds to tell a shift of `effect` from its accuracy.
From two runs (A then B, on the questions they share): the questions to tell a difference
of `effect` between them. Both say the minimum detectable effect at the runs' own size.
The variances come from `metrics.uncertainty`; the page's start forms and
`python -m evalcore plan` print the same dict.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy.engine import Engine

from evalcore.errors import EvalcoreError
from evalcore.metrics.uncertainty import (
    clustered_accuracy,
    detectable_effect,
    one_run_variance,
    paired_difference,
    paired_variance,
    questions_needed,
)
from evalcore.report.run_figures import load_outcomes
from evalcore.store import queries


class PlanError(EvalcoreError, ValueError):
    """A plan cannot be made from these runs (too few questions, no verdicts)."""


def run_plan(engine: Engine, run_ids: Sequence[int], *, effect: float, power: float = 0.8,
             alpha: float = 0.05, rounds: int | None = None) -> dict[str, Any]:
    """{"questions", "rounds", "effect", "power", "alpha", "mde_now", "from_runs"} for one
    run (a shift from its accuracy) or two (their paired difference)."""
    if len(run_ids) not in (1, 2):
        raise PlanError(f"a plan reads one run or two, got {len(run_ids)}")
    if not 0 < effect < 1:
        raise PlanError(f"--effect is a difference in accuracy between 0 and 1, got {effect} "
                        "(0.05 = 5 points)")
    if not 0 < power < 1 or not 0 < alpha < 1:
        raise PlanError(f"--power and --alpha lie between 0 and 1, got {power} and {alpha}")
    if rounds is not None and not 1 <= rounds <= 100:
        raise PlanError(f"--rounds is 1 to 100, got {rounds}")
    outcomes = [load_outcomes(engine, int(i)) for i in run_ids]
    if len(outcomes) == 1:
        figures = clustered_accuracy(list(outcomes[0].all_counts().values()), alpha=alpha)
        if figures["accuracy_se"] is None:
            raise PlanError(f"run {run_ids[0]} has {figures['questions']} question(s) with a "
                            "verdict: a plan needs at least two")
        k = rounds or max(1, round(figures["rounds_mean"]))
        var_k, var_now, n_now = (one_run_variance(figures, k),
                                 one_run_variance(figures, figures["rounds_mean"]),
                                 figures["questions"])
    else:
        paired = paired_difference(outcomes[0].all_counts(), outcomes[1].all_counts(),
                                   alpha=alpha)
        if paired["diff_se"] is None:
            raise PlanError(f"runs {run_ids[0]} and {run_ids[1]} share {paired['n']} question(s) "
                            "with a verdict: a plan needs at least two")
        k = rounds or max(1, round(max(paired["rounds_a"], paired["rounds_b"])))
        var_k, var_now, n_now = (paired_variance(paired, k), paired["variance_diff"],
                                 paired["n"])
    return {"questions": questions_needed(var_k, effect, power=power, alpha=alpha),
            "rounds": k, "effect": effect, "power": power, "alpha": alpha,
            "mde_now": detectable_effect(var_now, n_now, power=power, alpha=alpha),
            "questions_now": n_now, "from_runs": [int(i) for i in run_ids]}


def plan_words(plan: dict[str, Any]) -> str:
    """The plan in one sentence for the page and the CLI."""
    what = ("tell a shift of" if len(plan["from_runs"]) == 1 else "tell apart runs that differ by")
    now = plan["mde_now"]
    today = (f"the smallest detectable difference is {now * 100:.1f} points" if now < 1
             else "no difference on the 0-100 scale can be detected")
    return (f"To {what} {plan['effect'] * 100:.1f} points with {plan['power']:.0%} power "
            f"(two-sided, alpha {plan['alpha']:g}): {plan['questions']:,} questions at "
            f"{plan['rounds']} rounds. At today's {plan['questions_now']:,} questions {today}.")


def newest_done(engine: Engine, *, dataset_id: int, kind: str) -> int | None:
    """The id of the dataset's newest finished run of `kind` (None without one)."""
    done = [r for r in queries.list_runs(engine, kind=kind, status="done", limit=50)
            if r.dataset_id == dataset_id]
    return int(done[0].id) if done else None


def start_plan(engine: Engine, *, dataset_id: int, kind: str, questions: int, rounds: int,
               power: float = 0.8, alpha: float = 0.05,
               from_run: int | None = None) -> dict[str, Any] | None:
    """What a run about to start can detect: its minimum detectable effect at `questions` x
    `rounds`, from the spread of the dataset's newest finished run of the same kind (or
    of `from_run`); None without one, or with fewer than two questions answered there.

    An attack run's figure is the drop from clean to attacked, so its spread is that of
    the per-pair differences (`paired_variance` at `rounds`; `questions` are pairs);
    any other run's is its accuracy's (`one_run_variance`)."""
    source = from_run or newest_done(engine, dataset_id=dataset_id, kind=kind)
    if source is None or questions < 2:
        return None
    outcomes = load_outcomes(engine, source)
    pairs = (((outcomes.run.config or {}).get("spec") or {}).get("extra") or {}).get("pairs")
    if pairs:
        paired = paired_difference({p[0]: outcomes.counts(p[1]) for p in pairs},
                                   {p[0]: outcomes.counts(p[2]) for p in pairs}, alpha=alpha)
        if paired["diff_se"] is None:
            return None
        var = paired_variance(paired, rounds)
    else:
        figures = clustered_accuracy(list(outcomes.all_counts().values()), alpha=alpha)
        if figures["accuracy_se"] is None:
            return None
        var = one_run_variance(figures, rounds)
    mde = detectable_effect(var, questions, power=power, alpha=alpha)
    return {"mde": mde, "from_run": source, "questions": questions, "rounds": rounds,
            "power": power, "alpha": alpha, "figure": "drop" if pairs else "accuracy",
            "questions_for_5_points": questions_needed(var, 0.05, power=power, alpha=alpha)}


def start_words(plan: dict[str, Any] | None) -> str | None:
    """The start form's line: what this run can tell apart, and what 5 points would take."""
    if plan is None:
        return None
    mde, drop = plan["mde"], plan.get("figure") == "drop"
    can = ((f"a drop from clean to attacked of about {mde * 100:.0f} points" if drop
            else f"a change of about {mde * 100:.0f} points") if mde < 1
           else "no change on the 0-100 scale")
    what = "attacked questions" if drop else "questions"
    return (f"With {plan['questions']:,} {what} x {plan['rounds']} rounds this run can "
            f"detect {can} ({plan['power']:.0%} power, from the spread of run "
            f"#{plan['from_run']}); telling 5 points apart would take about "
            f"{plan['questions_for_5_points']:,} {what}.")


NO_RUN_YET = ("No finished {kind} run of this dataset yet: the detectable effect is shown "
              "after the first run.")


def start_line(engine: Engine, *, dataset_id: int | None, kind: str, questions: int,
               rounds: int) -> str:
    """The start form's one line, whatever the form holds: what the run can detect, or
    why that cannot be said yet. Always a sentence, so the form keeps one element there
    (a line that comes and goes moves the button below it while the page reruns)."""
    if dataset_id is None:
        return "Choose a dataset to see the smallest change this run can detect."
    if questions < 2:
        return "A run of fewer than two questions cannot tell any change apart."
    source = newest_done(engine, dataset_id=int(dataset_id), kind=kind)
    if source is None:
        return NO_RUN_YET.format(kind=kind)
    words = start_words(start_plan(engine, dataset_id=int(dataset_id), kind=kind,
                                   questions=questions, rounds=rounds, from_run=source))
    return words or (f"Run #{source}, the newest finished {kind} run of this dataset, has "
                     "fewer than two questions with a verdict: no detectable effect to show.")
