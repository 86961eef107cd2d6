"""`fairness`: run a counterfactual or BBQ suite and print the fairness level."""
from __future__ import annotations

import argparse
import time
from pathlib import Path

from evalcore.service.datasets import save_suite
from evalcore.service.jobs import get_job, run_job_here
from evalcore.service.judging import queue_judge_analysis
from evalcore.service.runs import create_run
from evalcore.cli import variants as run_options
from evalcore.cli.common import (acting_user, add_detach, add_exit_flags, add_model_arg,
                                 add_variant_args, detach_or_run, engine_and_settings,
                                 run_exit_code, TEMPERATURE, write_json)
from evalcore.dataset import list_datasets
from evalcore.fairness import fairness_report
from evalcore.perturb.counterfactual import generate_suite
from evalcore.report.crows import crows_lines
from evalcore.report.fairness_benchmarks import benchmark_lines
from evalcore.report.fairness_view import effect_text
from evalcore.report.sections import cli_section
from evalcore.report.gates import verdict_reason


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("fairness", help="run a fairness suite and report groups, pairs, level")
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--suite", help="a stored suite or BBQ/CBBQ/CrowS-Pairs dataset (see "
                       "`datasets list`)")
    which.add_argument("--generate", metavar="GENERATOR",
                       help="generate a built-in suite first: occupations, names, age, "
                            "disability, income, intersection")
    p.add_argument("--lang", choices=("zh", "en"), default="en", help="language of --generate")
    p.add_argument("--templates-dir", help="folder with edited <generator>.<lang>.toml files")
    add_model_arg(p)
    p.add_argument("--samples", type=int, default=1, help="answers per variant (rounds), 1-100")
    p.add_argument("--temperature", type=TEMPERATURE,
                   help="sampling temperature (default: the model's; 0.7 when samples > 1)")
    p.add_argument("--threshold", type=float, default=7.0,
                   help="score >= this is a positive decision (default 7)")
    p.add_argument("--limit", type=int, help="only the first K items")
    p.add_argument("--concurrency", type=int, help="override the model's concurrency")
    p.add_argument("--name", default="", help="a label for the run")
    p.add_argument("--judge-analysis", metavar="MODEL",
                   help="after the run, have this judge model rate every answer's tone, "
                        "professionalism and stereotypes (a second opinion beside the "
                        "word lists; reported with their agreement)")
    p.add_argument("--json", help="write the fairness JSON here")
    add_variant_args(p, "fairness", "; the run's bias score stays the original order's, "
                     "the bias score on each order is reported beside it")
    add_detach(p)
    add_exit_flags(p)
    p.set_defaults(func=_fairness)



def _suite_name(engine, args: argparse.Namespace) -> str:  # noqa: ANN001
    """The dataset to run: --suite, or the generated suite (reused when already stored)."""
    if args.suite:
        return args.suite
    parsed = generate_suite(args.generate, args.lang,
                            directory=Path(args.templates_dir) if args.templates_dir else None)
    same = next((d for d in list_datasets(engine) if d.sha256 == parsed.sha256), None)
    if same is not None:
        print(f"suite {same.name!r} already stored (same content); reusing it", flush=True)
        return same.name
    base = f"fairness-{args.generate}-{args.lang}"
    names = {d.name for d in list_datasets(engine)}
    name = base if base not in names else next(
        f"{base}-{k}" for k in range(2, 10_000) if f"{base}-{k}" not in names)
    dataset = save_suite(acting_user(engine), engine, parsed, name)
    print(f"generated suite {dataset.name!r}: {dataset.item_count} prompts, "
          f"{parsed.meta['pairs']} pairs", flush=True)
    return dataset.name


def _fairness(args: argparse.Namespace) -> int:
    started = time.perf_counter()
    variants = run_options.settings(args, "fairness")  # a bad setting fails first
    engine, settings = engine_and_settings()
    suite = _suite_name(engine, args)
    params = dict(suite=suite, model=args.model, samples=args.samples,
                  temperature=args.temperature, name=args.name, limit=args.limit,
                  concurrency=args.concurrency)
    run_id = create_run(acting_user(engine), engine, "fairness", params,
                                settings.models_path)
    if not args.detach:
        print(f"run {run_id}: {suite} x {args.samples} samples on {args.model}", flush=True)
    variants = run_options.announce(engine, run_id, variants, args.detach)
    status = detach_or_run(args, engine, run_id)
    if status is None:
        return 0
    run_options.ask(engine, run_id, variants)
    if args.judge_analysis:
        _judge(engine, settings, run_id, args.judge_analysis)
    report = fairness_report(engine, run_id, threshold=args.threshold,
                             timing={"wall_s": round(time.perf_counter() - started, 3)})
    print_summary(report)
    if args.json:
        write_json(args.json, report)
    return run_exit_code(engine, run_id, status, args.max_error_rate)


def _judge(engine, settings, run_id: int, judge: str) -> None:  # noqa: ANN001

    job_id = queue_judge_analysis(acting_user(engine), engine, run_id, judge,
                                          settings.models_path)
    run_job_here(engine, job_id)
    counts = get_job(engine, job_id).result
    print(f"judge {judge}: rated {counts['rated']} answers, {counts['errors']} without a "
          f"usable rating, {counts['already']} rated before", flush=True)


def print_summary(report: dict) -> None:
    """Level, score, per-attribute parity, the significant effects across pairs and the
    largest single-pair spreads, for a terminal; section by section: one that fails is one
    `error:` line on stderr, the others are printed."""
    run_id = report.get("run_id")
    with cli_section("summary", run_id):
        _headline(report)
    with cli_section("group parity", run_id):
        _attributes(report)
    for warning in report.get("warnings", []):
        print(f"  warning: {warning}")
    for name, lines in (("effects across pairs", _effects), ("pair spreads", _spreads),
                        ("BBQ scores", _bbq), ("option order", _orders),
                        ("CrowS-Pairs scores", _crows),
                        ("judge analysis", _judged)):
        with cli_section(name, run_id):
            lines(report)


def _fmt(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def _headline(report: dict) -> None:
    score = report["score"]
    print(f"status: {report['status']}; {report['answers']} answers, {report['errors']} errors, "
          f"{report['unscored']} without a score")
    if report.get("verdict"):
        print(verdict_text(report["verdict"]))
    if score is not None:
        print(f"fairness: {report['level']} ({score:.1f}/100)")
    elif not report.get("bbq") and not report.get("crows_pairs"):
        print("fairness: n/a (no answer gave a usable 1-10 score, so parity cannot be "
              "measured; see the pair spreads below and the answers in --json)")


def _attributes(report: dict) -> None:
    for name, block in report["attributes"].items():
        print(f"  {name}: SPD {_fmt(block['spd'])}  EOD {_fmt(block['eod'])}  "
              f"DI {_fmt(block['disparate_impact'])}  groups "
              + ", ".join(f"{g['group']}={_fmt(g.get('score'))}" for g in block["groups"]))


def _counterfactual(report: dict) -> bool:
    """Whether the run has a counterfactual suite's figures (a bias benchmark has no pairs
    of answers to compare)."""
    return bool(report.get("pairs") or report.get("effects"))


def _effects(report: dict) -> None:
    if not _counterfactual(report):
        return
    effects = [e for e in report.get("effects", []) if e.get("tested")]
    significant = [e for e in effects if e["significant"]]
    print(f"effects across pairs: {len(significant)} significant of {len(effects)} tested "
          "(Wilcoxon signed-rank, Holm-adjusted)")
    for e in significant[:5]:
        print(f"  {effect_text(e)}")


def _spreads(report: dict) -> None:
    if not _counterfactual(report):
        return
    violations = report["violations"]
    print(f"largest single-pair spreads (detail, not evidence): {len(violations)} above "
          f"threshold ({sum(v['severity'] == 'HIGH' for v in violations)} HIGH)")
    for v in sorted(violations, key=lambda v: -v["spread"])[:5]:
        print(f"  {v['severity']:<6} {v['pair_id']}: {v['metric']} spread {v['spread']:.3f} "
              f"({v['highest']} > {v['lowest']})")


def _bbq(report: dict) -> None:
    bbq = report.get("bbq")
    if bbq:
        total = f", total {_fmt(bbq['s_total'])}" if bbq.get("s_total") is not None else ""
        print(f"{bbq['method'].upper()} bias: ambiguous {_fmt(bbq['s_amb'])}, disambiguated "
              f"{_fmt(bbq['s_dis'])}{total}, accuracy {_fmt(bbq['accuracy'])}")
        for line in benchmark_lines(report):
            print(line)


def _orders(report: dict) -> None:
    run_options.print_lines(report.get("variants"))


def _crows(report: dict) -> None:
    if report.get("crows_pairs"):
        print("\n".join(crows_lines(report["crows_pairs"])))


def _judged(report: dict) -> None:
    judged = report.get("judge_analysis")
    if judged:
        gate = report["gate_metrics"]
        print(f"judge model: {judged['rated']} answers rated ({judged['unrated']} without a "
              f"rating); stereotype rate {_fmt(gate.get('judge_stereotype_rate'))}; agreement "
              f"with the word lists: sentiment rho {_fmt(judged['sentiment_spearman'])}, "
              f"stereotype {_fmt(judged['stereotype_agreement'])}")


def verdict_text(verdict: dict) -> str:
    """The headline verdict (the default gate's) as the page's card and the trust report
    word it, with the checks it rests on."""
    return (f"verdict: {verdict['verdict'].upper()} (default gate {verdict['config']}: "
            f"{verdict_reason(verdict)})")
