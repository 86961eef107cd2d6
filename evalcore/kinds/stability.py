"""Stability: ask every question N times and see how often each is right.

Everything the app and the CLI need to know about a stability run, registered as one
`EvalKind`: the spec builder, the failure policy (rounds without a verdict are left out),
the headline figures (perfect and flaky shares, mG-Pass@N, the 0..N distribution), the
default gate, the exports, `runs show`, the two-run comparison, the CLI and the page.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Mapping, Optional

import evalcore.kinds as kinds
from evalcore.errors import EvalcoreError
from evalcore.kinds import EvalKind, Export, MetricSpec, need, register, report_json
from evalcore.metrics.repeats import run_g_pass
from evalcore.runner.plan import run_spec

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine

    from evalcore.runner.plan import RunSpec

NAME = "stability"


def build(engine: "Engine", params: Mapping[str, Any]) -> tuple["RunSpec", None]:
    """The run spec from the form / flags: the RunSpec fields themselves (dataset, model,
    rounds, judge, schedule, prompt_style, template, limit, ...), checked (`run_spec`);
    the dataset's items."""
    return run_spec({**params, "kind": NAME}), None


def report(engine: "Engine", run_id: int) -> dict[str, Any]:
    from evalcore.report.stability import stability_report

    return stability_report(engine, run_id)


def _csv(lang: str) -> Callable[["Engine", int], bytes]:
    def make(engine: "Engine", run_id: int) -> bytes:
        import io

        from evalcore.report.stability import write_run_csv

        buffer = io.StringIO(newline="")
        write_run_csv(engine, run_id, buffer, lang=lang)
        return buffer.getvalue().encode("utf-8")

    return make


def figures(engine: "Engine", out: Any, metrics: dict[str, Any], intervals: dict[str, Any]
            ) -> dict[str, Any]:
    """Perfect and flaky shares, errored rounds, mG-Pass@N; the distribution (questions
    right j of N times, j = 0..N): from the one per-question summary of the run's counts
    (`metrics.stability.summary_from_counts`) that the stability report shows too."""
    from evalcore.metrics.stability import summary_from_counts
    from evalcore.report.run_figures import wilson

    rounds = metrics["rounds"]
    tallies = out.tallies()
    summary = (summary_from_counts(tallies, rounds, failure_policy=out.failure_policy)
               if tallies else None)
    # questions with a rate: answered rounds under `exclude`, all N under `as_wrong`
    rated = [q for q in (summary.questions if summary else ()) if q.trials]
    n = len(rated)
    classes = summary.classes if summary else {}
    perfect = summary.distribution_counts[str(rounds)] if summary else 0  # right in all N
    flaky = n - classes.get("perfect", 0) - classes.get("failed", 0)  # right in some
    metrics.update(perfect_share=perfect / n if n else None,
                   flaky_share=flaky / n if n else None,
                   errored_rounds=summary.errored_rounds if summary else 0,
                   failure_policy=out.failure_policy)
    intervals.update(perfect_share=wilson(perfect, n), flaky_share=wilson(flaky, n))
    # mG-Pass@N: right in most of N rounds (questions with all N rounds answered)
    metrics["mg_pass_at_k"] = (run_g_pass([(q.trials, q.correct_count) for q in rated],
                                          [rounds])[1][str(rounds)]
                               if rounds >= 2 else None)
    bins = summary.distribution_counts if summary else {}
    return {"distribution": [int(bins.get(str(j), 0)) for j in range(rounds + 1)]}


def more_figures(engine: "Engine", run_id: int) -> dict[str, Any]:
    """Answer spread and judge noise: they need the stored answers."""
    from evalcore.report.stability_summary import repeats_metrics

    return repeats_metrics(engine, run_id)


def detail(engine: "Engine", run_id: int) -> tuple[Optional[dict[str, Any]], list[str]]:
    """The stability JSON of a run with answers (answer groups, entropy, G-Pass, judge
    noise included; each question's figures, not its rounds: `runs export` has those)
    and its repeated-answers lines; (None, []) before its first answer."""
    from evalcore.report.repeats import repeats_lines
    from evalcore.report.stability_summary import report_figures

    try:
        full = report_figures(engine, run_id)
    except EvalcoreError:
        return None, []
    return full, repeats_lines(full)


def compare_pair(engine: "Engine", run_a: int, run_b: int, **options: Any) -> dict[str, Any]:
    from evalcore.report.compare import compare_stability

    return compare_stability(engine, run_a, run_b, **options)


def cli(sub: Any) -> None:
    from evalcore.cli.stability import register as register_cli

    register_cli(sub)


def schedule(fields: Mapping[str, Any]) -> dict[str, Any]:
    """A schedule's run options: its dataset, model, rounds (and limit)."""
    return {"dataset": need(fields, "dataset", "--dataset NAME", NAME), "model": fields["model"],
            "rounds": int(fields.get("rounds") or 1),
            **({"limit": fields["limit"]} if fields.get("limit") else {})}


METRICS = (
    MetricSpec("mean_success_rate", heads=True, column=True, same_as="accuracy", paired=True),
    MetricSpec("mg_pass_at_k", heads=True, column=True, label="mG-Pass@N", gated=False),
    MetricSpec("perfect_share", heads=True, column=True),
    MetricSpec("flaky_share", "lower", heads=True, column=True),
    MetricSpec("semantic_entropy_mean", "lower", heads=True,
               label="answer spread (semantic entropy)", gated=False),
    MetricSpec("judge_noise", "lower", heads=True, gated=False),
    MetricSpec("errored_rounds", "lower", heads=True),
)
"""The mean success rate (the accuracy under the stability name), right in most of N
rounds, right in every round, right in some; the answers' spread and the judge's noise
(`more_figures`); rounds without a verdict."""


KIND = register(EvalKind(
    name=NAME, title="Stability", page="pages/stability.py", icon=":material/repeat:",
    order=10, report=report, build=build, cli=cli, schedule=kinds.Schedule(schedule),
    cli_help="run a stability evaluation (N rounds per question)",
    exports=(Export("Stability CSV (中文表头)", "stability_run{run}_zh.csv", "text/csv",
                    _csv("zh")),
             Export("Stability CSV (English headers)", "stability_run{run}_en.csv",
                    "text/csv", _csv("en")),
             Export("Stability JSON", "stability_run{run}.json", "application/json",
                    report_json(report))),
    counting=kinds.Counting("exclude", counts_unasked=True), needs_references=True,
    figures=figures, metrics=METRICS, precedence=30,
    gate=kinds.Gate("data/gate.stability.example.toml"), more_figures=more_figures,
    detail=detail, compare_pair=compare_pair, run_options=("option_order", "templates")))
