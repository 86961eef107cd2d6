"""`stability`: ask every question N times, judge each answer, print the distribution."""
from __future__ import annotations

import argparse
import time
from pathlib import Path

from evalcore.service.jobs import run_job_here
from evalcore.service.judging import (meaning_cost, meaning_cost_line, queue_meaning_judge,
                                      queue_rejudge, reliability_line)
from evalcore.service.runs import create_run
from evalcore.cli import common, variants as run_options
from evalcore.cli.common import (acting_user, add_detach, add_exit_flags, add_model_arg,
                                 add_variant_args, engine_and_settings, run_exit_code,
                                 TEMPERATURE, write_json)
from evalcore.metrics.stability import NO_VERDICT, POLICY_RULES
from evalcore.report.repeats import repeats_lines
from evalcore.report.sections import cli_section
from evalcore.report.stability import not_asked_line, stability_report, write_run_csv
from evalcore.report.stability_summary import report_figures
from evalcore.report.variants import variant_lines


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("stability", help="run a stability evaluation (N rounds per question)")
    p.add_argument("--dataset", required=True, help="dataset name (see `datasets list`)")
    add_model_arg(p)
    p.add_argument("--rounds", type=int, default=5, help="rounds per question, 1-100 (default 5)")
    p.add_argument("--judge", default="rules", help="'rules' (default) or a judge model name")
    p.add_argument("--schedule", choices=("sequential", "question", "round"), default="question",
                   help="sequential: rounds per question in order, C questions at once (the "
                        "method's scheme; idle slots when questions < C); question: "
                        "question-first order; round: round-first order (default question)")
    p.add_argument("--concurrency", type=int, help="override the model's concurrency")
    p.add_argument("--temperature", type=TEMPERATURE, help="override the model's temperature")
    p.add_argument("--budget", type=float, metavar="COST",
                   help="stop the run (cancelled, resumable) before its calls would cost more "
                        "than this (from the models' price_in / price_out)")
    p.add_argument("--limit", type=int, help="only the first K items")
    p.add_argument("--prompt", choices=("zero", "few"), default="zero", help="prompt style")
    p.add_argument("--template", help="a file with a custom prompt template")
    p.add_argument("--name", default="", help="a label for the run")
    p.add_argument("--csv", help="write the per-question CSV here")
    p.add_argument("--csv-lang", choices=("zh", "en"), default="zh", help="CSV header language")
    p.add_argument("--json", help="write the stability JSON here")
    p.add_argument("--errors-as-wrong", action="store_true",
                   help="count rounds without a verdict (model or judge error after all "
                        "retries) as wrong answers, the method's seed rule; by default they "
                        "are left out and each rate is over the answered rounds")
    meaning = p.add_mutually_exclusive_group()
    meaning.add_argument("--group-by-meaning", action="store_true",
                         help="group open answers by meaning offline (yes/no, negation, "
                              "number and swapped-word cues, then e5 cosine >= 0.90) as well "
                              "as by their text, for the answer groups and semantic entropy; "
                              "costs e5 time here, no model call")
    meaning.add_argument("--meaning-judge", metavar="MODEL",
                         help="group open answers by meaning by asking this judge model "
                              "\"same meaning?\" per pair of different answers (paid calls: "
                              "the cost is printed before it starts; verdicts are stored and "
                              "never asked twice)")
    p.add_argument("--rejudge", metavar="MODEL",
                   help="after the run, re-judge a sample of answers with this judge model "
                        "to measure the judge's own noise (flip rate, Cohen's kappa)")
    p.add_argument("--rejudge-sample", type=int, default=20, metavar="K",
                   help="answers to re-judge (default 20)")
    p.add_argument("--rejudge-passes", type=int, default=3, metavar="J",
                   help="judgements per sampled answer (default 3)")
    add_variant_args(p, "stability")
    add_detach(p)
    add_exit_flags(p)
    p.set_defaults(func=_stability)


def _stability(args: argparse.Namespace) -> int:
    started = time.perf_counter()
    variants = run_options.settings(args, "stability")  # a bad setting fails first
    engine, settings = engine_and_settings()
    template = Path(args.template).read_text(encoding="utf-8") if args.template else None
    params = dict(dataset=args.dataset, model=args.model, rounds=args.rounds,
                  judge=args.judge, schedule=args.schedule, prompt_style=args.prompt,
                  template=template, limit=args.limit, concurrency=args.concurrency,
                  temperature=args.temperature, name=args.name, budget=args.budget)
    run_id = create_run(acting_user(engine), engine, "stability", params,
                                settings.models_path)
    if not args.detach:
        print(f"run {run_id}: {args.dataset} x {args.rounds} rounds on {args.model}", flush=True)
    variants = run_options.announce(engine, run_id, variants, args.detach)  # calls said first
    status = common.detach_or_run(args, engine, run_id)
    if status is None:
        return 0
    run_options.ask(engine, run_id, variants)
    if args.rejudge:
        _rejudge(engine, settings, run_id, args)
    meaning: bool | str = args.group_by_meaning
    if args.meaning_judge:
        _meaning_judge(engine, settings, run_id, args.meaning_judge)
        meaning = f"judge:{args.meaning_judge}"
    policy = "as_wrong" if args.errors_as_wrong else "exclude"
    if args.json:  # every round's detail, for the file
        report = stability_report(engine, run_id, failure_policy=policy, meaning=meaning)
    else:  # the figures the run's later reads use, stored now that it ended
        report = report_figures(engine, run_id, failure_policy=policy, meaning=meaning)
    report["timing"]["wall_s"] = round(time.perf_counter() - started, 3)
    _print_summary(report, status)
    if args.json:
        write_json(args.json, report)
    if args.csv:
        write_run_csv(engine, run_id, args.csv, lang=args.csv_lang, failure_policy=policy)
    return run_exit_code(engine, run_id, status, args.max_error_rate)


def _rejudge(engine, settings, run_id: int, args: argparse.Namespace) -> None:  # noqa: ANN001
    job_id = queue_rejudge(acting_user(engine), engine, run_id, args.rejudge,
                                   settings.models_path, sample=args.rejudge_sample,
                                   passes=args.rejudge_passes)
    run_job_here(engine, job_id)


def _meaning_judge(engine, settings, run_id: int, judge: str) -> None:  # noqa: ANN001
    """Say what asking `judge` "same meaning?" costs, then ask it here (a job)."""
    print(meaning_cost_line(meaning_cost(engine, run_id, judge), judge), flush=True)
    job_id = queue_meaning_judge(acting_user(engine), engine, run_id, judge,
                                         settings.models_path)
    run_job_here(engine, job_id)


def _print_summary(report: dict, status: str) -> None:
    """The run's summary, section by section: one that fails is one `error:` line on
    stderr (`report.sections.cli_section`), the others are printed, the exit code stays."""
    run_id = report.get("run_id")
    for name, lines in (("summary", _headline), ("distribution", _distribution),
                        ("classes and risk", _classes), ("judge reliability", _reliability),
                        ("repeated answers", _repeats),
                        ("option order and templates", _variants), ("timing", _timing)):
        with cli_section(name, run_id):
            lines(report, status)
    for warning in report.get("warnings", []):
        print(f"warning: {warning}")


def _headline(report: dict, status: str) -> None:
    dist, summary, n = report["distribution"], report["summary"], report["repetition_count"]
    mean = "n/a" if summary["mean"] is None else f"{summary['mean']:.3f} (std {summary['std']:.3f})"
    print(f"status: {status}; {dist['total_questions']} questions x {n} rounds; "
          f"mean success {mean}")
    print(f"{NO_VERDICT}: {summary['errored_rounds']} in {summary['questions_with_errors']} "
          f"questions; they {POLICY_RULES[summary['failure_policy']]}")
    not_asked = not_asked_line(summary)
    if not_asked:
        print(not_asked)


def _distribution(report: dict, status: str) -> None:
    dist, n = report["distribution"], report["repetition_count"]
    print("correct count distribution:")
    for k in range(n, -1, -1):
        count = dist["distribution_counts"][str(k)]
        print(f"  {k:>3}/{n}: {count:>5}  ({dist['distribution_percent'][str(k)]:.1f}%)")
    if dist["incomplete"]:
        print(f"  incomplete: {dist['incomplete']:>5}  ({dist['incomplete_percent']:.1f}%)"
              " (rounds without a verdict)")


def _classes(report: dict, status: str) -> None:
    summary = report["summary"]
    print("classes: " + ", ".join(f"{k}={v}" for k, v in summary["classes"].items()))
    print("risk: " + ", ".join(f"{k}={v}" for k, v in summary["risk"].items()))


def _reliability(report: dict, status: str) -> None:
    rel = report.get("judge_reliability")
    if rel:
        print(f"judge reliability ({rel['judge']}): {rel['answers']} answers x "
              f"{rel['passes']} passes, {rel['failed']} judgements failed; "
              + reliability_line(rel))


def _repeats(report: dict, status: str) -> None:
    for line in repeats_lines(report):
        print(line)


def _variants(report: dict, status: str) -> None:
    for line in variant_lines(report["summary"]):
        print(line)


def _timing(report: dict, status: str) -> None:
    t = report["timing"]
    print(f"calls={t['calls']} errors={t['errors']} judge_errors={t['judge_errors']} "
          f"retries={t['retries']} wall={t.get('wall_s', 0):.2f}s")
