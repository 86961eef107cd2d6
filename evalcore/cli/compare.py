"""`compare RUN_A RUN_B`: two stability runs side by side, the paired test, what changed."""
from __future__ import annotations

import argparse
from typing import Any


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("compare", help="compare two stability runs side by side")
    p.add_argument("run_a", type=int, help="run id A (the baseline)")
    p.add_argument("run_b", type=int, help="run id B (compared against A)")
    p.add_argument("--top", type=int, default=10, help="most changed questions to list (default 10)")
    p.add_argument("--json", action="store_true", help="print the whole comparison as JSON")
    p.set_defaults(func=_compare)


def _compare(args: argparse.Namespace) -> int:
    from evalcore.cli.common import engine_and_settings, print_json
    from evalcore.report.compare import compare_stability

    engine, _ = engine_and_settings()
    result = compare_stability(engine, args.run_a, args.run_b, top=args.top)
    if args.json:
        print_json(result)
    else:
        print_comparison(result)
    return 0


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
        print("most changed questions (item A/B: rate A -> rate B):")
    for q in result["changed"]:
        text = " ".join(str(q["question"] or "").split())
        print(f"  {q['item_a']:>5}/{q['item_b']:<5} {q['rate_a']:.2f} -> {q['rate_b']:.2f} "
              f"({q['delta']:+.2f})  {text[:70]}")


def _num(value: Any) -> str:
    return "-" if value is None else f"{value:.3f}"
