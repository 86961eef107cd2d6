"""`robustness`: ask clean and approved attacked questions N times, print the drop per level."""
from __future__ import annotations

import argparse

from evalcore.service.runs import create_run
from evalcore.cli import variants as run_options
from evalcore.cli.common import (TEMPERATURE, acting_user, add_detach, add_exit_flags,
                                 add_model_arg, add_variant_args, detach_or_run,
                                 engine_and_settings, run_exit_code, write_json)
from evalcore.dataset.numbering import question_label
from evalcore.report.robustness import robustness_report
from evalcore.report.sections import cli_section


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("robustness", help="run clean vs attacked questions and report the drop")
    p.add_argument("--attack-set", required=True, action="append", dest="attack_sets",
                   help="attack set id or name (repeat for several levels)")
    p.add_argument("--dataset", help="the clean dataset (checked against the sets' source)")
    add_model_arg(p)
    p.add_argument("--rounds", type=int, default=1, help="rounds per question, 1-100 (default 1)")
    p.add_argument("--judge", default="rules", help="'rules' (default) or a judge model name")
    p.add_argument("--concurrency", type=int, help="override the model's concurrency")
    p.add_argument("--temperature", type=TEMPERATURE, help="override the model's temperature")
    p.add_argument("--prompt", choices=("zero", "few"), default="zero", help="prompt style")
    p.add_argument("--name", default="", help="a label for the run")
    p.add_argument("--embeddings", action="store_true",
                   help="add the e5 cosine between clean and attacked answers (slower)")
    p.add_argument("--json", help="write the robustness JSON here")
    add_variant_args(p, "robustness", " (the run's clean items only: the attacked ones are "
                     "other questions)")
    add_detach(p)
    add_exit_flags(p)
    p.set_defaults(func=_robustness)


def _robustness(args: argparse.Namespace) -> int:
    variants = run_options.settings(args, "robustness")  # a bad setting fails first
    engine, settings = engine_and_settings()
    params = dict(attack_set_ids=args.attack_sets, dataset=args.dataset, model=args.model,
                  rounds=args.rounds, judge=args.judge, prompt_style=args.prompt,
                  concurrency=args.concurrency, temperature=args.temperature, name=args.name)
    run_id = create_run(acting_user(engine), engine, "robustness", params,
                                settings.models_path)
    if not args.detach:
        print(f"run {run_id}: robustness of {args.model}, {args.rounds} round(s), attack sets "
              f"{', '.join(args.attack_sets)}", flush=True)
    variants = run_options.announce(engine, run_id, variants, args.detach)
    status = detach_or_run(args, engine, run_id)
    if status is None:
        return 0
    run_options.ask(engine, run_id, variants)
    report = robustness_report(engine, run_id, embeddings=args.embeddings)
    print_summary(report, status)
    if args.json:
        write_json(args.json, report)
    return run_exit_code(engine, run_id, status, args.max_error_rate)


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}%"


def _p(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.4g}"


def print_summary(report: dict, status: str, shown: int = 10) -> None:
    """The drop per level and the questions that flipped right -> wrong, section by
    section: one that fails is one `error:` line on stderr, the others are printed."""
    run_id = report.get("run_id")
    with cli_section("summary", run_id):
        print(f"status: {status}; {report['clean_questions']} clean questions, "
              f"{report['pairs']} attacked, {report['rounds']} round(s); clean accuracy "
              f"{_pct(report['accuracy_clean_all'])}")
        overall = (report.get("intervals") or {}).get("words")
        if overall and len(report["levels"]) > 1:
            print(f"all levels: {overall}")
        nothing = report.get("nothing_to_attack") or {}
        if nothing.get("items"):
            print(f"nothing to attack in {nothing['items']} of {nothing['of']} items of the "
                  "attack sets (left out of the PDR)")
    for warning in report.get("warnings", []):
        print(f"warning: {warning}")
    for level, data in report["levels"].items():
        with cli_section(f"{level} level", run_id):
            _print_level(level, data)
    with cli_section("flipped questions", run_id):
        flipped = report["flips"]["right_to_wrong"]
        if flipped:
            print(f"right -> wrong ({len(flipped)}):")
        for row in flipped[:shown]:
            print(f"  [{row['level']}] {question_label(row['item_idx'])}: {row['original']}")
            print(f"      attacked: {row['attacked']}")
    with cli_section("option order and templates", run_id):
        run_options.print_lines(report.get("variants"))
    with cli_section("timing", run_id):
        t = report["timing"]
        print(f"calls={t['calls']} errors={t['errors']} retries={t['retries']}")


def _print_level(level: str, data: dict) -> None:
    counts = data["flips"]["counts"]
    paired = data["paired_test"]
    wilcoxon = f", Wilcoxon p={_p(paired['p_value'])}" if paired else ""
    pdr = _pct(data["pdr"]) if data["pdr"] is not None else f"n/a ({data['pdr_why_none']})"
    print(f"{level:>8}: {data['questions']} questions, accuracy {_pct(data['accuracy_clean'])}"
          f" -> {_pct(data['accuracy_attacked'])}, PDR {pdr}; flips right->wrong "
          f"{counts['right_to_wrong']}, wrong->right {counts['wrong_to_right']}; McNemar "
          f"p={_p(data['mcnemar']['p_value'])}{wilcoxon}; answer ROUGE-L "
          f"{_p(data['consistency']['rouge_l'])}")
    words = (data.get("intervals") or {}).get("words")
    if words:
        print(f"{'':>8}  {words}")
