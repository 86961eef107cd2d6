"""`compare RUN RUN [RUN ...]`: 2 to 8 runs of one kind side by side on their shared
items, with intervals and a paired test for every pair; two stability runs also get the
per-question detail (`compare.compare_stability`)."""
from __future__ import annotations

import argparse
from typing import Any

from evalcore.cli.common import engine_and_settings, print_json
from evalcore.dataset.numbering import question_label
from evalcore.errors import RunError
from evalcore.kinds import find_kind, metric_specs
from evalcore.kinds._metric import TAIL
from evalcore.report.compare_runs import compare_runs, differing_questions
from evalcore.report.run_figures import interval_text
from evalcore.service.baselines import baseline_for_run


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("compare", help="compare 2 to 8 runs of one kind side by side")
    p.add_argument("runs", type=int, nargs="+", metavar="RUN",
                   help="run ids (2 to 8, same kind; the first is the baseline); one run "
                        "alone is compared with the stored baseline of its dataset and model")
    p.add_argument("--top", type=int, default=10, help="most changed questions to list (default 10)")
    p.add_argument("--errors-as-wrong", action="store_true",
                   help="count rounds without a verdict as wrong (default for stability "
                        "runs: leave them out, rates over answered rounds)")
    p.add_argument("--json", action="store_true", help="print the whole comparison as JSON")
    p.set_defaults(func=_compare)


def _compare(args: argparse.Namespace) -> int:
    engine, _ = engine_and_settings()
    if len(args.runs) == 1:
        base = baseline_for_run(engine, args.runs[0])
        if base is None:
            raise RunError(f"run {args.runs[0]} alone: its dataset and model have no stored "
                           "baseline; give 2 to 8 runs, or `python -m evalcore baseline set RUN`")
        args.runs = [base, *args.runs]
        if not args.json:
            print(f"baseline: run {base} (the stored baseline of its dataset and model)")
    result = compare_runs(engine, args.runs,
                          failure_policy="as_wrong" if args.errors_as_wrong else None)
    pair, kind = None, find_kind(result["kind"])
    if kind is not None and kind.compare_pair is not None and len(args.runs) == 2:
        pair = kind.compare_pair(engine, args.runs[0], args.runs[1], top=args.top)
        result[f"{kind.name}_pair"] = pair
    if args.json:
        print_json(result)
        return 0
    print_runs(result, args.top)
    if pair is not None:
        print(f"\n{result['kind']} detail (A = first run, B = second):")
        print_comparison(pair)
    return 0


def print_runs(result: dict[str, Any], top: int) -> None:
    """The comparison of 2-8 runs as text: alignment, figures with intervals, findings."""
    shown = [name for name, spec in metric_specs(result["kind"]).items()
             if spec.heads or name in TAIL]  # what the kind says heads a run, and usage
    align = result["alignment"]
    print(f"{result['kind']} runs aligned by {align['by']}: {align['shared']} shared items "
          f"of {align['union']}")
    for r in align["per_run"]:
        note = f", lacks {r['lacks']} the others have" if r["lacks"] else ""
        print(f"  run {r['run_id']}: {r['items']} items ({r['only_here']} not shared{note})")
    for fig, shared in zip(result["runs"], result["shared"]):
        run, metrics, intervals = fig["run"], fig["metrics"], fig["intervals"]
        print(f"run {run['id']} {run['model']} ({run['status']}, N={run['rounds']}): "
              f"accuracy on shared items {interval_text(shared['accuracy'], shared['interval'])}")
        for key in shown:
            value = metrics.get(key)
            if isinstance(value, int) and not isinstance(value, bool):
                print(f"    {key:<22} {value:,}")
            elif value is not None:
                print(f"    {key:<22} {interval_text(float(value), intervals.get(key))}")
    print(f"paired tests (Wilcoxon signed-rank on shared items' success rates, "
          f"alpha {result['alpha']}):")
    for t in result["tests"]:
        print(f"  {t['finding']}")
    print(f"best: run {result['best']}" if result["best"] is not None else
          "best: no run is significantly better than every other")
    differing = differing_questions(result)
    print(f"{len(differing)} shared items differ between runs"
          + (f"; first {min(top, len(differing))}:" if differing else ""))
    for q in differing[:max(top, 0)]:
        rates = "  ".join(f"{rid}:{'-' if rate is None else f'{rate:.2f}'}"
                          for rid, rate in q["rates"].items())
        print(f"  {question_label(q.get('item_idx'))} (item id {q['item_id']}): {rates}")


def _pct(value: Any) -> str:
    return "-" if value is None else f"{value:.1f}%"


def print_comparison(result: dict[str, Any]) -> None:
    """The comparison as plain text: summaries, distribution, pass^k, test, changes."""
    a, b = result["a"], result["b"]
    for letter, side in (("A", a), ("B", b)):
        print(f"{letter}: run {side['run_id']} {side['name']}  {side['model']} on "
              f"{side['dataset'] or '?'}, judge {side['judge']}, N={side['repetition_count']}, "
              f"{side['questions']} questions, {side['status']}")
    print(f"{'':<16}{'A':>10}{'B':>10}{'B - A':>10}")
    print(f"{'mean success':<16}{a['mean']:>10.3f}{b['mean']:>10.3f}{b['mean'] - a['mean']:>+10.3f}")
    print(f"{'std of rates':<16}{a['std']:>10.3f}{b['std']:>10.3f}{b['std'] - a['std']:>+10.3f}")
    for label, key in (("mG-Pass@N", "mg_pass_at_n"), ("sem. entropy", "semantic_entropy_mean"),
                       ("judge noise", "judge_noise"), ("circular acc.", "circular_accuracy"),
                       ("template spread", "template_spread")):
        if a.get(key) is not None or b.get(key) is not None:
            delta = result["delta"].get(key)
            print(f"{label:<16}{_num(a.get(key)):>10}{_num(b.get(key)):>10}"
                  f"{'' if delta is None else f'{delta:+.3f}':>10}")
    for block in ("classes", "risk"):
        for name in a[block]:
            print(f"{block[:5] + ' ' + name:<16}{a[block][name]:>10}{b[block].get(name, 0):>10}"
                  f"{b[block].get(name, 0) - a[block][name]:>+10}")
    print("questions right j times (% of each run's questions):")
    for row in result["distribution"]:
        print(f"  j={row['correct']:>3}  A {_pct(row['percent_a']):>7}  B {_pct(row['percent_b']):>7}")
    print("pass^k  A / B: " + ", ".join(
        f"k={r['k']} {_num(r['pass_hat_k_a'])}/{_num(r['pass_hat_k_b'])}" for r in result["pass_k"]))
    join, test = result["join"], result["test"]
    print(f"matched {join['matched']} questions by {join['by']} "
          f"({join['only_a']} only in A, {join['only_b']} only in B)")
    if test["p_value"] is None:
        print(f"paired test: none ({test['reason']})")
    else:
        print(f"Wilcoxon signed-rank (two-sided, unchanged questions dropped): "
              f"W={test['statistic']:g} p={test['p_value']:.4g} on {test['n_changed']} of "
              f"{test['n_pairs']} pairs; B better on {test['n_better_b']}, A on "
              f"{test['n_better_a']}; mean change {test['mean_delta']:+.3f}")
    if result["changed"]:
        print("most changed questions (question in A/B: rate A -> rate B):")
    for q in result["changed"]:
        text = " ".join(str(q["question"] or "").split())
        print(f"  {question_label(q['item_a']):>6}/{question_label(q['item_b']):<6} "
              f"{q['rate_a']:.2f} -> {q['rate_b']:.2f} "
              f"({q['delta']:+.2f})  {text[:70]}")


def _num(value: Any) -> str:
    return "-" if value is None else f"{value:.3f}"
