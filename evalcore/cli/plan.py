"""`plan --run ID | --runs A B --effect E`: how many questions and rounds a decision needs."""
from __future__ import annotations

import argparse

from evalcore.cli.common import engine_and_settings, print_json
from evalcore.report.plan import plan_words, run_plan


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("plan", help="questions and rounds needed to detect a difference")
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--run", type=int, help="plan from one run: a shift from its accuracy")
    which.add_argument("--runs", type=int, nargs=2, metavar=("A", "B"),
                       help="plan from two runs: their paired difference")
    p.add_argument("--effect", type=float, required=True,
                   help="the difference in accuracy to detect, 0-1 (0.05 = 5 points)")
    p.add_argument("--power", type=float, default=0.8, help="chance to detect it (default 0.8)")
    p.add_argument("--alpha", type=float, default=0.05, help="two-sided level (default 0.05)")
    p.add_argument("--rounds", type=int, help="rounds per question K' (default: the runs')")
    p.add_argument("--json", action="store_true", help="print the plan as JSON")
    p.set_defaults(func=_plan)


def _plan(args: argparse.Namespace) -> int:
    engine, _ = engine_and_settings()
    plan = run_plan(engine, [args.run] if args.run is not None else args.runs,
                    effect=args.effect, power=args.power, alpha=args.alpha, rounds=args.rounds)
    if args.json:
        print_json(plan)
    else:
        print(plan_words(plan))
    return 0
